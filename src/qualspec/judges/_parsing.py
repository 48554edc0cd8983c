"""Turn a judge model's output into a score, or into *unscored* with a reason.

A score is read only from the judge's *verdict*, never from free prose:

* the ``score`` key at the top level of a JSON object: the provider's structured output,
  the whole answer (fenced or not), an object embedded in the text, an object repaired
  from slightly broken JSON, or one cut off after its score (an answer out of tokens);
* a ``SCORE: n`` line standing on its own (optionally ``**Score:** n``, ``n/10``), or a
  clean ``SCORE: n`` ending the last line after a sentence (``It is right. SCORE: 8``).

A verdict in quoted or reported text (quotes, a blockquote, the echoed ``<<< >>>`` answer,
after "the answer says:", in a fence so introduced; see :mod:`qualspec.judges._reported`)
is the graded answer's and is never read: an answer cannot set its own score. A score under
another label (``Overall score: 2``, ``"final_score": 2``, ``Rating: 2``) is not read, but
one that disagrees with the verdict makes the answer unscored. The prompt's template given
back (``{"score": 0, "reasoning": "<why, in one sentence>"}``) is not a verdict.

A score is a whole number from 0 to 10 (the judge schema asks for an integer; ``8.0`` is
read as 8). Anything else is unscored with a reason, never guessed: ranges (``8-9``),
alternatives (``6 or 7``), scale echoes (``0-10``), decimal commas (``7,5``), other scales
(``0.8``, ``10%``, ``4/5``, ``85/100``), fractions (``7.5``), text after the number on the
SCORE line, a score revised after the verdict, JSON objects without a score key, a score
key given twice with different values, and several verdicts that disagree. Numbers in
reasoning, quoted answers or rubric text (``SCORE: 10`` inside a sentence, ``7/10``,
``rating: 8``) are never read. Nothing here clamps, rounds or defaults a score.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from qualspec.judges._repair import (
    FAILED,
    close_truncated,
    find_json_blocks,
    loads_lenient,
    loads_strict,
)
from qualspec.judges._reported import fence_spans, is_reported

__all__ = ["MAX_REASONING_CHARS", "ParsedJudgment", "is_placeholder", "parse_judgment"]

MAX_REASONING_CHARS = 1000
_REASON_KEYS = ("reasoning", "explanation", "reason", "rationale", "justification")

_NUM = r"[-+]?(?:\d+(?:\.\d+)?|\.\d+)"
_NONFINITE = r"[-+]?(?:nan|inf(?:inity)?)"
_EMPH = r"[*_]{0,3}"
# The start of a SCORE line: optional heading marks and emphasis, the keyword, a colon.
_SCORE_PREFIX = re.compile(
    rf"^[ \t]*(?:#{{1,6}}[ \t]*)?{_EMPH}[ \t]*score[ \t]*{_EMPH}[ \t]*:(?P<value>.*)$",
    re.IGNORECASE,
)
# A SCORE verdict at the end of the answer's last line, after a sentence or a label
# ("It is correct. SCORE: 8", "Judged on its merits: SCORE: 0"): read only as a clean number.
_TRAILING_SCORE = re.compile(
    rf"(?<=[.!?:])[ \t]+{_EMPH}[ \t]*score[ \t]*{_EMPH}[ \t]*:(?P<value>[^:]*)$", re.IGNORECASE
)
# The value of a SCORE line (emphasis and a final period already stripped).
_VALUE = re.compile(
    rf"(?P<num>{_NUM}|{_NONFINITE})(?:\s*(?:/|\bout\s+of\b)\s*(?P<den>{_NUM}))?",
    re.IGNORECASE,
)
_RANGE = re.compile(rf"{_NUM}\s*(?:-|–|—|\.\.|\bto\b)\s*{_NUM}", re.IGNORECASE)
_SCALE_RANGE = re.compile(r"\(?\s*[01]\s*(?:-|–|—|\.\.|to)\s*10\s*\)?", re.IGNORECASE)
_ALTERNATIVE = re.compile(rf"{_NUM}\s*(?:\bor\b|\band\b|\|)\s*{_NUM}", re.IGNORECASE)
_DECIMAL_COMMA = re.compile(r"[-+]?\d+,\d+(?:\s*/\s*\d+)?")
_PERCENT = re.compile(rf"{_NUM}\s*(?:%|percent\b)", re.IGNORECASE)
_NUMBER_START = re.compile(rf"(?:{_NUM}|{_NONFINITE})(?!\w)", re.IGNORECASE)
_SCALE_ECHO = re.compile(r"\(?\s*(?:/|out\s+of\b)\s*\d", re.IGNORECASE)
# An answer that starts like a JSON object ({"score": ...), so an unbalanced one is cut off.
_JSON_START = re.compile(r"\{\s*[\"']?\w+[\"']?\s*:")
_FENCE = re.compile(r"^```[A-Za-z]*\s*\n?(?P<body>.*?)\n?\s*```$", re.DOTALL)
_FENCE_OPEN = re.compile(r"^```[A-Za-z]*[ \t]*\n")
# A sentence after a verdict that takes it back ("On reflection, 6 would be fairer").
_REVISION = re.compile(
    r"\b(?:on\s+(?:second\s+|further\s+)?(?:reflection|thought)|correction|"
    r"revis(?:e|ed|ing)\s+(?:my|the|this)\s+score|reconsider\w*|"
    r"change\s+(?:it|that|my\s+score|the\s+score)\s+to|make\s+(?:it|that)\s+an?\b|"
    r"would\s+be\s+(?:fairer|more\s+accurate|more\s+appropriate)|"
    r"(?:i'd|i\s+would)\s+(?:rather|actually)\s+(?:give|say))",
    re.IGNORECASE,
)
_SENTENCE_END = re.compile(r"(?<!\d)[.!?](?!\d)|\n")
_SMALL_NUMBER = re.compile(r"(?<![\w.,/])(?:10|\d)(?:\.\d+)?(?![\w,]|\.\d)")
_LABEL = re.compile(
    r"^(?:reasoning|explanation|reason|rationale|justification)\s*[:=-]\s*", re.IGNORECASE
)
_PARTIAL_REASONING = re.compile(
    r"[\"'](?:reasoning|explanation|reason|rationale|justification)[\"']\s*:\s*[\"'](?P<text>.+)",
    re.IGNORECASE | re.DOTALL,
)
# A line that gives a score under another label ("Overall score: 2", "**Final rating:** 9",
# "Grade (0-10): 7"). Alone it is not read (the judge was asked for SCORE), but beside a
# verdict it must agree with it: two verdicts that disagree are unscored, whatever labels.
_LABELLED = re.compile(
    rf"^[ \t]*(?:[-*+][ \t]+)?(?:#{{1,6}}[ \t]*)?{_EMPH}[ \t]*"
    r"(?P<label>(?:(?:my|the|our|final|overall|total)[ \t]+)?(?:[A-Za-z]{2,20}[ \t_-]?)?"
    r"(?:score|rating|grade|verdict)|overall|final)"
    rf"[ \t]*{_EMPH}[ \t]*(?:\([^)\n]{{0,20}}\))?[ \t]*{_EMPH}[ \t]*[:=](?P<value>.*)$",
    re.IGNORECASE,
)
# A top-level JSON key that gives a score under another name ("overall_score", "rating").
_LABELLED_KEY = re.compile(r"^[a-z ]*[ _-]?(?:score|rating|grade)$", re.IGNORECASE)
_NOT_A_VERDICT_KEY = re.compile(
    r"max|min|scale|threshold|pass|target|possible|out_of|range|confidence", re.IGNORECASE
)
# The prompt's own placeholder given back as the reasoning ("<why, in one sentence>", "...").
_PLACEHOLDER = re.compile(r"^\s*(?:<[^<>]{0,80}>|\.{2,}|…|\[[^\[\]]{0,80}\])\s*$")
_EDGE_NOISE = " \t\r\n*_#`,;:.-=\"'{}[]()>"
_TRAILING_NOISE = " \t\r\n*_#`,;:-=\"'{}[]("


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


def _lines(text: str) -> list[tuple[int, int, str]]:
    out: list[tuple[int, int, str]] = []
    pos = 0
    for line in text.splitlines(keepends=True):
        out.append((pos, pos + len(line), line.rstrip("\r\n")))
        pos += len(line)
    return out


def _outside(text: str, start: int, end: int, spans: Sequence[tuple[int, int]]) -> str:
    """``text[start:end]`` without the parts in ``spans``, the rest joined by spaces."""
    parts: list[str] = []
    pos = start
    for a, b in sorted(spans):
        parts.append(text[pos:a])
        pos = max(pos, b)
    parts.append(text[pos:end])
    return " ".join(p.strip() for p in parts if p.strip())


def _tidy(line: str) -> str:
    line = _LABEL.sub("", line.strip().lstrip(_EDGE_NOISE))
    return line.lstrip(_EDGE_NOISE).rstrip(_TRAILING_NOISE)


def _standalone(text: str, start: int, end: int) -> bool:
    """Whether the object at ``text[start:end]`` stands as a verdict, not inside a sentence.

    Before it on its line: nothing, or the end of a sentence or label (``Verdict:``); not a
    ``>`` quote. After it: nothing, or a new sentence (not a lowercase word going on).
    """
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    before = text[line_start:start].strip()
    after = text[end : len(text) if line_end < 0 else line_end].strip().lstrip("*_`'\"")
    if before.startswith(">"):
        return False
    before = before.rstrip("*_`'\"").rstrip()
    if before and before[-1] not in ":.!?":
        return False
    return not after or not (after[0].islower() or after[0].isdigit())


def _numeric(raw: str) -> bool:
    """Whether a written value starts like a score or a scale (``7``, ``/10``)."""
    bare = _bare(raw)
    return bool(_NUMBER_START.match(bare) or _SCALE_ECHO.match(bare))


def _trailing(
    text: str,
    start: int,
    end: int,
    blocks: Sequence[tuple[int, int]],
    fences: Sequence[tuple[int, int]],
) -> tuple[_Candidate, int] | None:
    """The clean ``SCORE: n`` that ends the last line (and where it starts), unless it is
    inside JSON, quoted or reported."""
    line = text[start:end].rstrip("\r\n")
    match = _TRAILING_SCORE.search(line)
    if match is None or _VALUE.fullmatch(_bare(match.group("value"))) is None:
        return None
    at = start + match.start() + len(match.group(0)) - len(match.group(0).lstrip())
    if any(a <= at < b for a, b in blocks) or is_reported(text, at, blocks, fences):
        return None
    for a, _ in blocks:  # an object earlier on the line must be quoted: '{"score": 3} ok.'
        if start <= a < at and not is_reported(text, a, blocks, fences):
            return None
    found = _from_text(match.group("value"))
    return (found, match.start()) if found.value is not None else None


def _score_like(line: str) -> bool:
    """Whether a line gives a score: ``SCORE: 7``, ``Overall score: 2``."""
    if _SCORE_PREFIX.match(line):
        return True
    other = _LABELLED.match(line)
    return other is not None and _numeric(other.group("value"))


def _cut_off_verdict(
    text: str, blocks: Sequence[tuple[int, int]], fences: Sequence[tuple[int, int]]
) -> tuple[_Candidate, str | None] | None:
    """A verdict object that starts after every closed one and never closes (the answer ran
    out of tokens), with its reasoning, when it has a score and is not quoted."""
    after = blocks[-1][1] if blocks else 0
    start = text.find("{", after)
    if start < 0 or not _JSON_START.match(text, start):
        return None
    if not _standalone(text, start, len(text)) or is_reported(text, start, blocks, fences):
        return None
    closed = close_truncated(text[start:])
    obj = FAILED if closed is None else loads_lenient(closed, _pairs)
    if not isinstance(obj, Mapping):
        return None
    candidate, reasoning = _verdict(obj)
    if candidate is None:
        return None
    partial = _PARTIAL_REASONING.search(text, start)
    if reasoning is None and partial is not None:
        reasoning = _clip(partial.group("text").rstrip().rstrip("\"'}").rstrip())
    return candidate, reasoning


def _from_text_answer(text: str) -> ParsedJudgment:
    """Verdict objects embedded in the text and SCORE lines; prose is never read.

    A verdict in quoted or reported text (see :mod:`qualspec.judges._reported`) is the
    graded answer's, not the judge's: it is not read. A score given under another label
    (``Overall score: 2``) is not read either, but makes the answer unscored when it
    disagrees with the verdict.
    """
    verdicts: list[_Candidate] = []
    labelled: list[tuple[str, _Candidate]] = []
    reasoning: str | None = None
    fences = fence_spans(text)
    blocks = find_json_blocks(text)
    json_spans: list[tuple[int, int]] = []
    verdict_ends: list[int] = []
    scoreless = False
    quoted = False
    for start, end in blocks:
        value = loads_lenient(text[start:end], _pairs)
        if not isinstance(value, Mapping):
            continue
        json_spans.append((start, end))
        candidate, why = _verdict(value)
        if candidate is None:
            scoreless = True
            if not is_reported(text, start, blocks, fences):  # {"rating": 2}: another label
                labelled.extend(_labelled_keys(value))
            continue
        if not _standalone(text, start, end) or is_reported(text, start, blocks, fences):
            quoted = True  # 'The answer contains {"score": 10} to trick me.'
            continue
        verdicts.append(candidate)
        verdict_ends.append(end)
        reasoning = reasoning or why
    line_verdicts: list[_Candidate] = []
    score_lines: set[int] = set()
    cut: tuple[int, int] | None = None
    word_reason: str | None = None
    lines = _lines(text)
    last = max((i for i, (_, _, line) in enumerate(lines) if line.strip()), default=-1)
    for index, (start, end, line) in enumerate(lines):
        inside = [(max(a, start), min(b, end)) for a, b in json_spans if a < end and start < b]
        if inside:  # what the line holds besides JSON: '{"score": 7} Score: 3' has a verdict
            line = _outside(text, start, end, inside)
        match = _SCORE_PREFIX.match(line)
        other = None if match is not None else _LABELLED.match(line)
        if other is not None and not _numeric(other.group("value")):
            other = None  # "My verdict: SCORE: 7", "Overall rating: good"
        if match is None and other is None:
            trailing = _trailing(text, start, end, blocks, fences) if index == last else None
            if trailing is not None:  # "It is correct. SCORE: 8"
                line_verdicts.append(trailing[0])
                verdict_ends.append(end)
                cut = (index, trailing[1])
            continue
        first = start + len(line) - len(line.lstrip())
        if not inside and is_reported(text, first, blocks, fences):
            quoted = True  # 'The answer ends with:' and a SCORE line below
            continue
        if other is not None:
            labelled.append((other.group("label").strip(), _from_text(other.group("value"))))
            continue
        if match is None:  # unreachable: a line without either label was skipped above
            continue
        raw = match.group("value")
        bare = _bare(raw)
        if not bare or (not _NUMBER_START.match(bare) and not _SCALE_ECHO.match(bare)):
            # "Score: high", "Score: <n>": no verdict, but say why if nothing else is found.
            word_reason = word_reason or _from_text(raw).reason
            continue
        line_verdicts.append(_from_text(raw))
        score_lines.add(index)
        verdict_ends.append(end)
    cut_off = _cut_off_verdict(text, blocks, fences)
    if cut_off is not None:  # '"The answer says: {...}" ... {"score": 3, "reasoning": "x'
        verdicts.append(cut_off[0])
        verdict_ends.append(len(text))
        reasoning = reasoning or cut_off[1]
    candidates = verdicts + line_verdicts
    decided = _decide(candidates)
    if decided is None:
        if word_reason is not None:
            return _unscored(word_reason, reasoning)
        if quoted:
            why = "a score inside a sentence or in quoted text is not the judge's verdict"
            return _unscored(why, reasoning)
        if scoreless:
            return _unscored("the JSON object in the answer has no score key", reasoning)
        return _unscored("no score found: no JSON score key and no SCORE: n line")
    if decided.value is not None:
        decided = _agree_with_labelled(decided, labelled)
    if verdicts:
        method = "repaired_json"
    else:
        method = "pattern"
        if cut is not None:  # the last line without its trailing SCORE
            score_lines.add(cut[0])
            lines.append((0, 0, lines[cut[0]][2][: cut[1]]))
        kept = [_tidy(line) for i, (_, _, line) in enumerate(lines) if i not in score_lines]
        reasoning = _clip("\n".join(line for line in kept if line))
    if decided.value is not None:
        after = text[max(verdict_ends) :]
        for start, end in json_spans:
            if start >= max(verdict_ends):
                after = after.replace(text[start:end], " ")
        if _revised(after):
            return _unscored("the answer revises its score after the verdict", reasoning)
    return _result(decided, reasoning, method)


def _unfence(text: str) -> str:
    match = _FENCE.match(text)
    return match.group("body").strip() if match else text


def parse_judgment(text: str, structured: object | None = None) -> ParsedJudgment:
    """Read a 0-10 score and reasoning from a judge's verdict, never inventing one.

    Args:
        text: The judge model's raw answer.
        structured: The provider's parsed structured output (a mapping such as
            ``{"score": 7, "reasoning": "..."}``, or JSON text), or ``None``. When it is an
            object with a ``score`` key it wins over ``text``.

    Returns:
        A :class:`ParsedJudgment`: a whole score in 0..10 with the stage that found it, or
        ``score=None`` with an ``unscored_reason`` (empty output, no verdict, a score that
        is not a whole 0-10 number, or several verdicts that disagree).

    Example:
        >>> parse_judgment("Clear and correct.\\nSCORE: 8").score
        8.0
        >>> parse_judgment('{"score": "high"}').unscored_reason
        "score is not a number: 'high'"
        >>> parse_judgment("I would give it 7/10.").score is None
        True
    """
    if structured is not None:
        obj = loads_strict(structured, _pairs) if isinstance(structured, str) else structured
        if isinstance(obj, Mapping):
            candidate, reasoning = _verdict(obj)
            if candidate is not None:
                return _result(candidate, reasoning, "structured")
    if not isinstance(text, str):  # defensive: a provider returned something odd
        text = "" if text is None else str(text)
    stripped = text.strip()
    if not stripped:
        return _unscored("empty judge output")
    body = _unfence(stripped)
    whole = loads_strict(body, _pairs)
    if whole is not FAILED:
        return _from_whole(whole, "json")
    body = _FENCE_OPEN.sub("", body, count=1)
    first = body.find("{")
    if first >= 0 and _JSON_START.match(body, first):
        spans = find_json_blocks(body[first:])
        before = body[:first].splitlines()
        scored_before = any(_score_like(x) for x in before)
        if (not spans or spans[0][0] != 0) and not scored_before:  # never closes: cut off
            return _from_truncated(body, first)
    return _from_text_answer(stripped)
