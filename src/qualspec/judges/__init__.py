"""Judges: the criteria judge's prompt, score parsing that never invents a score, verdicts.

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
from qualspec.judges._criteria_judge import CriteriaJudge
from qualspec.judges._parsing import MAX_REASONING_CHARS, ParsedJudgment, parse_judgment
from qualspec.judges._verdict import Summary, passed, summarize, unscored_note

__all__ = [
    "ALL_CRITERIA_PROMPT_NAME",
    "Calibration",
    "CandidateView",
    "CriteriaJudge",
    "DEFAULT_MAX_RESPONSE_CHARS",
    "DEFAULT_PAIRS",
    "JUDGE_PROMPT_NAME",
    "JUDGE_SCHEMA",
    "MAX_REASONING_CHARS",
    "PairScores",
    "ParsedJudgment",
    "SEPARATION_THRESHOLD",
    "Summary",
    "all_criteria_schema",
    "build_all_criteria_messages",
    "build_judge_messages",
    "cached_calibration",
    "calibrate",
    "calibration_pairs",
    "judge_prompt_text",
    "parse_judgment",
    "passed",
    "summarize",
    "truncate_text",
    "unscored_note",
]
