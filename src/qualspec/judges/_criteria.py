"""The criteria judge's prompt: one criterion, a 0-10 score and brief reasoning as JSON."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from qualspec.prompts import load_template, render_template
from qualspec.providers import Message

__all__ = [
    "ALL_CRITERIA_PROMPT_NAME",
    "DEFAULT_MAX_RESPONSE_CHARS",
    "JUDGE_PROMPT_NAME",
    "JUDGE_SCHEMA",
    "CandidateView",
    "all_criteria_schema",
    "build_all_criteria_messages",
    "build_judge_messages",
    "judge_prompt_text",
    "scores_schema",
    "truncate_text",
]

JUDGE_PROMPT_NAME = "judge_criteria"
ALL_CRITERIA_PROMPT_NAME = "judge_all_criteria"
DEFAULT_MAX_RESPONSE_CHARS = 4000
# The embedded judge has a 2048-token window: the prompt and context are capped as well.
_MAX_PROMPT_CHARS = 1200
_MAX_CONTEXT_CHARS = 600
_MAX_SYSTEM_CHARS = 600
_MAX_PREAMBLE_CHARS = 400
_MAX_INPUT_CHARS = 400

JUDGE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "score": {"type": "integer", "minimum": 0, "maximum": 10},
        "reasoning": {"type": "string"},
    },
    "required": ["score", "reasoning"],
    "additionalProperties": False,
}

_SECTION = re.compile(r"^\[(system|user)\]\s*$", re.MULTILINE)


def judge_prompt_text(name: str = JUDGE_PROMPT_NAME) -> str:
    """Return a judge template's text (the store versions it by content hash)."""
    return load_template(name)


@dataclass(frozen=True, slots=True)
class CandidateView:
    """What the candidate saw, shown to the judge as data apart from the answer.

    ``prompt`` is the user message as sent (the role's preamble first, when there is one);
    ``preamble`` repeats the persona on its own so a persona criterion can be judged;
    ``input_values`` is the dataset row rendered into the prompt; ``context`` is background
    for the judge only (the scenario's ``context:``), never shown to the candidate.

    Example:
        >>> CandidateView(prompt="Hi", system_prompt="You are a pirate.").system_prompt
        'You are a pirate.'
    """

    prompt: str
    system_prompt: str | None = None
    preamble: str | None = None
    input_values: Mapping[str, Any] | None = None
    context: str | None = None


def _block(title: str, text: str | None, limit: int, what: str) -> str:
    if text is None or not text.strip():
        return ""
    body = truncate_text(text.strip(), limit, what=what)
    return f"{title}:\n<<<\n{body}\n>>>\n\n"


def _setup_block(view: CandidateView) -> str:
    rows = ""
    if view.input_values:
        rows = "\n".join(f"{k}: {v}" for k, v in view.input_values.items() if k != "id")
    return "".join(
        (
            _block(
                "System prompt the model was given",
                view.system_prompt,
                _MAX_SYSTEM_CHARS,
                "system prompt",
            ),
            _block(
                "Persona of the user (its preamble opens the prompt)",
                view.preamble,
                _MAX_PREAMBLE_CHARS,
                "preamble",
            ),
            _block("Input data filled into the prompt", rows or None, _MAX_INPUT_CHARS, "input"),
            _block(
                "Background for judging (not shown to the model)",
                view.context,
                _MAX_CONTEXT_CHARS,
                "background",
            ),
        )
    )


def truncate_text(text: str, max_chars: int, *, what: str = "response") -> str:
    """Cut ``text`` to ``max_chars`` characters, marking the cut so the judge knows.

    Args:
        text: The text to shorten.
        max_chars: How many characters of ``text`` to keep (``<= 0`` keeps none).
        what: What the text is, named in the marker.

    Returns:
        ``text`` unchanged when short enough, else its head plus a marker line such as
        ``[... response truncated: 1200 more characters not shown]``.
    """
    if len(text) <= max_chars:
        return text
    keep = max(max_chars, 0)
    hidden = len(text) - keep
    return f"{text[:keep]}\n[... {what} truncated: {hidden} more characters not shown]"


def _sections(template: str, name: str) -> dict[str, str]:
    parts = _SECTION.split(template)
    # parts = [preamble, name1, body1, name2, body2, ...]
    sections = {parts[i]: parts[i + 1].strip() for i in range(1, len(parts) - 1, 2)}
    if set(sections) != {"system", "user"}:
        raise ValueError(
            f"prompt template {name!r} must have a [system] and a [user] section; "
            "reinstall qualspec if the file was edited"
        )
    return sections


