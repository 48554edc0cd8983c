"""Judges: the criteria and comparative judges, parsing that never invents a score, verdicts.

The engine makes the judge calls (and the parse retries); everything here is pure. The
parser's labelled corpora (for the benchmarks) are in :mod:`qualspec.judges.corpus`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from qualspec.judges._ask import AskResult, Read, ask_until_read, could_not_read
    from qualspec.judges._calibration import (
        DEFAULT_PAIRS,
        SEPARATION_THRESHOLD,
        Calibration,
        PairScores,
        cached_calibration,
        calibrate,
        calibration_calls,
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
    from qualspec.judges._criteria_judge import CriteriaJudge, candidate_view, verdict_object
    from qualspec.judges._expect import json_of, looks_like_refusal, run_check
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
        read_reference,
        read_structured,
        reference_for_grading,
        rule_grade,
        simple_mean,
        weighted_mean,
    )
    from qualspec.judges._grader_calibration import (
        DEFAULT_FIELD_PAIRS,
        cached_grader_calibration,
        calibrate_grader,
        field_calibration_pairs,
    )
    from qualspec.judges._grader_check import (
        SPREAD_SHARE,
        GraderCheck,
        GradeSpread,
        grader_check,
        grader_check_items,
        score_text,
    )
    from qualspec.judges._parsing import MAX_REASONING_CHARS, ParsedJudgment, parse_judgment
    from qualspec.judges._session_context import SessionContext
    from qualspec.judges._verdict import Summary, passed, summarize, unscored_note

__all__ = [
    "ALL_CRITERIA_PROMPT_NAME",
    "AskResult",
    "BANDS",
    "COMPARISON_PROMPT_NAME",
    "Calibration",
    "CandidateView",
    "ComparativeJudge",
    "ComparisonSummary",
    "CriteriaJudge",
    "DEFAULT_FIELD_PAIRS",
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
    "Read",
    "SEPARATION_THRESHOLD",
    "SPREAD_SHARE",
    "SessionContext",
    "Summary",
    "all_criteria_schema",
    "ask_until_read",
    "band",
    "build_all_criteria_messages",
    "build_comparison_messages",
    "build_field_messages",
    "build_judge_messages",
    "cached_calibration",
    "cached_grader_calibration",
    "calibrate",
    "calibrate_grader",
    "calibration_calls",
    "calibration_pairs",
    "candidate_view",
    "comparison_labels",
    "comparison_order",
    "comparison_records",
    "comparison_schema",
    "comparison_seed",
    "comparison_summary",
    "could_not_read",
    "dimension_rank",
    "field_calibration_pairs",
    "field_grade_schema",
    "field_pass_rate",
    "grader_check",
    "grader_check_items",
    "is_comparison",
    "is_field_grade",
    "json_of",
    "judge_prompt_text",
    "looks_like_refusal",
    "parse_judgment",
    "passed",
    "read_comparison",
    "read_field_grades",
    "read_reference",
    "read_structured",
    "reference_for_grading",
    "rule_grade",
    "score_text",
    "simple_mean",
    "run_check",
    "summarize",
    "truncate_text",
    "unscored_note",
    "verdict_object",
    "weighted_mean",
]

# where each name lives: imported on first use (see __getattr__)
_LAZY: dict[str, str] = {
    "AskResult": "qualspec.judges._ask",
    "Read": "qualspec.judges._ask",
    "ask_until_read": "qualspec.judges._ask",
    "could_not_read": "qualspec.judges._ask",
    "DEFAULT_PAIRS": "qualspec.judges._calibration",
    "SEPARATION_THRESHOLD": "qualspec.judges._calibration",
    "Calibration": "qualspec.judges._calibration",
    "PairScores": "qualspec.judges._calibration",
    "cached_calibration": "qualspec.judges._calibration",
    "calibrate": "qualspec.judges._calibration",
    "calibration_calls": "qualspec.judges._calibration",
    "calibration_pairs": "qualspec.judges._calibration",
    "ComparativeJudge": "qualspec.judges._comparative",
    "comparison_order": "qualspec.judges._comparative",
    "comparison_seed": "qualspec.judges._comparative",
    "COMPARISON_PROMPT_NAME": "qualspec.judges._compare_prompt",
    "ParsedComparison": "qualspec.judges._compare_prompt",
    "build_comparison_messages": "qualspec.judges._compare_prompt",
    "comparison_labels": "qualspec.judges._compare_prompt",
    "comparison_schema": "qualspec.judges._compare_prompt",
    "read_comparison": "qualspec.judges._compare_prompt",
    "ComparisonSummary": "qualspec.judges._comparisons",
    "comparison_records": "qualspec.judges._comparisons",
    "comparison_summary": "qualspec.judges._comparisons",
    "dimension_rank": "qualspec.judges._comparisons",
    "is_comparison": "qualspec.judges._comparisons",
    "ALL_CRITERIA_PROMPT_NAME": "qualspec.judges._criteria",
    "DEFAULT_MAX_RESPONSE_CHARS": "qualspec.judges._criteria",
    "JUDGE_PROMPT_NAME": "qualspec.judges._criteria",
    "JUDGE_SCHEMA": "qualspec.judges._criteria",
    "CandidateView": "qualspec.judges._criteria",
    "all_criteria_schema": "qualspec.judges._criteria",
    "build_all_criteria_messages": "qualspec.judges._criteria",
    "build_judge_messages": "qualspec.judges._criteria",
    "judge_prompt_text": "qualspec.judges._criteria",
    "truncate_text": "qualspec.judges._criteria",
    "CriteriaJudge": "qualspec.judges._criteria_judge",
    "candidate_view": "qualspec.judges._criteria_judge",
    "verdict_object": "qualspec.judges._criteria_judge",
    "json_of": "qualspec.judges._expect",
    "looks_like_refusal": "qualspec.judges._expect",
    "run_check": "qualspec.judges._expect",
    "FIELD_GRADE_PROMPT_NAME": "qualspec.judges._field_grader",
    "FIELD_GRADER": "qualspec.judges._field_grader",
    "FieldGrader": "qualspec.judges._field_grader",
    "build_field_messages": "qualspec.judges._field_grader",
    "field_grade_schema": "qualspec.judges._field_grader",
    "read_field_grades": "qualspec.judges._field_grader",
    "BANDS": "qualspec.judges._field_rules",
    "FIELD_MATCHES": "qualspec.judges._field_rules",
    "FieldGrade": "qualspec.judges._field_rules",
    "FieldRule": "qualspec.judges._field_rules",
    "band": "qualspec.judges._field_rules",
    "field_pass_rate": "qualspec.judges._field_rules",
    "is_field_grade": "qualspec.judges._field_rules",
    "read_reference": "qualspec.judges._field_rules",
    "read_structured": "qualspec.judges._field_rules",
    "reference_for_grading": "qualspec.judges._field_rules",
    "rule_grade": "qualspec.judges._field_rules",
    "simple_mean": "qualspec.judges._field_rules",
    "weighted_mean": "qualspec.judges._field_rules",
    "DEFAULT_FIELD_PAIRS": "qualspec.judges._grader_calibration",
    "cached_grader_calibration": "qualspec.judges._grader_calibration",
    "calibrate_grader": "qualspec.judges._grader_calibration",
    "field_calibration_pairs": "qualspec.judges._grader_calibration",
    "SPREAD_SHARE": "qualspec.judges._grader_check",
    "GraderCheck": "qualspec.judges._grader_check",
    "GradeSpread": "qualspec.judges._grader_check",
    "grader_check": "qualspec.judges._grader_check",
    "grader_check_items": "qualspec.judges._grader_check",
    "score_text": "qualspec.judges._grader_check",
    "MAX_REASONING_CHARS": "qualspec.judges._parsing",
    "ParsedJudgment": "qualspec.judges._parsing",
    "parse_judgment": "qualspec.judges._parsing",
    "SessionContext": "qualspec.judges._session_context",
    "Summary": "qualspec.judges._verdict",
    "passed": "qualspec.judges._verdict",
    "summarize": "qualspec.judges._verdict",
    "unscored_note": "qualspec.judges._verdict",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})
