"""What kind of evaluation record a judgment is, read from its ``details["type"]``.

Apart from the modules that make and read each kind: counting a run's records (every run's
totals) asks these questions and needs none of the comparison or field-grading machinery.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from qualspec.store import JudgmentRecord, RunRecord

__all__ = ["comparison_records", "is_comparison", "is_field_grade"]


def is_comparison(judgment: Any) -> bool:
    """Whether a record is a comparison (``details["type"] == "comparison"``)."""
    details = getattr(judgment, "details", None)
    return isinstance(details, Mapping) and details.get("type") == "comparison"


def comparison_records(record: RunRecord) -> list[JudgmentRecord]:
    """The run's comparison records, in the order they were stored.

    Example:
        >>> for j in comparison_records(run):
        ...     print(j.evaluator, j.details["group"], j.details["winner"], j.scores)
    """
    return [j for j in record.judgments if is_comparison(j)]


def is_field_grade(judgment: Any) -> bool:
    """Whether a record is a field grade (``details["type"] == "field_grade"``)."""
    details = getattr(judgment, "details", None)
    return isinstance(details, Mapping) and details.get("type") == "field_grade"
