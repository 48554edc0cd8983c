"""A verdict's score as a candidate: checked on the 0-10 scale, agreed between verdicts.

The pieces :mod:`qualspec.judges._parsing` reads a judge's answer with: a JSON or written
score becomes a candidate (a score, or a reason it is not one), several candidates become
one score only when they agree.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from qualspec.judges._repair import FAILED, close_truncated, loads_lenient
from qualspec.judges._verdict_patterns import (
    _ALTERNATIVE,
    _DECIMAL_COMMA,
    _LABELLED_KEY,
    _NOT_A_VERDICT_KEY,
    _NUMBER_START,
    _PARTIAL_REASONING,
    _PERCENT,
    _PLACEHOLDER,
    _RANGE,
    _REASON_KEYS,
    _REVISION,
    _SCALE_ECHO,
    _SCALE_RANGE,
    _SENTENCE_END,
    _SMALL_NUMBER,
    _VALUE,
    MAX_REASONING_CHARS,
)

__all__ = ["ParsedJudgment", "is_placeholder"]


@dataclass(frozen=True, slots=True)
class ParsedJudgment:
    """What could be read from one judge answer.

    Exactly one of ``score`` and ``unscored_reason`` is set. ``method`` names the stage
    that found the score: ``"structured"``, ``"json"``, ``"repaired_json"`` or
    ``"pattern"`` (a ``SCORE: n`` line); it is ``"none"`` when unscored.
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
    scale: bool = False  # the value names a scale ("0-10", "/10"), not a score


@dataclass(frozen=True, slots=True)
class _Conflict:
    """The values of a JSON key given more than once with different values."""

    values: tuple[Any, ...]


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``object_pairs_hook``: a key given twice with different values becomes a conflict."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key not in out:
            out[key] = value
            continue
        old = out[key]
        seen = old.values if isinstance(old, _Conflict) else (old,)
        if not any(type(v) is type(value) and v == value for v in seen):
            out[key] = _Conflict((*seen, value))
    return out


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _shown(text: str) -> str:
    return text if len(text) <= 24 else text[:21] + "..."


def _check(number: float, shown: str) -> _Candidate:
    """A number as a 0-10 score: finite, in range, whole."""
    shown = _shown(shown)
    if not math.isfinite(number):
        return _Candidate(None, f"score is not a finite number: {shown}")
    if 0 < number < 1:
        return _Candidate(None, f"score {shown} looks like a 0-1 scale")
    if number < 0 or number > 10:
        return _Candidate(None, f"score {shown} is outside 0-10")
    if not number.is_integer():
        return _Candidate(None, f"score {shown} is not a whole number from 0 to 10")
    if number == 1 and "." in shown:  # 1.0: the top of a 0-1 scale, or 1 of 10?
        return _Candidate(None, f"score {shown} looks like a 0-1 scale")
    return _Candidate(float(number) + 0.0)  # + 0.0 turns -0.0 into 0.0


def _from_number(num: str, den: str | None) -> _Candidate:
    shown = f"{num}/{den}" if den else num
    if den is not None and float(den) != 10:
        return _Candidate(None, f"score {_shown(shown)} is not on a 0-10 scale")
    if len(num.lstrip("+-").split(".")[0]) > 6:  # 123456789: no need to build a float
        return _Candidate(None, f"score {_shown(shown)} is outside 0-10")
    return _check(float(num), shown)


def _bare(raw: str) -> str:
    """A written score without its emphasis and final period: ``**7**.`` -> ``7``."""
    text = raw.strip().strip("*_").strip()
    if text.endswith(".") and not text.endswith(".."):
        text = text[:-1].rstrip().rstrip("*_").rstrip()
    return text


