"""Turn a judge model's output into a score, or into *unscored* with a reason.

The chain: the provider's structured object, then the whole text as JSON, then JSON
objects found in the text (repaired), then ``SCORE: n``-style patterns. A score is a
finite number from 0 to 10; anything else (out of range, not a number, two different
scores) is unscored. Nothing here clamps, rounds or defaults a score.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from qualspec.judges._repair import FAILED, find_json_blocks, loads_lenient, loads_strict

__all__ = ["MAX_REASONING_CHARS", "ParsedJudgment", "parse_judgment"]

MAX_REASONING_CHARS = 1000
_SCORE_KEYS = ("score", "rating")
_REASON_KEYS = ("reasoning", "explanation", "reason", "rationale", "justification")
_MAX_DEPTH = 3

_NUM = r"[-+]?(?:\d+(?:\.\d+)?|\.\d+)"
_NONFINITE = r"[-+]?(?:nan|inf(?:inity)?)"
_DEN = r"(?:\s*\(?\s*(?:/|out\s+of)\s*(?P<den>\d+(?:\.\d+)?))?"
_KEYWORD = re.compile(
    r"\b(?:score|rating|grade)\b[\"'*_]*\s*(?:\([^()\n]{0,20}\))?\s*(?:[:=]|\bis\b|\bof\b)?"
    rf"[\s\"'*_]*(?P<num>{_NUM}|{_NONFINITE})(?!\w){_DEN}",
    re.IGNORECASE,
)
_KEYWORD_WORD = re.compile(
    r"\b(?:score|rating|grade)\b[\"'*_]*\s*[:=][\s\"'*_]*(?P<word>[A-Za-z][\w/-]{0,30})",
    re.IGNORECASE,
)
_FRACTION = re.compile(
    rf"(?<![\w./])(?P<num>{_NUM})\s*(?:/|out\s+of)\s*(?P<den>10|100)(?![\w/]|\.\d)",
    re.IGNORECASE,
)
_BARE = re.compile(rf"(?P<num>{_NUM}|{_NONFINITE}){_DEN}", re.IGNORECASE)
_FENCE = re.compile(r"^```[A-Za-z]*\s*\n?(?P<body>.*?)\n?\s*```$", re.DOTALL)
_LABEL = re.compile(
    r"^(?:reasoning|explanation|reason|rationale|justification)\s*[:=-]\s*", re.IGNORECASE
)
_PARTIAL_REASONING = re.compile(
    r"[\"'](?:reasoning|explanation|reason|rationale|justification)[\"']\s*:\s*[\"'](?P<text>.+)",
    re.IGNORECASE | re.DOTALL,
)
_EDGE_NOISE = " \t\r\n*_#`,;:.-=\"'{}[]()>"
_TRAILING_NOISE = " \t\r\n*_#`,;:-=\"'{}[]("


@dataclass(frozen=True, slots=True)
class ParsedJudgment:
    """What could be read from one judge answer.

    Exactly one of ``score`` and ``unscored_reason`` is set. ``method`` names the stage
    that found the score: ``"structured"``, ``"json"``, ``"repaired_json"`` or
    ``"pattern"``; it is ``"none"`` when unscored.
    """

    score: float | None
    reasoning: str | None
    unscored_reason: str | None
    method: str

    @property
    def scored(self) -> bool:
        """Whether a score was read."""
        return self.score is not None


@dataclass(frozen=True, slots=True)
class _Candidate:
    value: float | None
    reason: str | None = None


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _in_range(number: float, shown: str) -> _Candidate:
    shown = shown if len(shown) <= 24 else shown[:21] + "..."
    if not math.isfinite(number):
        return _Candidate(None, f"score is not a finite number: {shown}")
    if number < 0 or number > 10:
        return _Candidate(None, f"score {shown} is outside 0-10")
    return _Candidate(float(number) + 0.0)  # + 0.0 turns -0.0 into 0.0


def _from_match(num: str, den: str | None) -> _Candidate:
    shown = f"{num}/{den}" if den else num
    try:
        number = float(num)
    except ValueError:  # pragma: no cover - the patterns only let numbers through
        return _Candidate(None, f"score is not a number: {_short(num)}")
    if den is not None:
        denominator = float(den)
        if denominator == 100:
            number /= 10
        elif denominator != 10:
            return _Candidate(None, f"score {shown[:24]} is not on a 0-10 scale")
    return _in_range(number, shown)


def _from_value(value: object) -> _Candidate:
    """Validate a score taken from a JSON or structured object."""
    if isinstance(value, bool):
        return _Candidate(None, f"score is a boolean, not a number: {value}")
    if value is None:
        return _Candidate(None, "score is null")
    if isinstance(value, int):
        if abs(value) > 10**6:
            return _Candidate(None, f"score {_short(value)} is outside 0-10")
        return _in_range(float(value), str(value))
    if isinstance(value, float):
        return _in_range(value, repr(value))
    if isinstance(value, str):
        match = _BARE.fullmatch(value.strip().strip("*_ ").rstrip("."))
        if match is not None:
            return _from_match(match.group("num"), match.group("den"))
        return _Candidate(None, f"score is not a number: {_short(value)}")
    return _Candidate(None, f"score is not a number: {_short(value)}")


def _decide(candidates: Sequence[_Candidate]) -> _Candidate | None:
    """One score from several readings: all must agree; ``None`` when there are none."""
    if not candidates:
        return None
    values = sorted({c.value for c in candidates if c.value is not None})
    invalid = [c for c in candidates if c.value is None]
    if len(values) == 1 and not invalid:
        return _Candidate(values[0])
    if values:  # several different values, or a valid one beside an invalid one
        shown = ", ".join(_fmt(v) for v in values)
        extra = f"; also {invalid[0].reason}" if invalid else ""
        return _Candidate(None, f"ambiguous: different scores in one answer ({shown}){extra}")
    return invalid[0]


def _fmt(value: float) -> str:
    return str(int(value)) if value.is_integer() else str(value)


def _find_key(obj: Mapping[Any, Any], keys: Sequence[str]) -> list[Any]:
    lowered = {str(k).strip().lower(): v for k, v in obj.items()}
    return [lowered[k] for k in keys if k in lowered]


def _walk(obj: object, depth: int = 0) -> list[Mapping[Any, Any]]:
    """The mappings in ``obj`` (itself, then nested ones), up to a small depth."""
    found: list[Mapping[Any, Any]] = []
    if depth > _MAX_DEPTH:
        return found
    if isinstance(obj, Mapping):
        found.append(obj)
        children: Sequence[Any] = list(obj.values())
    elif isinstance(obj, list):
        children = obj
    else:
        return found
    for child in children[:50]:
        found.extend(_walk(child, depth + 1))
    return found


def _clip(text: str) -> str | None:
    text = text.strip()
    if not text:
        return None
    if len(text) > MAX_REASONING_CHARS:
        return text[: MAX_REASONING_CHARS - 3].rstrip() + "..."
    return text


def _read_object(obj: object) -> tuple[list[_Candidate], str | None]:
    """Score readings and the first reasoning found in a parsed JSON value."""
    if isinstance(obj, bool | int | float):
        return [_from_value(obj)], None
    candidates: list[_Candidate] = []
    reasoning: str | None = None
    for mapping in _walk(obj):
        # Only the first score key of each mapping counts ({"score": 7, "rating": 7}).
        scores = _find_key(mapping, _SCORE_KEYS)
        if scores:
            candidates.append(_from_value(scores[0]))
        if reasoning is None:
            texts = [r for r in _find_key(mapping, _REASON_KEYS) if isinstance(r, str)]
            reasoning = _clip(texts[0]) if texts else None
    return candidates, reasoning


def _result(candidate: _Candidate, reasoning: str | None, method: str) -> ParsedJudgment:
    if candidate.value is None:
        reason = candidate.reason or "no score found"
        return ParsedJudgment(None, reasoning, reason, "none")
    return ParsedJudgment(candidate.value, reasoning, None, method)


def _from_object(obj: object, method: str) -> ParsedJudgment | None:
    candidates, reasoning = _read_object(obj)
    decided = _decide(candidates)
    return None if decided is None else _result(decided, reasoning, method)


def _pattern_candidates(text: str) -> tuple[list[_Candidate], list[tuple[int, int]]]:
    """Readings from ``SCORE: n``-style patterns, most explicit tier first."""
    matches = list(_KEYWORD.finditer(text))
    if not matches:
        matches = list(_FRACTION.finditer(text))
    if not matches:
        body = text.strip().strip("\"'*_` ").rstrip(".")
        bare = _BARE.fullmatch(body)
        if bare is not None:
            return [_from_match(bare.group("num"), bare.group("den"))], [(0, len(text))]
        return [], []
    candidates = [_from_match(m.group("num"), m.group("den")) for m in matches]
    return candidates, [m.span() for m in matches]


def _without(text: str, spans: Sequence[tuple[int, int]]) -> str:
    parts: list[str] = []
    pos = 0
    for start, end in sorted(spans):
        parts.append(text[pos:start])
        pos = max(pos, end)
    parts.append(text[pos:])
    return " ".join(p.strip() for p in parts if p.strip())


def _from_blocks(text: str) -> ParsedJudgment | None:
    spans = find_json_blocks(text)
    candidates: list[_Candidate] = []
    reasoning: str | None = None
    used: list[tuple[int, int]] = []
    for start, end in spans:
        value = loads_lenient(text[start:end])
        if value is FAILED:
            continue
        found, why = _read_object(value)
        if found:
            candidates.extend(found)
            used.append((start, end))
            reasoning = reasoning or why
    if not candidates:
        return None
    # A different score stated outside the JSON makes the answer ambiguous.
    rest = _without(text, used)
    if rest:
        candidates.extend(_pattern_candidates(rest)[0])
    decided = _decide(candidates)
    if decided is None:  # not reached: candidates is not empty
        return None
    return _result(decided, reasoning, "repaired_json")


def _from_patterns(text: str) -> ParsedJudgment:
    candidates, spans = _pattern_candidates(text)
    decided = _decide(candidates)
    if decided is None:
        word = _KEYWORD_WORD.search(text)
        reason = (
            f"score is not a number: {_short(word.group('word'))}"
            if word is not None
            else "no score found in the judge's answer"
        )
        return ParsedJudgment(None, None, reason, "none")
    return _result(decided, _pattern_reasoning(text, spans), "pattern")


def _tidy(line: str) -> str:
    line = _LABEL.sub("", line.strip().lstrip(_EDGE_NOISE))
    return line.lstrip(_EDGE_NOISE).rstrip(_TRAILING_NOISE)


def _pattern_reasoning(text: str, spans: Sequence[tuple[int, int]]) -> str | None:
    """The text around a pattern-read score: the other lines, or the score's own line."""
    partial = _PARTIAL_REASONING.search(text)  # a JSON answer cut off mid-way
    if partial is not None:
        return _clip(partial.group("text").rstrip().rstrip("\"'}").rstrip())
    starts: list[int] = []
    pos = 0
    lines = text.splitlines(keepends=True)
    for line in lines:
        starts.append(pos)
        pos += len(line)
    hit = {
        i for i, start in enumerate(starts) for a, _ in spans if start <= a < start + len(lines[i])
    }
    others = [_tidy(line) for i, line in enumerate(lines) if i not in hit]
    kept = [line for line in others if line]
    if kept:
        return _clip("\n".join(kept))
    rest = _tidy(_without(text, spans))
    if len(rest.split()) < 3:
        return None
    return _clip(" ".join(_tidy(line) for line in lines if _tidy(line)))


