"""Rubric mining: read coding-assistant sessions, extract rubrics from the good ones,
consolidate them, and judge sessions with them (1-5 per rubric, a weighted score).

The reader and formatter are pure; the pipeline calls models only through a
``qualspec.Session`` (cache, retries, limits, cost, store).
"""

from qualspec.rubrics._files import load_extracted, load_labels, load_rubrics, select_sessions
from qualspec.rubrics._format import (
    CUT_MARKER,
    RESULT_LIMIT,
    fit_to_context,
    format_session,
    summarize_input,
)
from qualspec.rubrics._metrics import SessionMetrics, session_metrics
from qualspec.rubrics._parse import (
    REQUIRED_FIELDS,
    ParsedExtraction,
    ParsedScore,
    ParsedSummary,
    parse_extraction,
    parse_rubric_score,
    parse_summary,
)
from qualspec.rubrics._pipeline import (
    EXTRACTOR_PROMPTS,
    RESULTS_VERSION,
    RUBRIC_RESULT_KEY,
    RUBRIC_RUN_KIND,
    MiningOptions,
    extract_rubrics,
    extractor_prompt_name,
    judge_sessions,
    session_rank,
    summarize_rubrics,
    weighted_score,
)
from qualspec.rubrics._sessions import (
    ChatSession,
    ToolCall,
    ToolResult,
    Turn,
    find_session_files,
    read_session,
    read_sessions,
)

__all__ = [
    "CUT_MARKER",
    "EXTRACTOR_PROMPTS",
    "REQUIRED_FIELDS",
    "RESULTS_VERSION",
    "RUBRIC_RESULT_KEY",
    "RUBRIC_RUN_KIND",
    "RESULT_LIMIT",
    "ChatSession",
    "MiningOptions",
    "ParsedExtraction",
    "ParsedScore",
    "ParsedSummary",
    "SessionMetrics",
    "ToolCall",
    "ToolResult",
    "Turn",
    "extract_rubrics",
    "extractor_prompt_name",
    "find_session_files",
    "fit_to_context",
    "format_session",
    "judge_sessions",
    "load_extracted",
    "load_labels",
    "load_rubrics",
    "parse_extraction",
    "parse_rubric_score",
    "parse_summary",
    "read_session",
    "read_sessions",
    "select_sessions",
    "session_metrics",
    "session_rank",
    "summarize_input",
    "summarize_rubrics",
    "weighted_score",
]
