"""Export a stored run as JSON (the results file), JSON Lines or CSV.

JSONL and CSV hold the same flat rows: one per (response, criterion) judgment, plus one
row (with empty judgment fields) for each response that has no judgment, such as an error.
``input_values`` is the input row the prompt was rendered with (an object in JSONL, its
JSON in CSV; empty without inputs or for answers recorded before rows were stored).
``evaluator`` names who made the record: ``criteria`` (the judge), another ``judges:``
entry, or ``expect`` (an ``expect:`` check: score 10 or 0, no model call).
The response's own fields (tokens, cost, text) repeat on each of its criterion rows: sum
``cost_usd`` over distinct ``response_key`` values, not over rows. A comparison (a group of
answers judged side by side) is one row with its group's key as ``response_key``, empty
response fields and no single ``score``: its score per answer, winner and order are in the
JSON export (``unattached_judgments``).
"""

from __future__ import annotations

import csv
import io
import json
import os
from typing import Any, Literal

from qualspec.analysis import judgments_by_response
from qualspec.errors import ConfigError
from qualspec.report._atomic_files import _json_default, write_json_atomic, write_text_atomic
from qualspec.report._results_file import PromptRefs, record_fields, run_to_dict
from qualspec.store import JudgmentRecord, ResponseRecord, RunRecord

__all__ = ["EXPORT_COLUMNS", "ExportFormat", "export_rows", "export_run"]

ExportFormat = Literal["json", "jsonl", "csv"]

EXPORT_COLUMNS: tuple[str, ...] = (
    "run_id",
    "suite_name",
    "response_key",
    "candidate",
    "role",
    "scenario",
    "input_id",
    "input_values",
    "temperature",
    "effective_temperature",
    "run_index",
    "provider",
    "model",
    "response_error",
    "finish_reason",
    "input_tokens",
    "output_tokens",
    "latency_s",
    "cost_usd",
    "cached",
    "served_by",
    "evaluator",
    "criterion",
    "score",
    "passed",
    "threshold",
    "unscored_reason",
    "reasoning",
    "judge_model",
    "judge_error",
    "judge_input_tokens",
    "judge_output_tokens",
    "judge_latency_s",
    "judge_cost_usd",
    "judge_cached",
    "judge_served_by",
    "superseded",
    "text",
)
"""Column order of the CSV export (and key order of each JSONL row)."""


def _row(run: RunRecord, r: ResponseRecord | None, j: JudgmentRecord | None) -> dict[str, Any]:
    return {
        "run_id": run.summary.id,
        "suite_name": run.summary.suite_name,
        "response_key": r.key if r else (j.response_key if j else None),
        "candidate": r.candidate if r else None,
        "role": r.role if r else None,
        "scenario": r.scenario if r else None,
        "input_id": r.input_id if r else None,
        "input_values": r.input_values if r else None,
        "temperature": r.temperature if r else None,
        "effective_temperature": r.effective_temperature if r else None,
        "run_index": r.run_index if r else None,
        "provider": r.provider if r else None,
        "model": r.model if r else None,
        "response_error": r.error if r else None,
        "finish_reason": r.finish_reason if r else None,
        "input_tokens": r.input_tokens if r else None,
        "output_tokens": r.output_tokens if r else None,
        "latency_s": r.latency_s if r else None,
        "cost_usd": r.cost_usd if r else None,
        "cached": r.cached if r else None,
        "served_by": r.served_by if r else None,
        "evaluator": j.evaluator if j else None,
        "criterion": j.criterion if j else None,
        "score": j.score if j else None,
        "passed": j.passed if j else None,
        "threshold": j.threshold if j else None,
        "unscored_reason": j.unscored_reason if j else None,
        "reasoning": j.reasoning if j else None,
        "judge_model": j.judge_model if j else None,
        "judge_error": j.error if j else None,
        "judge_input_tokens": j.input_tokens if j else None,
        "judge_output_tokens": j.output_tokens if j else None,
        "judge_latency_s": j.latency_s if j else None,
        "judge_cost_usd": j.cost_usd if j else None,
        "judge_cached": j.cached if j else None,
        "judge_served_by": j.served_by if j else None,
        "superseded": bool((r is not None and r.superseded) or (j is not None and j.superseded)),
        "text": r.text if r else None,
    }


def export_rows(run: RunRecord) -> list[dict[str, Any]]:
    """The flat rows of the JSONL and CSV exports, keys in :data:`EXPORT_COLUMNS` order.

    Args:
        run: The run as stored.

    Returns:
        One row per judgment (in response order), one per response without judgments, and
        one per judgment whose response is missing (response fields empty). Then, when
        the run was loaded with its superseded rows, theirs, with ``superseded`` true.
    """
    judged = judgments_by_response(run)
    rows: list[dict[str, Any]] = []
    for response in run.responses:
        judgments = judged.pop(response.key, [])
        if not judgments:
            rows.append(_row(run, response, None))
        rows.extend(_row(run, response, j) for j in judgments)
    for orphans in judged.values():
        rows.extend(_row(run, None, j) for j in orphans)
    return rows + _superseded_rows(run)