def _from_text(raw: str) -> _Candidate:
    """A score written as text: the value of a SCORE line, or a JSON string value."""
    text = _bare(raw)
    shown = _short(text)
    value = _VALUE.fullmatch(text)
    if value is not None:
        return _from_number(value.group("num"), value.group("den"))
    if not text:
        return _Candidate(None, "the SCORE line has no number")
    if _DECIMAL_COMMA.match(text):
        return _Candidate(None, f"score {shown} has a decimal comma; not read as a number")
    if _RANGE.match(text):
        scale = _SCALE_RANGE.fullmatch(text) is not None
        return _Candidate(None, f"score {shown} is a range or a scale, not one score", scale)
    if _ALTERNATIVE.match(text):
        return _Candidate(None, f"score {shown} gives alternatives, not one score")
    if _PERCENT.match(text):
        return _Candidate(None, f"score {shown} is a percentage, not a 0-10 score")
    if _SCALE_ECHO.match(text):
        return _Candidate(None, f"score {shown} names a scale but no score", True)
    if _NUMBER_START.match(text):
        return _Candidate(None, f"score {shown} has more than a number on its line")
    return _Candidate(None, f"score is not a number: {shown}")


def _from_value(value: object) -> _Candidate:
    """Validate the value of a JSON or structured ``score`` key."""
    if isinstance(value, _Conflict):
        shown = ", ".join(_short(v) for v in value.values[:4])
        return _Candidate(None, f"ambiguous: the score key is given twice ({shown})"[:110])
    if isinstance(value, bool):
        return _Candidate(None, f"score is a boolean, not a number: {value}")
    if value is None:
        return _Candidate(None, "score is null")
    if isinstance(value, int):
        if abs(value) > 10**6:
            return _Candidate(None, f"score {_short(value)} is outside 0-10")
        return _check(float(value), str(value))
    if isinstance(value, float):
        return _check(value, repr(value))
    if isinstance(value, str):
        return _from_text(value)
    return _Candidate(None, f"score is not a number: {_short(value)}")


def _decide(candidates: Sequence[_Candidate]) -> _Candidate | None:
    """One score from several verdicts: all must agree; ``None`` when there are none."""
    if not candidates:
        return None
    values = sorted({c.value for c in candidates if c.value is not None})
    invalid = [c for c in candidates if c.value is None]
    if len(values) == 1 and not invalid:
        return _Candidate(values[0])
    if values:  # several different values, or a valid one beside an invalid one
        shown = ", ".join(_fmt(v) for v in values)
        extra = f"; also {invalid[0].reason}" if invalid else ""
        return _Candidate(None, f"ambiguous: several verdicts in one answer ({shown}){extra}")
    return invalid[0]


def _fmt(value: float) -> str:
    return str(int(value)) if value.is_integer() else str(value)


def _clip(text: str) -> str | None:
    text = text.strip()
    if not text:
        return None
    if len(text) > MAX_REASONING_CHARS:
        return text[: MAX_REASONING_CHARS - 3].rstrip() + "..."
    return text


def _verdict(obj: Mapping[Any, Any]) -> tuple[_Candidate | None, str | None]:
    """The score (``None`` without a ``score`` key) and reasoning of a verdict object."""
    scores: list[Any] = []
    reasons: dict[str, Any] = {}
    for key, value in obj.items():
        name = str(key).strip().lower()
        if name == "score":
            scores.append(value)
        elif name in _REASON_KEYS and name not in reasons:
            reasons[name] = value
    others = _labelled_keys(obj)
    texts = [reasons[k] for k in _REASON_KEYS if isinstance(reasons.get(k), str)]
    reasoning = _clip(texts[0]) if texts else None
    if not scores:
        return None, reasoning
    if len(scores) > 1:  # "score" and "Score" in one object
        found = _from_value(_pairs([("score", v) for v in scores])["score"])
    else:
        found = _from_value(scores[0])
    if found.value is not None:
        found = _agree_with_labelled(found, others)
    if found.value is not None and texts and is_placeholder(texts[0]):
        return _Candidate(None, _ECHOED.format(_short(texts[0]))), None
    return found, reasoning


