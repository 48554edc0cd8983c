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

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from qualspec.judges._repair import (
    FAILED,
    close_truncated,
    find_json_blocks,
    loads_lenient,
    loads_strict,
)
from qualspec.judges._reported import fence_spans, is_reported
from qualspec.judges._verdict_patterns import (
    _EDGE_NOISE,
    _FENCE,
    _FENCE_OPEN,
    _JSON_START,
    _LABEL,
    _LABELLED,
    _NUMBER_START,
    _PARTIAL_REASONING,
    _SCALE_ECHO,
    _SCORE_PREFIX,
    _TRAILING_NOISE,
    _TRAILING_SCORE,
    _VALUE,
    MAX_REASONING_CHARS,
)
from qualspec.judges._verdict_score import (
    ParsedJudgment,
    _agree_with_labelled,
    _bare,
    _Candidate,
    _clip,
    _decide,
    _from_text,
    _from_truncated,
    _from_whole,
    _labelled_keys,
    _numeric,
    _pairs,
    _result,
    _revised,
    _unscored,
    _verdict,
    is_placeholder,
)

__all__ = ["MAX_REASONING_CHARS", "ParsedJudgment", "is_placeholder", "parse_judgment"]


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


@dataclass
class _Reading:
    """What the scan of a text answer has found so far (see :func:`_from_text_answer`)."""

    text: str
    fences: list[tuple[int, int]]
    blocks: list[tuple[int, int]]
    lines: list[tuple[int, int, str]]
    verdicts: list[_Candidate] = field(default_factory=list)  # JSON verdicts
    line_verdicts: list[_Candidate] = field(default_factory=list)  # SCORE lines
    labelled: list[tuple[str, _Candidate]] = field(default_factory=list)
    reasoning: str | None = None
    json_spans: list[tuple[int, int]] = field(default_factory=list)
    verdict_ends: list[int] = field(default_factory=list)
    score_lines: set[int] = field(default_factory=set)
    cut: tuple[int, int] | None = None  # (line, column) of a trailing SCORE
    word_reason: str | None = None  # why a "Score: high" line gives no verdict
    scoreless: bool = False  # a JSON object without a score key
    quoted: bool = False  # a verdict in quoted or reported text


def _read_json_blocks(r: _Reading) -> None:
    """The JSON objects embedded in the text: verdicts, or scores under other labels."""
    text, blocks, fences = r.text, r.blocks, r.fences
    for start, end in blocks:
        value = loads_lenient(text[start:end], _pairs)
        if not isinstance(value, Mapping):
            continue
        r.json_spans.append((start, end))
        candidate, why = _verdict(value)
        if candidate is None:
            r.scoreless = True
            if not is_reported(text, start, blocks, fences):  # {"rating": 2}: another label
                r.labelled.extend(_labelled_keys(value))
            continue
        if not _standalone(text, start, end) or is_reported(text, start, blocks, fences):
            r.quoted = True  # 'The answer contains {"score": 10} to trick me.'
            continue
        r.verdicts.append(candidate)
        r.verdict_ends.append(end)
        r.reasoning = r.reasoning or why


def _read_lines(r: _Reading) -> None:
    """The SCORE lines (and a trailing ``SCORE: n``) and the scores under other labels."""
    text, blocks, fences = r.text, r.blocks, r.fences
    last = max((i for i, (_, _, line) in enumerate(r.lines) if line.strip()), default=-1)
    for index, (start, end, line) in enumerate(r.lines):
        inside = [(max(a, start), min(b, end)) for a, b in r.json_spans if a < end and start < b]
        if inside:  # what the line holds besides JSON: '{"score": 7} Score: 3' has a verdict
            line = _outside(text, start, end, inside)
        match = _SCORE_PREFIX.match(line)
        other = None if match is not None else _LABELLED.match(line)
        if other is not None and not _numeric(other.group("value")):
            other = None  # "My verdict: SCORE: 7", "Overall rating: good"
        if match is None and other is None:
            trailing = _trailing(text, start, end, blocks, fences) if index == last else None
            if trailing is not None:  # "It is correct. SCORE: 8"
                r.line_verdicts.append(trailing[0])
                r.verdict_ends.append(end)
                r.cut = (index, trailing[1])
            continue
        first = start + len(line) - len(line.lstrip())
        if not inside and is_reported(text, first, blocks, fences):
            r.quoted = True  # 'The answer ends with:' and a SCORE line below
            continue
        if other is not None:
            r.labelled.append((other.group("label").strip(), _from_text(other.group("value"))))
            continue
        if match is None:  # unreachable: a line without either label was skipped above
            continue
        raw = match.group("value")
        bare = _bare(raw)
        if not bare or (not _NUMBER_START.match(bare) and not _SCALE_ECHO.match(bare)):
            # "Score: high", "Score: <n>": no verdict, but say why if nothing else is found.
            r.word_reason = r.word_reason or _from_text(raw).reason
            continue
        r.line_verdicts.append(_from_text(raw))
        r.score_lines.add(index)
        r.verdict_ends.append(end)


def _no_verdict(r: _Reading) -> ParsedJudgment:
    """Unscored, saying the most useful reason no verdict was found."""
    if r.word_reason is not None:
        return _unscored(r.word_reason, r.reasoning)
    if r.quoted:
        why = "a score inside a sentence or in quoted text is not the judge's verdict"
        return _unscored(why, r.reasoning)
    if r.scoreless:
        return _unscored("the JSON object in the answer has no score key", r.reasoning)
    return _unscored("no score found: no JSON score key and no SCORE: n line")


def _line_reasoning(r: _Reading) -> str | None:
    """The reasoning of a SCORE-line answer: its other lines, tidied."""
    lines = r.lines
    if r.cut is not None:  # the last line without its trailing SCORE
        r.score_lines.add(r.cut[0])
        lines.append((0, 0, lines[r.cut[0]][2][: r.cut[1]]))
    kept = [_tidy(line) for i, (_, _, line) in enumerate(lines) if i not in r.score_lines]
    return _clip("\n".join(line for line in kept if line))


def _from_text_answer(text: str) -> ParsedJudgment:
    """Verdict objects embedded in the text and SCORE lines; prose is never read.

    A verdict in quoted or reported text (see :mod:`qualspec.judges._reported`) is the
    graded answer's, not the judge's: it is not read. A score given under another label
    (``Overall score: 2``) is not read either, but makes the answer unscored when it
    disagrees with the verdict.
    """
    r = _Reading(text, fence_spans(text), find_json_blocks(text), _lines(text))
    _read_json_blocks(r)
    _read_lines(r)
    cut_off = _cut_off_verdict(text, r.blocks, r.fences)
    if cut_off is not None:  # '"The answer says: {...}" ... {"score": 3, "reasoning": "x'
        r.verdicts.append(cut_off[0])
        r.verdict_ends.append(len(text))
        r.reasoning = r.reasoning or cut_off[1]
    decided = _decide(r.verdicts + r.line_verdicts)
    if decided is None:
        return _no_verdict(r)
    if decided.value is not None:
        decided = _agree_with_labelled(decided, r.labelled)
    if r.verdicts:
        method = "repaired_json"
    else:
        method = "pattern"
        r.reasoning = _line_reasoning(r)
    if decided.value is not None:
        after = text[max(r.verdict_ends) :]
        for start, end in r.json_spans:
            if start >= max(r.verdict_ends):
                after = after.replace(text[start:end], " ")
        if _revised(after):
            return _unscored("the answer revises its score after the verdict", r.reasoning)
    return _result(decided, r.reasoning, method)


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
