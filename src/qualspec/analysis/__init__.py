"""qualspec.analysis: aggregation of stored runs and the diff between two runs."""

from qualspec.analysis._aggregate import (
    CHECKS_EVALUATOR,
    CellKey,
    CellScore,
    RunTotals,
    cell_key,
    cell_scores,
    judgments_by_response,
    response_score,
    run_totals,
    suite_order,
    temperature_label,
    temperature_order,
)
from qualspec.analysis._diff import (
    STATUSES,
    DiffStatus,
    RunDiff,
    TupleChange,
    TupleKey,
    diff_runs,
)
from qualspec.analysis._diff_format import (
    DIFF_SCHEMA_VERSION,
    DiffFormat,
    diff_to_dict,
    format_diff,
)

__all__ = [
    "CHECKS_EVALUATOR",
    "CellKey",
    "CellScore",
    "DIFF_SCHEMA_VERSION",
    "DiffFormat",
    "DiffStatus",
    "RunDiff",
    "RunTotals",
    "STATUSES",
    "TupleChange",
    "TupleKey",
    "cell_key",
    "cell_scores",
    "diff_runs",
    "diff_to_dict",
    "format_diff",
    "judgments_by_response",
    "response_score",
    "run_totals",
    "suite_order",
    "temperature_label",
    "temperature_order",
]
