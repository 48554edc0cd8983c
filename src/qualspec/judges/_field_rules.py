"""Field grading without a model: reading structured answers, the cases decided by rule,
and the per-answer numbers (simple and weighted means, field pass rate, band)."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from qualspec.judges._expect import json_of, looks_like_refusal
from qualspec.judges._record_kinds import is_field_grade

if TYPE_CHECKING:
    from qualspec.store import Store

__all__ = [
    "BANDS",
    "FIELD_MATCHES",
    "MATCH_BANDS",
    "FieldGrade",
    "FieldRule",
    "band",
    "field_pass_rate",
    "is_empty",
    "is_field_grade",
    "read_reference",
    "read_structured",
    "reference_for_grading",
    "rule_grade",
    "simple_mean",
    "weighted_mean",
]

FIELD_MATCHES = ("exact", "semantic", "partial", "none", "missing", "error", "no_reference")
"""Match types of a graded field: the grader's four, ``missing`` (the answer lacks the
field), ``error`` (it could not be graded) and ``no_reference`` (the reference has no value
for a field the answer fills: not graded, left out of the means, the answer flagged
``empty_reference_field``)."""

MATCH_BANDS: dict[str, tuple[float, float]] = {
    "exact": (90.0, 100.0),
    "semantic": (40.0, 100.0),
    "partial": (10.0, 89.0),
    "none": (0.0, 39.0),
}
"""The accuracies each of the grader's match kinds may come with. The grading prompt asks
100 for ``exact``, 70-99 for ``semantic``, 20-69 for ``partial`` and 0-19 for ``none``;
a grade outside these wider bands contradicts itself (``exact`` with accuracy 0, ``semantic``
with 1) and is not taken: the field is asked again, and left unscored (the answer flagged
``contradictory_grade``) when the grader insists."""

BANDS = (
    (90.0, "Excellent"),
    (80.0, "Good"),
    (70.0, "Acceptable"),
    (-math.inf, "Needs improvement"),
)
"""Score bands, best first: Excellent >= 90, Good 80-89, Acceptable 70-79, else
Needs improvement."""


@dataclass(frozen=True, slots=True)
class FieldRule:
    """A graded field: its name, whether it is critical, and its weight."""

    name: str
    critical: bool = False
    weight: float = 1.0


@dataclass(frozen=True, slots=True)
class FieldGrade:
    """One field's grade (``accuracy`` None: not graded)."""

    accuracy: float | None
    match: str
    explanation: str
    confidence: float | None
    decided_by: str  # "rule" | "grader"
    flag: str | None = None  # what is wrong with the grade, for the answer's flags


def read_structured(
    text: str | None, structured: object = None
) -> tuple[dict[str, Any] | None, str | None]:
    """A structured answer as an object, or ``(None, flag)``.

    The flag is ``refusal`` (the answer declines), ``empty`` (no text) or
    ``malformed_json`` (no JSON object in it: the answer, or a fenced block of it).

    Example:
        >>> read_structured('{"name": "Acme"}')
        ({'name': 'Acme'}, None)
        >>> read_structured("I'm sorry, but I can't help with that.")
        (None, 'refusal')
    """
    if isinstance(structured, dict):
        return structured, None
    if text is None or not text.strip():
        return None, "empty"
    parsed, value = json_of(text)
    if not parsed:
        start, end = text.find("{"), text.rfind("}")
        if 0 <= start < end:
            try:
                parsed, value = True, json.loads(text[start : end + 1])
            except ValueError:
                parsed = False
    if parsed and isinstance(value, dict):
        return value, None
    if looks_like_refusal(text):
        return None, "refusal"
    return None, "malformed_json"


def read_reference(
    text: str | None, rules: Sequence[FieldRule] = ()
) -> tuple[dict[str, Any] | None, str | None]:
    """A reference answer as an object, or ``(None, flag)``: the one rule for what a
    grader grades against (the field grader's, and ``reference_for_grading``'s).

    The flag is ``empty_reference`` (no text, no JSON object's fields, or every graded
    field of ``rules`` empty) or ``malformed_reference`` (no JSON object in it, or a
    refusal): a flagged reference is not graded against.

    Example:
        >>> read_reference('{"name": "Acme"}')
        ({'name': 'Acme'}, None)
        >>> read_reference("[1, 2]")
        (None, 'malformed_reference')
    """
    reference, flag = read_structured(text)
    if reference is None:
        bad = flag in ("malformed_json", "refusal")
        return None, "malformed_reference" if bad else "empty_reference"
    if rules and all(is_empty(reference.get(r.name)) for r in rules):
        return None, "empty_reference"
    return reference, None


