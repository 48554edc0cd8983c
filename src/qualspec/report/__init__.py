"""Reports: console (rich), results files (JSON with schema_version), exports (json/jsonl/csv),
the self-contained HTML report.

Imported lazily: rich is loaded only when a console report is drawn, jinja2 only when an
HTML report is rendered.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from qualspec.lazy import lazy_exports

if TYPE_CHECKING:
    from qualspec.report._console import render_run
    from qualspec.report._export import EXPORT_COLUMNS, ExportFormat, export_rows, export_run
    from qualspec.report._html import render_html, write_html
    from qualspec.report._html_large import render_large_html, write_large_html
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
    from qualspec.report._results_stream import write_results_stream

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
    "render_large_html",
    "render_run",
    "render_sessions_html",
    "run_from_dict",
    "run_to_dict",
    "write_html",
    "write_json_atomic",
    "write_large_html",
    "write_results_stream",
    "write_sessions_html",
    "write_text_atomic",
]

# where each name lives: imported on first use (see __getattr__)
_LAZY: dict[str, str] = {
    "render_run": "qualspec.report._console",
    "EXPORT_COLUMNS": "qualspec.report._export",
    "ExportFormat": "qualspec.report._export",
    "export_rows": "qualspec.report._export",
    "export_run": "qualspec.report._export",
    "render_html": "qualspec.report._html",
    "write_html": "qualspec.report._html",
    "render_large_html": "qualspec.report._html_large",
    "write_large_html": "qualspec.report._html_large",
    "render_sessions_html": "qualspec.report._html_sessions",
    "write_sessions_html": "qualspec.report._html_sessions",
    "cache_phrase": "qualspec.report._html_summary",
    "SCHEMA_VERSION": "qualspec.report._results_file",
    "PromptRefs": "qualspec.report._results_file",
    "ResultsFileError": "qualspec.report._results_file",
    "default_results_path": "qualspec.report._results_file",
    "prompt_refs": "qualspec.report._results_file",
    "read_results_file": "qualspec.report._results_file",
    "run_from_dict": "qualspec.report._results_file",
    "run_to_dict": "qualspec.report._results_file",
    "write_json_atomic": "qualspec.report._results_file",
    "write_text_atomic": "qualspec.report._results_file",
    "write_results_stream": "qualspec.report._results_stream",
}


__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
