"""The comparative judge's prompt and verdict: a group's answers under neutral labels.

The judge is shown the question once and each answer under a label (``A``, ``B``, ...)
and answers ``{"scores": {"A": n, ...}, "winner": "A" | "tie", "reasoning": "..."}``.
:func:`read_comparison` reads that verdict as strictly as a single score: every label
must have a whole-number score from 0 to 10, no other label may appear, and the winner
must be a label with the highest score (or ``tie`` when several share it). Anything else
is unscored with a reason, never guessed.
"""

from __future__ import annotations

import json
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from qualspec.judges._criteria import (
    CandidateView,
    _render_sections,
    _setup_block,
    scores_schema,
    truncate_text,
)
from qualspec.judges._criteria_judge import verdict_object
from qualspec.judges._parsing import MAX_REASONING_CHARS, parse_judgment
from qualspec.providers import Message

__all__ = [
    "COMPARISON_PROMPT_NAME",
    "DEFAULT_COMPARE_CHARS",
    "ParsedComparison",
    "build_comparison_messages",
    "comparison_labels",
    "comparison_schema",
    "read_comparison",
]

COMPARISON_PROMPT_NAME = "judge_comparison"
DEFAULT_COMPARE_CHARS = 1500  # of each answer: several answers share the judge's window
TIE = "tie"
_ANSWER_PREFIXES = ("response ", "answer ")


def comparison_labels(n: int) -> list[str]:
    """Neutral labels for ``n`` answers: ``A`` ... ``Z``, then ``A2`` ... ``Z2``, ...

    Example:
        >>> comparison_labels(3)
        ['A', 'B', 'C']
    """
    letters = string.ascii_uppercase
    return [letters[i % 26] + (str(i // 26 + 1) if i >= 26 else "") for i in range(n)]


def comparison_schema(labels: Sequence[str]) -> dict[str, Any]:
    """The JSON Schema of a comparison verdict over ``labels``."""
    return {
        "type": "object",
        "properties": {
            "scores": scores_schema(labels),
            "winner": {"type": "string", "enum": [*labels, TIE]},
            "reasoning": {"type": "string"},
        },
        "required": ["scores", "winner", "reasoning"],
        "additionalProperties": False,
    }


def build_comparison_messages(
    *,
    view: CandidateView,
    answers: Sequence[tuple[str, str]],
    criteria: Sequence[str],
    max_response_chars: int = DEFAULT_COMPARE_CHARS,
    retry_note: str | None = None,
) -> tuple[Message, ...]:
    """The judge's messages comparing ``answers`` (``(label, text)``, in the order shown).

    ``view`` holds only what every answer of the group shares (the question, and the
    persona or system prompt when they are the same for all): nothing that tells the
    answers apart is shown, so no candidate or role name reaches the judge.

    Example:
        >>> _, user = build_comparison_messages(
        ...     view=CandidateView(prompt="Capital of France?"),
        ...     answers=[("A", "Paris."), ("B", "Lyon.")], criteria=["Correct"])
        >>> "Response B:" in user.content and '"winner": "<A, B or tie>"' in user.content
        True
    """
    labels = [label for label, _ in answers]
    blocks = "".join(
        f"Response {label}:\n<<<\n{truncate_text(text, max_response_chars)}\n>>>\n\n"
        for label, text in answers
    )
    numbered = "\n".join(f"{i}. {' '.join(c.split())}" for i, c in enumerate(criteria, 1))
    extra = {
        "setup_block": _setup_block(view),
        "responses_block": blocks,
        "criteria_list": numbered,
        "score_keys": ", ".join(f'"{label}": <0-10>' for label in labels),
        "winner_options": f"{', '.join(labels)} or {TIE}",
    }
    system, user = _render_sections(COMPARISON_PROMPT_NAME, view, extra)
    if retry_note:
        user = Message(role="user", content=f"{user.content}\n\n{retry_note.strip()}")
    return system, user


@dataclass(frozen=True, slots=True)
class ParsedComparison:
    """What could be read from one comparison verdict.

    Either ``scores`` (label -> 0-10) and ``winner`` (a label or ``"tie"``) are set, or
    ``unscored_reason`` says why nothing could be read.
    """

    scores: dict[str, float] | None
    winner: str | None
    reasoning: str | None
    unscored_reason: str | None


def _unscored(reason: str, reasoning: str | None = None) -> ParsedComparison:
    return ParsedComparison(None, None, reasoning, reason)


def _winner(value: object, labels: Sequence[str]) -> str | None:
    if not isinstance(value, str):
        return None
    text = value.strip().strip(".").strip()
    lowered = text.lower()
    if lowered == TIE:
        return TIE
    for prefix in _ANSWER_PREFIXES:
        if lowered.startswith(prefix):
            text = text[len(prefix) :].strip()
    return text if text in labels else None


def read_comparison(text: str, structured: object, labels: Sequence[str]) -> ParsedComparison:
    """Each label's score and the winner from a comparison verdict (see the module doc).

    Example:
        >>> r = read_comparison('{"scores": {"A": 8, "B": 5}, "winner": "A", "reasoning": "x"}',
        ...                     None, ["A", "B"])
        >>> r.scores, r.winner
        ({'A': 8.0, 'B': 5.0}, 'A')
        >>> read_comparison('{"scores": {"A": 8}, "winner": "A"}', None, ["A", "B"]).unscored_reason
        'no score for label B'
    """
    obj = verdict_object(text, structured)
    if obj is None:
        return _unscored("no JSON object with a scores key in the judge's answer")
    why = obj.get("reasoning")
    reasoning = why.strip()[:MAX_REASONING_CHARS] if isinstance(why, str) and why.strip() else None
    raw_scores = obj.get("scores")
    if not isinstance(raw_scores, Mapping):
        return _unscored("scores is not an object of label -> score", reasoning)
    unknown = [str(k) for k in raw_scores if k not in labels]
    if unknown:
        return _unscored(f"unknown label {', '.join(unknown)[:60]}", reasoning)
    missing = [label for label in labels if label not in raw_scores]
    if missing:
        return _unscored(f"no score for label {', '.join(missing)}", reasoning)
    scores: dict[str, float] = {}
    for label in labels:
        value = raw_scores[label]
        parsed = parse_judgment(json.dumps({"score": value}), {"score": value})
        if parsed.score is None:
            return _unscored(f"label {label}: {parsed.unscored_reason}", reasoning)
        scores[label] = parsed.score
    winner = _winner(obj.get("winner"), labels)
    if winner is None:
        shown = repr(obj.get("winner"))[:40]
        return _unscored(f"winner {shown} is not one of {', '.join(labels)} or tie", reasoning)
    best = max(scores.values())
    top = [label for label in labels if scores[label] == best]
    if winner == TIE and len(top) < 2:
        return _unscored(f"winner is tie but {top[0]} alone has the highest score", reasoning)
    if winner != TIE and scores[winner] < best:
        return _unscored(
            f"winner {winner} does not have the highest score ({', '.join(top)} has {best:g})",
            reasoning,
        )
    return ParsedComparison(scores, winner, reasoning, None)