def _unfence(text: str) -> str:
    match = _FENCE.match(text)
    return match.group("body").strip() if match else text


def parse_judgment(text: str, structured: object | None = None) -> ParsedJudgment:
    """Read a 0-10 score and reasoning from a judge's answer, never inventing one.

    Args:
        text: The judge model's raw answer.
        structured: The provider's parsed structured output (a mapping such as
            ``{"score": 7, "reasoning": "..."}``, or JSON text), or ``None``. When it holds
            a score it wins over ``text``.

    Returns:
        A :class:`ParsedJudgment`: a score in 0..10 with the stage that found it, or
        ``score=None`` with an ``unscored_reason`` (empty output, no score, a score that
        is not a number or out of range, or two different scores).

    Example:
        >>> parse_judgment("Clear and correct. SCORE: 8").score
        8.0
        >>> parse_judgment('{"score": "high"}').unscored_reason
        "score is not a number: 'high'"
    """
    if structured is not None:
        obj = loads_strict(structured) if isinstance(structured, str) else structured
        if obj is not FAILED and isinstance(obj, Mapping | list):
            found = _from_object(obj, "structured")
            if found is not None:
                return found
    if not isinstance(text, str):  # defensive: a provider returned something odd
        text = "" if text is None else str(text)
    stripped = text.strip()
    if not stripped:
        return ParsedJudgment(None, None, "empty judge output", "none")
    whole = loads_strict(_unfence(stripped))
    if whole is not FAILED and not isinstance(whole, str) and whole is not None:
        found = _from_object(whole, "json")
        if found is not None:
            return found
    found = _from_blocks(stripped)
    if found is not None:
        return found
    return _from_patterns(stripped)
