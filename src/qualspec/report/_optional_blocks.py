"""Whether a run has what the optional blocks of its report and results file show: field
grades and a judge panel's judgments.

The modules that build those blocks (:mod:`qualspec.analysis`'s field analysis and panel
agreement, a dozen dataclasses and ``statistics``) are imported only when a run has them:
most runs have neither, and every ``qualspec run`` imported them to find nothing. Each test
is the first condition of the function it guards (``judges.is_field_grade``,
``analysis.panel_members_of``): a run it says no to has nothing for that function.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from qualspec.store import RunRecord

__all__ = ["has_field_grades", "has_panel"]


def has_field_grades(run: RunRecord) -> bool:
    """Whether a judgment of ``run`` is a field grade (``details["type"] == "field_grade"``)."""
    return any(
        isinstance(j.details, Mapping) and j.details.get("type") == "field_grade"
        for j in run.judgments
    )


def has_panel(run: RunRecord) -> bool:
    """Whether a judgment of ``run`` lists a panel's members (``details["panel"]``)."""
    return any(
        isinstance(j.details, Mapping) and isinstance(j.details.get("panel"), list)
        for j in run.judgments
    )
