"""Read the models' answers: extracted rubrics, the consolidated set, a 1-5 session score.

Nothing here invents a value: a rubric without its required fields is dropped (and
named in the problems), a score that is not a whole number from 1 to 5 is *unscored*
with a reason. The judge's verdict is read with the judges' strict parser
(:func:`~qualspec.judges.parse_judgment`: a ``SCORE: n`` line or a JSON ``score``),
then range-checked against the rubric scale.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from qualspec.judges import parse_judgment

__all__ = [
    "REQUIRED_FIELDS",
    "ParsedExtraction",
    "ParsedScore",
    "ParsedSummary",
    "parse_extraction",
    "parse_rubric_score",
    "parse_summary",
]

REQUIRED_FIELDS = ("name", "description", "scoring_criteria")
"""What every rubric must have (``evidence`` is kept when given)."""
MIN_SCORE = 1
MAX_SCORE = 5
_FENCE = re.compile(r"```[A-Za-z]*[ \t]*\n?(.*?)```", re.DOTALL)
_REASONING = re.compile(r"REASONING:\s*(.+)", re.IGNORECASE | re.DOTALL)
_DECODER = json.JSONDecoder()
# The extractor template's own example rubric: a model that copies it extracted nothing.
_TEMPLATE_EXAMPLE = ("example rubric name", "what this measures...")


@dataclass
class ParsedExtraction:
    """The valid rubrics of one extractor answer, and what was wrong with the rest."""

    rubrics: list[dict[str, Any]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


@dataclass
class ParsedSummary:
    """The consolidated rubrics (ids ``rubric_001``...), the notes, and the problems."""

    rubrics: list[dict[str, Any]] = field(default_factory=list)
    consolidation_notes: str = ""
    problems: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class ParsedScore:
    """A 1-5 score with its reasoning, or ``score=None`` with ``unscored_reason``."""

    score: int | None
    reasoning: str | None
    unscored_reason: str | None


def _json_values(text: str) -> list[Any]:
    """Every JSON value that starts at a ``[`` or ``{`` of ``text`` (fenced blocks first).

    A value found is skipped over, so nested objects of an array are not listed again.
    """
    out: list[Any] = []
    sources = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    for source in sources:
        i = 0
        while i < len(source):
            if source[i] not in "[{":
                i += 1
                continue
            try:
                value, end = _DECODER.raw_decode(source, i)
            except ValueError:
                i += 1
                continue
            out.append(value)
            i = end
    return out


def _text(value: Any) -> str | None:
    """A field's value as text: strings as they are; a mapping or list of levels as lines."""
    if isinstance(value, str):
        return value.strip() or None
    if isinstance(value, Mapping) and value:
        return "\n".join(f"{k}: {v}" for k, v in value.items())
    if isinstance(value, list) and value:
        return "\n".join(str(v) for v in value)
    return None


def _rubric(item: Any, where: str, problems: list[str]) -> dict[str, Any] | None:
    if not isinstance(item, Mapping):
        problems.append(f"{where}: not an object")
        return None
    rubric: dict[str, Any] = {}
    missing = []
    for name in REQUIRED_FIELDS:
        value = _text(item.get(name))
        if value is None:
            missing.append(name)
        rubric[name] = value
    if missing:
        problems.append(f"{where}: missing {', '.join(missing)}")
        return None
    evidence = _text(item.get("evidence"))
    if evidence is not None:
        rubric["evidence"] = evidence
    return rubric


def parse_extraction(text: str | None, id_prefix: str = "r") -> ParsedExtraction:
    """Read an extractor's answer: the JSON array of rubrics, wherever it stands in the text.

    The first JSON array of objects in the answer is taken (fenced or in prose); each
    item must have ``name``, ``description`` and ``scoring_criteria`` (``evidence`` is
    kept when present); an item without them, a copy of the prompt's own example and a
    repeat (same name and description) are dropped and named in ``problems``. Each
    rubric gets its own ``id`` unless it came with one: ``<id_prefix>_001``...

    Example:
        >>> parse_extraction('Here: [{"name": "N", "description": "D", '
        ...                  '"scoring_criteria": "1-5"}] done', "s1").rubrics[0]["id"]
        's1_001'
    """
    found = ParsedExtraction()
    if not text or not text.strip():
        found.problems.append("empty answer")
        return found
    values = _json_values(text)
    items = next(
        (v for v in values if isinstance(v, list) and any(isinstance(x, Mapping) for x in v)),
        None,
    )
    if items is None:  # no array: objects that look like rubrics, one after another
        items = [v for v in values if isinstance(v, Mapping) and "name" in v]
        if not items:
            found.problems.append("no JSON array of rubrics in the answer")
            return found
    seen: set[str] = set()
    kept: set[tuple[str, str]] = set()
    for number, item in enumerate(items, start=1):
        rubric = _rubric(item, f"rubric {number}", found.problems)
        if rubric is None:
            continue
        same = (rubric["name"].casefold(), rubric["description"].casefold())
        if same == _TEMPLATE_EXAMPLE:
            found.problems.append(f"rubric {number}: the prompt's example, copied")
            continue
        if same in kept:
            found.problems.append(f"rubric {number}: a repeat of an earlier rubric")
            continue
        kept.add(same)
        given = item.get("id") if isinstance(item, Mapping) else None
        rid = given if isinstance(given, str) and given.strip() and given not in seen else None
        rubric = {"id": rid or f"{id_prefix}_{len(found.rubrics) + 1:03d}", **rubric}
        seen.add(rubric["id"])
        found.rubrics.append(rubric)
    return found


def parse_summary(text: str | None) -> ParsedSummary:
    """Read the summarizer's answer: ``{"rubrics": [...], "consolidation_notes": "..."}``.

    The first JSON object with a ``rubrics`` list is taken. Valid rubrics (as for
    :func:`parse_extraction`) are numbered ``rubric_001``, ``rubric_002``... in order,
    whatever ids the model gave; ``weight`` is kept when it is a number above 0, else 1.0
    (named in ``problems``). Fewer than 5 or more than 10 rubrics is a problem, not a
    failure.
    """
    found = ParsedSummary()
    if not text or not text.strip():
        found.problems.append("empty answer")
        return found
    values = _json_values(text)
    obj = next(
        (v for v in values if isinstance(v, Mapping) and isinstance(v.get("rubrics"), list)),
        None,
    )
    if obj is None:
        found.problems.append('no JSON object with a "rubrics" list in the answer')
        return found
    for number, item in enumerate(obj["rubrics"], start=1):
        rubric = _rubric(item, f"rubric {number}", found.problems)
        if rubric is None:
            continue
        rubric.pop("evidence", None)
        weight = item.get("weight")
        if isinstance(weight, bool) or not isinstance(weight, int | float) or weight <= 0:
            if weight is not None:
                found.problems.append(f"rubric {number}: weight {weight!r} is not above 0: 1.0")
            weight = 1.0
        found.rubrics.append(
            {"id": f"rubric_{len(found.rubrics) + 1:03d}", **rubric, "weight": float(weight)}
        )
    notes = obj.get("consolidation_notes")
    found.consolidation_notes = notes.strip() if isinstance(notes, str) else ""
    if found.rubrics and not 5 <= len(found.rubrics) <= 10:
        found.problems.append(f"{len(found.rubrics)} rubrics, not 5-10 as asked")
    return found


def parse_rubric_score(text: str | None) -> ParsedScore:
    """Read ``SCORE: n`` (1-5) and ``REASONING: ...`` from a judge's answer.

    Example:
        >>> parse_rubric_score("SCORE: 4\\nREASONING: Clear goals.").score
        4
        >>> parse_rubric_score("SCORE: 7\\nREASONING: Great.").unscored_reason
        'score 7 is outside 1-5'
    """
    parsed = parse_judgment(text or "")
    if parsed.score is None:
        return ParsedScore(None, parsed.reasoning, parsed.unscored_reason or "no score")
    score = int(parsed.score)
    match = _REASONING.search(text or "")
    reasoning = match.group(1).strip()[:1000] if match else parsed.reasoning
    if not MIN_SCORE <= score <= MAX_SCORE:
        return ParsedScore(None, reasoning, f"score {score} is outside {MIN_SCORE}-{MAX_SCORE}")
    return ParsedScore(score, reasoning, None)
