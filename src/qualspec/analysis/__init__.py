"""qualspec.analysis: aggregation of stored runs, the diff between two runs, and the
temperature and role analysis of one run."""

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
from qualspec.analysis._fields import (
    CallCost,
    FieldAnalysis,
    FieldStats,
    GradeGroup,
    field_analysis,
    field_analysis_to_dict,
    suite_costs,
)
from qualspec.analysis._roles import RoleGap
from qualspec.analysis._run_analysis import (
    RunAnalysis,
    analysis_to_dict,
    analyze_run,
    candidate_curves,
    format_temperature,
    stability_ranking,
    worth_analysing,
)
from qualspec.analysis._similarity import (
    embeddings_available,
    lexical_similarity,
    mean_pairwise_similarity,
)
from qualspec.analysis._temperature import (
    AGGREGATIONS,
    UNSTABLE_STD,
    CellTemperatureMetrics,
    TemperaturePoint,
)

__all__ = [
    "AGGREGATIONS",
    "CHECKS_EVALUATOR",
    "CallCost",
    "CellKey",
    "CellScore",
    "CellTemperatureMetrics",
    "DIFF_SCHEMA_VERSION",
    "DiffFormat",
    "DiffStatus",
    "FieldAnalysis",
    "FieldStats",
    "GradeGroup",
    "RoleGap",
    "RunAnalysis",
    "RunDiff",
    "RunTotals",
    "STATUSES",
    "TemperaturePoint",
    "TupleChange",
    "TupleKey",
    "UNSTABLE_STD",
    "analysis_to_dict",
    "analyze_run",
    "candidate_curves",
    "cell_key",
    "cell_scores",
    "diff_runs",
    "diff_to_dict",
    "embeddings_available",
    "field_analysis",
    "field_analysis_to_dict",
    "format_diff",
    "format_temperature",
    "judgments_by_response",
    "lexical_similarity",
    "mean_pairwise_similarity",
    "response_score",
    "run_totals",
    "stability_ranking",
    "suite_costs",
    "suite_order",
    "temperature_label",
    "temperature_order",
    "worth_analysing",
]