def is_placeholder(text: str) -> bool:
    """Whether a reasoning is only a template placeholder (``<why, in one sentence>``).

    Example:
        >>> is_placeholder("<why, briefly>"), is_placeholder("It is correct.")
        (True, False)
    """
    return _PLACEHOLDER.match(text) is not None


def _labelled_keys(obj: Mapping[Any, Any]) -> list[tuple[str, _Candidate]]:
    """The scores an object gives under other keys (``overall_score``, ``rating``)."""
    out: list[tuple[str, _Candidate]] = []
    for key, value in obj.items():
        name = str(key).strip().lower()
        if name == "score" or not _LABELLED_KEY.match(name) or _NOT_A_VERDICT_KEY.search(name):
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float, str)):
            continue
        if isinstance(value, str) and not _numeric(value):  # "rating": "good"
            continue
        out.append((str(key), _from_value(value)))
    return out


_ECHOED = "the judge gave back the prompt's template (reasoning {}), not a verdict"


def _agree_with_labelled(
    found: _Candidate, labelled: Sequence[tuple[str, _Candidate]]
) -> _Candidate:
    """``found``, or unscored when a score given under another label disagrees with it.

    A labelled value that is a scale (``0-10``, ``/10``) gives no score and is ignored;
    any other value that is not ``found``'s (another number, a range, another scale) is a
    second verdict that disagrees.
    """
    for label, other in labelled:
        if other.value == found.value:
            continue
        if other.value is None and other.scale:
            continue
        value = found.value if found.value is not None else math.nan
        shown = _fmt(other.value) if other.value is not None else other.reason or "?"
        return _Candidate(
            None,
            f"ambiguous: two verdicts that disagree ({_fmt(value)}, and {_shown(label)}: "
            f"{_shown(shown)})",
        )
    return found


def _result(candidate: _Candidate, reasoning: str | None, method: str) -> ParsedJudgment:
    if candidate.value is None:
        reason = candidate.reason or "no score found"
        return ParsedJudgment(None, reasoning, reason, "none")
    return ParsedJudgment(candidate.value, reasoning, None, method)


def _unscored(reason: str, reasoning: str | None = None) -> ParsedJudgment:
    return ParsedJudgment(None, reasoning, reason, "none")


def _revised(text: str) -> bool:
    """Whether a sentence after a verdict takes the score back ("on reflection, 6 ...")."""
    return any(
        _REVISION.search(sentence) and _SMALL_NUMBER.search(sentence)
        for sentence in _SENTENCE_END.split(text)
    )


def _from_whole(obj: object, method: str) -> ParsedJudgment:
    """The answer is one JSON value: it is the verdict or there is none."""
    if not isinstance(obj, Mapping):
        return _unscored("the JSON answer is not an object with a score key")
    candidate, reasoning = _verdict(obj)
    if candidate is None:
        return _unscored("the JSON object has no score key", reasoning)
    return _result(candidate, reasoning, method)


def _from_truncated(text: str, start: int) -> ParsedJudgment:
    """An answer whose JSON object (from ``start``) was cut off: its finished members."""
    closed = close_truncated(text[start:])
    obj = FAILED if closed is None else loads_lenient(closed, _pairs)
    candidate, reasoning = _verdict(obj) if isinstance(obj, Mapping) else (None, None)
    if reasoning is None:
        partial = _PARTIAL_REASONING.search(text)
        if partial is not None:
            reasoning = _clip(partial.group("text").rstrip().rstrip("\"'}").rstrip())
    if candidate is None:
        return _unscored("the JSON answer is cut off before a finished score", reasoning)
    return _result(candidate, reasoning, "repaired_json")


def _numeric(raw: str) -> bool:
    """Whether a written value starts like a score or a scale (``7``, ``/10``)."""
    bare = _bare(raw)
    return bool(_NUMBER_START.match(bare) or _SCALE_ECHO.match(bare))
