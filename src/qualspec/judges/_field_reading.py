"""Reading a field grader's reply: its JSON Schema, and each field's grade or why not.

Strict: nothing is guessed (see :func:`read_field_grades`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from qualspec.judges._criteria_judge import verdict_object
from qualspec.judges._field_rules import MATCH_BANDS, FieldGrade

__all__ = ["CONTRADICTORY", "field_grade_schema", "read_field_grades"]

_GRADER_MATCHES = ("exact", "semantic", "partial", "none")
CONTRADICTORY = "contradictory grade"
"""How a grade whose match type contradicts its accuracy is reported (``MATCH_BANDS``)."""


def field_grade_schema(names: Sequence[str]) -> dict[str, Any]:
    """The JSON Schema of a grader's reply for fields ``names``."""
    one = {
        "type": "object",
        "properties": {
            "accuracy": {"type": "integer", "minimum": 0, "maximum": 100},
            "match": {"type": "string", "enum": list(_GRADER_MATCHES)},
            "explanation": {"type": "string", "maxLength": 120},
            "confidence": {"type": "number", "minimum": 0, "maximum": 1},
        },
        "required": ["accuracy", "match", "explanation", "confidence"],
    }
    return {
        "type": "object",
        "properties": {
            "fields": {
                "type": "object",
                "properties": {n: one for n in names},
                "required": list(names),
            }
        },
        "required": ["fields"],
    }


def _number(value: Any, low: float, high: float) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return number if low <= number <= high else None


def read_field_grades(
    text: str, structured: object, names: Sequence[str]
) -> dict[str, FieldGrade | str]:
    """Each field's grade from a grader's reply, or why it cannot be read.

    Strict: a field needs an ``accuracy`` number 0-100 and a ``match`` of exact, semantic,
    partial or none (``accuracy_score``/``match_type`` are read too) that agree with each
    other (``MATCH_BANDS``: ``exact`` with accuracy 0 is a contradiction, not a grade);
    ``confidence`` is kept only when it is a number 0-1: another value (85, "high") is not
    guessed at, the grade is kept without it and flagged ``confidence_out_of_range``.
    Nothing is guessed.

    Example:
        >>> out = read_field_grades('{"fields": {"a": {"accuracy": 85, "match": "semantic",'
        ...     ' "explanation": "same", "confidence": 0.9}}}', None, ["a", "b"])
        >>> out["a"].accuracy, out["b"]
        (85.0, 'no grade for field b')
    """
    obj = verdict_object(text, structured, "fields")
    if obj is None:
        reason = "no JSON object with a fields key in the grader's answer"
        return dict.fromkeys(names, reason)
    fields = obj.get("fields")
    out: dict[str, FieldGrade | str] = {}
    for name in names:
        entry = fields.get(name) if isinstance(fields, Mapping) else None
        if not isinstance(entry, Mapping):
            out[name] = f"no grade for field {name}"
            continue
        accuracy = _number(entry.get("accuracy", entry.get("accuracy_score")), 0, 100)
        match = entry.get("match", entry.get("match_type"))
        if accuracy is None:
            out[name] = f"field {name}: accuracy is not a number 0-100"
            continue
        if match not in _GRADER_MATCHES:
            out[name] = f"field {name}: match is not one of {', '.join(_GRADER_MATCHES)}"
            continue
        low, high = MATCH_BANDS[str(match)]
        if not low <= accuracy <= high:
            out[name] = (
                f"field {name}: {CONTRADICTORY} (match {match} with accuracy {accuracy:g}; "
                f"{match} means an accuracy {low:g}-{high:g})"
            )
            continue
        why = entry.get("explanation")
        raw_confidence = entry.get("confidence")
        confidence = _number(raw_confidence, 0, 1)
        flag = None
        if raw_confidence is not None and confidence is None:
            flag = "confidence_out_of_range"
        out[name] = FieldGrade(
            accuracy=accuracy,
            match=str(match),
            explanation=why.strip()[:500] if isinstance(why, str) else "",
            confidence=confidence,
            decided_by="grader",
            flag=flag,
        )
    return out
