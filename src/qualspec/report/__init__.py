"""Reports: console (rich), results files (JSON with schema_version), exports (json/jsonl/csv),
the self-contained HTML report.

Imported lazily: rich is loaded only when a console report is drawn, jinja2 only when an
HTML report is rendered.
"""

from __future__ import annotations

from qualspec.report._console import render_run
from qualspec.report._export import EXPORT_COLUMNS, ExportFormat, export_rows, export_run
from qualspec.report._html import render_html, write_html
from qualspec.report._html_sessions import render_sessions_html, write_sessions_html
from qualspec.report._html_summary import cache_phrase
from qualspec.report._results_file import (
    SCHEMA_VERSION,
    PromptRefs,
    ResultsFileError,
    default_results_path,
    prompt_refs,
    read_results_file,
    run_from_dict,
    run_to_dict,
    write_json_atomic,
    write_text_atomic,
)

__all__ = [
    "EXPORT_COLUMNS",
    "SCHEMA_VERSION",
    "ExportFormat",
    "PromptRefs",
    "ResultsFileError",
    "cache_phrase",
    "default_results_path",
    "export_rows",
    "export_run",
    "prompt_refs",
    "read_results_file",
    "render_html",
    "render_run",
    "render_sessions_html",
    "run_from_dict",
    "run_to_dict",
    "write_html",
    "write_json_atomic",
    "write_sessions_html",
    "write_text_atomic",
]