def _render(
    name: str, view: CandidateView, response: str, max_response_chars: int, extra: dict[str, str]
) -> tuple[Message, Message]:
    values = {
        "response": truncate_text(response, max_response_chars, what="response"),
        "setup_block": _setup_block(view),
        **extra,
    }
    return _render_sections(name, view, values)


def _render_sections(
    name: str, view: CandidateView, values: dict[str, str]
) -> tuple[Message, Message]:
    """Template ``name`` rendered with the (capped) prompt of ``view`` and ``values``."""
    sections = _sections(judge_prompt_text(name), name)
    values = {"prompt": truncate_text(view.prompt, _MAX_PROMPT_CHARS, what="prompt"), **values}
    user = render_template(sections["user"], values)
    system = render_template(sections["system"], values)
    return Message(role="system", content=system), Message(role="user", content=user)


def build_judge_messages(
    *,
    criterion: str,
    prompt: str | CandidateView,
    response: str,
    context: str | None = None,
    max_response_chars: int = DEFAULT_MAX_RESPONSE_CHARS,
    retry_note: str | None = None,
) -> tuple[Message, ...]:
    """Build the judge's chat messages for scoring one response on one criterion.

    Args:
        criterion: The single criterion to score (e.g. ``"Cites its sources"``).
        prompt: What the candidate saw: a :class:`CandidateView` (system prompt, persona,
            input row, background), or just the prompt text (capped at 1,200 characters).
        response: The candidate's answer, cut to ``max_response_chars`` with a marker.
        context: Background for the judge only (capped at 600 characters), or ``None``;
            used when ``prompt`` is plain text.
        max_response_chars: How much of the response the judge sees.
        retry_note: Appended to the user message when the previous judge answer could not
            be parsed, e.g. ``"Your previous answer could not be read: ..."``.

    Returns:
        ``(system message, user message)``.

    Example:
        >>> msgs = build_judge_messages(criterion="Is polite", prompt="Hi", response="Hello!")
        >>> [m.role for m in msgs]
        ['system', 'user']
    """
    view = prompt if isinstance(prompt, CandidateView) else CandidateView(prompt, context=context)
    extra = {"criterion": " ".join(criterion.split())}
    system, user = _render(JUDGE_PROMPT_NAME, view, response, max_response_chars, extra)
    if retry_note:
        user = Message(role="user", content=f"{user.content}\n\n{retry_note.strip()}")
    return system, user


def scores_schema(keys: Sequence[str]) -> dict[str, Any]:
    """The JSON Schema of a verdict's ``scores``: an integer 0-10 under each of ``keys``."""
    score = {"type": "integer", "minimum": 0, "maximum": 10}
    return {
        "type": "object",
        "properties": {k: score for k in keys},
        "required": list(keys),
        "additionalProperties": False,
    }


def all_criteria_schema(n: int) -> dict[str, Any]:
    """The JSON Schema of an ``all_criteria`` verdict over ``n`` numbered criteria."""
    return {
        "type": "object",
        "properties": {
            "scores": scores_schema([str(i) for i in range(1, n + 1)]),
            "reasoning": {"type": "string"},
        },
        "required": ["scores", "reasoning"],
        "additionalProperties": False,
    }


def build_all_criteria_messages(
    *,
    criteria: Sequence[str],
    view: CandidateView,
    response: str,
    max_response_chars: int = DEFAULT_MAX_RESPONSE_CHARS,
    retry_note: str | None = None,
) -> tuple[Message, ...]:
    """The judge's messages for scoring one response on every criterion in one call.

    The criteria are numbered from 1; the verdict is ``{"scores": {"1": n, ...},
    "reasoning": "..."}`` (see :func:`all_criteria_schema`).

    Example:
        >>> view = CandidateView(prompt="Capital of France?")
        >>> _, user = build_all_criteria_messages(
        ...     criteria=["Correct", "Brief"], view=view, response="Paris.")
        >>> "2. Brief" in user.content
        True
    """
    numbered = "\n".join(f"{i}. {' '.join(c.split())}" for i, c in enumerate(criteria, 1))
    keys = ", ".join(f'"{i}": <0-10>' for i in range(1, len(criteria) + 1))
    extra = {"criteria_list": numbered, "score_keys": keys}
    system, user = _render(ALL_CRITERIA_PROMPT_NAME, view, response, max_response_chars, extra)
    if retry_note:
        user = Message(role="user", content=f"{user.content}\n\n{retry_note.strip()}")
    return system, user
