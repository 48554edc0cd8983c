"""The input row an answer was asked with travels with it (issue 19): the results file
lists it as ``input_values`` (read back on import), JSONL as an object and CSV as its
JSON; the store's hash of it is never exported."""

from __future__ import annotations

import csv
import io
import json
from datetime import UTC, datetime

from qualspec.report import export_run, run_from_dict, run_to_dict
from qualspec.store import ResponseRecord, RunRecord, RunSummary

ROW = {"id": "acme", "company": "=cmd|' /C calc'!A0", "year": 1947}


def _run() -> RunRecord:
    def response(key: str, values: dict[str, object] | None) -> ResponseRecord:
        return ResponseRecord(
            key=key,
            candidate="c",
            role=None,
            scenario="s",
            input_id=None if values is None else "acme",
            temperature=0.0,
            effective_temperature=0.0,
            run_index=0,
            provider="openai",
            model="m",
            text="answer",
            input_values=values,
            input_hash=None if values is None else "f" * 64,
        )

    when = datetime(2026, 1, 1, tzinfo=UTC)
    summary = RunSummary("run-1", "suite", "h", "finished", when, when)
    return RunRecord(summary, responses=[response("k0", dict(ROW)), response("k1", None)])


def test_the_results_file_carries_the_row_and_reads_it_back() -> None:
    data = run_to_dict(_run())
    first, second = data["responses"]
    assert first["input_values"] == ROW and second["input_values"] is None
    assert "input_hash" not in first
    back = run_from_dict(json.loads(json.dumps(data)), source="results.json")
    assert [r.input_values for r in back.responses] == [ROW, None]


def test_jsonl_and_csv_list_the_row_of_each_answer() -> None:
    run = _run()
    lines = [json.loads(line) for line in (export_run(run, "jsonl") or "").splitlines()]
    assert [row["input_values"] for row in lines] == [ROW, None]
    table = list(csv.DictReader(io.StringIO(export_run(run, "csv") or "")))
    assert json.loads(table[0]["input_values"]) == ROW  # JSON: never read as a formula
    assert table[1]["input_values"] == ""
    assert "input_hash" not in table[0]
