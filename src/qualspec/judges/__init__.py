"""Judges: the criteria and comparative judges, parsing that never invents a score, verdicts.

The engine makes the judge calls (and the parse retries); everything here is pure.
"""

from qualspec.judges._calibration import (
    DEFAULT_PAIRS,
    SEPARATION_THRESHOLD,
    Calibration,
    PairScores,
    cached_calibration,
    calibrate,
    calibration_pairs,
)
from qualspec.judges._comparative import ComparativeJudge, comparison_order, comparison_seed
from qualspec.judges._compare_prompt import (
    COMPARISON_PROMPT_NAME,
    ParsedComparison,
    build_comparison_messages,
    comparison_labels,
    comparison_schema,
    read_comparison,
)
from qualspec.judges._comparisons import (
    ComparisonSummary,
    comparison_records,
    comparison_summary,
    dimension_rank,
    is_comparison,
)
from qualspec.judges._criteria import (
    ALL_CRITERIA_PROMPT_NAME,
    DEFAULT_MAX_RESPONSE_CHARS,
    JUDGE_PROMPT_NAME,
    JUDGE_SCHEMA,
    CandidateView,
    all_criteria_schema,
    build_all_criteria_messages,
    build_judge_messages,
    judge_prompt_text,
    truncate_text,
)
from qualspec.judges._criteria_judge import CriteriaJudge, verdict_object
from qualspec.judges._expect import looks_like_refusal, run_check
from qualspec.judges._field_grader import (
    FIELD_GRADE_PROMPT_NAME,
    FIELD_GRADER,
    FieldGrader,
    build_field_messages,
    field_grade_schema,
    read_field_grades,
)
from qualspec.judges._field_rules import (
    BANDS,
    FIELD_MATCHES,
    FieldGrade,
    FieldRule,
    band,
    field_pass_rate,
    is_field_grade,
    read_structured,
    rule_grade,
    simple_mean,
    weighted_mean,
)
from qualspec.judges._grader_check import (
    SPREAD_SHARE,
    GraderCheck,
    GradeSpread,
    grader_check,
    grader_check_items,
)
from qualspec.judges._parsing import MAX_REASONING_CHARS, ParsedJudgment, parse_judgment
from qualspec.judges._session_context import SessionContext
from qualspec.judges._verdict import Summary, passed, summarize, unscored_note

__all__ = [
    "ALL_CRITERIA_PROMPT_NAME",
    "BANDS",
    "COMPARISON_PROMPT_NAME",
    "Calibration",
    "CandidateView",
    "ComparativeJudge",
    "ComparisonSummary",
    "CriteriaJudge",
    "DEFAULT_MAX_RESPONSE_CHARS",
    "DEFAULT_PAIRS",
    "FIELD_GRADER",
    "FIELD_GRADE_PROMPT_NAME",
    "FIELD_MATCHES",
    "FieldGrade",
    "FieldGrader",
    "FieldRule",
    "GradeSpread",
    "GraderCheck",
    "JUDGE_PROMPT_NAME",
    "JUDGE_SCHEMA",
    "MAX_REASONING_CHARS",
    "PairScores",
    "ParsedComparison",
    "ParsedJudgment",
    "SEPARATION_THRESHOLD",
    "SPREAD_SHARE",
    "SessionContext",
    "Summary",
    "all_criteria_schema",
    "band",
    "build_all_criteria_messages",
    "build_comparison_messages",
    "build_field_messages",
    "build_judge_messages",
    "cached_calibration",
    "calibrate",
    "calibration_pairs",
    "comparison_labels",
    "comparison_order",
    "comparison_records",
    "comparison_schema",
    "comparison_seed",
    "comparison_summary",
    "dimension_rank",
    "field_grade_schema",
    "field_pass_rate",
    "grader_check",
    "grader_check_items",
    "is_comparison",
    "is_field_grade",
    "judge_prompt_text",
    "looks_like_refusal",
    "parse_judgment",
    "passed",
    "read_comparison",
    "read_field_grades",
    "read_structured",
    "rule_grade",
    "simple_mean",
    "run_check",
    "summarize",
    "truncate_text",
    "unscored_note",
    "verdict_object",
    "weighted_mean",
]