def _superseded_rows(run: RunRecord) -> list[dict[str, Any]]:
    """Rows of the superseded responses and judgments (none unless they were loaded)."""
    stale: dict[str, list[JudgmentRecord]] = {}
    for j in run.superseded_judgments:
        stale.setdefault(j.response_key, []).append(j)
    rows: list[dict[str, Any]] = []
    for response in run.superseded_responses:
        judgments = stale.pop(response.key, [])
        if not judgments:
            rows.append(_row(run, response, None))
        rows.extend(_row(run, response, j) for j in judgments)
    current = {r.key: r for r in run.responses}
    for key, judgments in stale.items():
        rows.extend(_row(run, current.get(key), j) for j in judgments)
    return rows


def _json_data(run: RunRecord, prompts: PromptRefs | None) -> dict[str, Any]:
    """The results-file layout, with the superseded rows when they were loaded.

    Each is marked ``"superseded": true``: a superseded judgment of a current response
    is listed under it, a superseded response (with its judgments) after the current
    ones; the summary counts the current rows only. A reader puts them back aside.
    """
    data = run_to_dict(run, prompts)
    if not (run.superseded_responses or run.superseded_judgments):
        return data
    fields = record_fields
    stale: dict[str, list[dict[str, Any]]] = {}
    for j in run.superseded_judgments:
        stale.setdefault(j.response_key, []).append(fields(j))
    listed = {item["key"]: item for item in data["responses"]}
    for response in run.superseded_responses:
        item = fields(response)
        item["judgments"] = stale.pop(response.key, [])
        data["responses"].append(item)
    for key, judgments in stale.items():
        if key in listed:
            listed[key]["judgments"].extend(judgments)
        else:
            data.setdefault("unattached_judgments", []).extend(judgments)
    return data


# a cell a spreadsheet would read as a formula (OWASP "CSV injection")
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def _csv_value(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):  # an input row: its JSON
        return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    if isinstance(value, str) and value.startswith(_FORMULA_STARTS):
        return "'" + value
    return value


def _render(run: RunRecord, fmt: str, prompts: PromptRefs | None = None) -> str:
    if fmt == "jsonl":
        return "".join(
            json.dumps(row, ensure_ascii=False, default=_json_default) + "\n"
            for row in export_rows(run)
        )
    if fmt == "csv":
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(EXPORT_COLUMNS)
        for row in export_rows(run):
            writer.writerow([_csv_value(row[c]) for c in EXPORT_COLUMNS])
        return buffer.getvalue()
    if fmt == "json":
        data = _json_data(run, prompts)
        return json.dumps(data, indent=2, ensure_ascii=False, default=_json_default) + "\n"
    raise ConfigError(f"Unknown export format {fmt!r}: use json, jsonl or csv")


def export_run(
    run: RunRecord,
    fmt: ExportFormat,
    path: str | os.PathLike[str] | None = None,
    *,
    prompts: PromptRefs | None = None,
) -> str | None:
    """Export a run as ``json`` (the results file), ``jsonl`` or ``csv``.

    Args:
        run: The run as stored.
        fmt: ``json``: :func:`run_to_dict`, indented; ``jsonl``/``csv``: the rows of
            :func:`export_rows` (CSV with a header row, columns in :data:`EXPORT_COLUMNS`
            order, empty cells for missing values, ``true``/``false`` for flags, and a
            ``'`` before text starting with ``=``, ``+``, ``-``, ``@``, tab or carriage
            return, so that spreadsheets do not run it as a formula).
        path: Where to write (atomically: an existing file is replaced only by a complete
            export); None to return the text instead.
        prompts: Prompt version id -> (name, version) (see :func:`prompt_refs`), for the
            ``json`` format's ``prompts``/``prompt`` fields.

    Returns:
        The exported text when ``path`` is None, else None.

    Raises:
        ConfigError: ``fmt`` is not a known format.
        ResultsFileError: The file could not be written (nothing partial is left behind).

    Example:
        >>> export_run(run, "csv", Path("results/run.csv"))
        >>> print(export_run(run, "jsonl"))
    """
    if path is not None and fmt == "json":
        write_json_atomic(path, _json_data(run, prompts))
        return None
    text = _render(run, fmt, prompts)
    if path is None:
        return text
    write_text_atomic(path, text)
    return None