def reference_for_grading(
    store: Store | None, call_key: str | None, text: str | None
) -> tuple[str | None, str, list[str]]:
    """What a grader grades against: ``(text, status, flags)``.

    ``text`` is the override a person wrote when there is one, else the model's answer
    as given; ``status`` the reference's ground-truth status (``unvalidated`` without a
    store, a call key or a review; ``needs_review`` when a person reviewed another answer
    than ``text``, regenerated since, and wrote no override); ``flags`` holds
    ``empty_reference`` or ``malformed_reference`` as :func:`read_reference` decides.
    """
    status = "unvalidated"
    if store is not None and call_key:
        review = store.reference_review(call_key)
        if review is not None:
            status = review.status_for(text)
            if review.override_text is not None:
                text = review.override_text
    flag = read_reference(text)[1]
    return text, status, [flag] if flag else []


def is_empty(value: Any) -> bool:
    """Whether a field value is empty: null, blank text, an empty list or object."""
    if value is None:
        return True
    if isinstance(value, str):
        return not value.strip()
    if isinstance(value, list | dict):
        return not value
    return False


def _normal(value: Any) -> Any:
    """A value compared loosely: case and spacing of text, number formatting."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        text = " ".join(value.split()).casefold()
        try:
            return float(text.replace(",", "")) if text else text
        except ValueError:
            return text
    if isinstance(value, list):
        return [_normal(v) for v in value]
    if isinstance(value, dict):
        return {str(k).casefold(): _normal(v) for k, v in value.items()}
    return value


def rule_grade(reference: Any, answer: Any, *, present: bool) -> FieldGrade | None:
    """The grade of a field when a rule decides it, else None (the grader decides).

    Both empty: 100 (exact). The answer lacks the field or leaves it empty while the
    reference has a value: 0 (missing). The reference has no value but the answer has one:
    not graded (``no_reference``, accuracy None, flag ``empty_reference_field``): there is
    no ground truth to grade it against. The same value (ignoring case, spacing and number
    formatting): 100 (exact).

    Example:
        >>> rule_grade("SaaS", "saas ", present=True).accuracy
        100.0
        >>> rule_grade("SaaS", None, present=False).match
        'missing'
        >>> rule_grade("SaaS", "Software", present=True) is None
        True
    """
    if is_empty(reference) and (not present or is_empty(answer)):
        return FieldGrade(
            100.0, "exact", "both the reference and the answer are empty", 1.0, "rule"
        )
    if is_empty(reference):
        return FieldGrade(
            None,
            "no_reference",
            "the reference has no value for this field: not graded (review the reference)",
            None,
            "rule",
            "empty_reference_field",
        )
    if not present:
        return FieldGrade(0.0, "missing", "the answer has no such field", 1.0, "rule")
    if is_empty(answer):
        return FieldGrade(0.0, "missing", "the answer leaves the field empty", 1.0, "rule")
    if _normal(reference) == _normal(answer):
        return FieldGrade(100.0, "exact", "the same value", 1.0, "rule")
    return None


def simple_mean(grades: Mapping[str, FieldGrade]) -> float | None:
    """Mean accuracy of the graded fields (None when none is graded)."""
    values = [g.accuracy for g in grades.values() if g.accuracy is not None]
    return sum(values) / len(values) if values else None


def weighted_mean(grades: Mapping[str, FieldGrade], rules: Sequence[FieldRule]) -> float | None:
    """Mean accuracy of the graded fields weighted by their rules' weights.

    Example:
        >>> g = {"a": FieldGrade(100.0, "exact", "", 1.0, "rule"),
        ...      "b": FieldGrade(40.0, "none", "", 1.0, "grader")}
        >>> weighted_mean(g, [FieldRule("a", True, 2.0), FieldRule("b")])
        80.0
    """
    weights = {r.name: r.weight for r in rules}
    total = weight = 0.0
    for name, grade in grades.items():
        if grade.accuracy is not None:
            w = weights.get(name, 1.0)
            total += w * grade.accuracy
            weight += w
    return total / weight if weight else None


def field_pass_rate(grades: Mapping[str, FieldGrade], threshold: float) -> float | None:
    """Percent (0-100) of the graded fields whose accuracy reaches ``threshold``."""
    values = [g.accuracy for g in grades.values() if g.accuracy is not None]
    if not values:
        return None
    return 100.0 * sum(1 for v in values if v >= threshold) / len(values)


def band(score: float | None) -> str | None:
    """The band of a 0-100 score (None for None).

    Example:
        >>> band(95), band(80), band(79.9), band(10)
        ('Excellent', 'Good', 'Acceptable', 'Needs improvement')
    """
    if score is None:
        return None
    return next(name for low, name in BANDS if score >= low)
