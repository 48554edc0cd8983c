"""export_run: json, jsonl and csv shapes; writing to a path atomically."""

from __future__ import annotations

import csv
import io
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from qualspec.errors import ConfigError
from qualspec.report import (
    EXPORT_COLUMNS,
    ResultsFileError,
    export_rows,
    export_run,
    read_results_file,
    run_to_dict,
)
from qualspec.store import JudgmentRecord, ResponseRecord, RunRecord, RunSummary


def sample_run() -> RunRecord:
    def response(key: str, **kw: object) -> ResponseRecord:
        fields: dict[str, object] = {
            "key": key,
            "candidate": "gpt",
            "role": "eng",
            "scenario": "s1",
            "input_id": None,
            "temperature": 0.7,
            "effective_temperature": 0.7,
            "run_index": 0,
            "provider": "openai",
            "model": "gpt-4o",
            "text": 'multi\nline, with "quotes"',
            "input_tokens": 5,
            "output_tokens": 7,
            "cost_usd": 0.001,
        }
        fields.update(kw)
        return ResponseRecord(**fields)  # type: ignore[arg-type]

    def judgment(key: str, criterion: str, score: float | None, **kw: object) -> JudgmentRecord:
        return JudgmentRecord(
            response_key=key,
            criterion=criterion,
            judge_key=f"j-{key}-{criterion}",
            judge_model="local/smollm2",
            threshold=7.0,
            score=score,
            passed=None if score is None else score >= 7,
            **kw,  # type: ignore[arg-type]
        )

    summary = RunSummary(
        id="run-9",
        suite_name="suite",
        suite_hash="h",
        status="finished",
        started_at=datetime(2025, 1, 2, tzinfo=UTC),
        finished_at=None,
    )
    return RunRecord(
        summary=summary,
        responses=[
            response("k1"),
            response("k2", role=None, run_index=1, text=None, error="HTTP 500", cached=True),
            response("k3", input_id="row-1"),
        ],
        judgments=[
            judgment("k1", "clarity", 8.0, reasoning="ok", cost_usd=0.002),
            judgment("k1", "safety", None, unscored_reason="no score"),
            judgment("k3", "clarity", 4.5),
        ],
    )


def test_rows() -> None:
    rows = export_rows(sample_run())
    # two judgment rows for k1, one row for the unjudged error k2, one judgment row for k3
    assert [(r["response_key"], r["criterion"]) for r in rows] == [
        ("k1", "clarity"),
        ("k1", "safety"),
        ("k2", None),
        ("k3", "clarity"),
    ]
    assert all(tuple(r) == EXPORT_COLUMNS for r in rows)
    assert rows[0]["score"] == 8.0 and rows[0]["passed"] is True and rows[0]["cost_usd"] == 0.001
    assert rows[1]["unscored_reason"] == "no score" and rows[1]["score"] is None
    assert rows[2]["response_error"] == "HTTP 500" and rows[2]["role"] is None
    assert rows[3]["input_id"] == "row-1" and rows[3]["passed"] is False
    assert {r["run_id"] for r in rows} == {"run-9"}


def test_jsonl() -> None:
    text = export_run(sample_run(), "jsonl", None)
    assert text is not None and text.endswith("\n")
    lines = text.splitlines()
    assert len(lines) == 4
    parsed = [json.loads(line) for line in lines]
    assert parsed == export_rows(sample_run())
    assert list(parsed[0]) == list(EXPORT_COLUMNS)


def test_csv() -> None:
    text = export_run(sample_run(), "csv", None)
    assert text is not None
    assert text.splitlines()[0] == ",".join(EXPORT_COLUMNS)
    rows = list(csv.DictReader(io.StringIO(text)))
    assert len(rows) == 4
    assert rows[0]["score"] == "8.0" and rows[0]["passed"] == "true"
    assert rows[0]["text"] == 'multi\nline, with "quotes"'  # quoted, survives the round trip
    assert rows[1]["score"] == "" and rows[1]["passed"] == ""
    assert rows[2]["criterion"] == "" and rows[2]["cached"] == "true"
    assert rows[2]["role"] == "" and rows[2]["response_error"] == "HTTP 500"
    assert rows[3]["passed"] == "false" and rows[3]["temperature"] == "0.7"


def test_json_is_the_results_file(tmp_path: Path) -> None:
    run = sample_run()
    text = export_run(run, "json", None)
    assert text is not None and json.loads(text) == run_to_dict(run)
    path = tmp_path / "run.json"
    assert export_run(run, "json", path) is None
    assert read_results_file(path) == run


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_write_to_path(tmp_path: Path, fmt: str) -> None:
    path = tmp_path / "exports" / f"run.{fmt}"
    assert export_run(sample_run(), fmt, path) is None  # type: ignore[arg-type]
    assert path.read_text(encoding="utf-8") == export_run(sample_run(), fmt, None)  # type: ignore[arg-type]
    assert [p.name for p in path.parent.iterdir()] == [path.name]


def test_failed_export_leaves_existing_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    path = tmp_path / "run.csv"
    path.write_text("previous export\n", encoding="utf-8")

    def fail(*args: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(ResultsFileError, match="No space left on device"):
        export_run(sample_run(), "csv", path)
    monkeypatch.undo()
    assert path.read_text(encoding="utf-8") == "previous export\n"
    assert [p.name for p in tmp_path.iterdir()] == ["run.csv"]


def test_unknown_format() -> None:
    with pytest.raises(ConfigError, match="use json, jsonl or csv"):
        export_run(sample_run(), "xml", None)  # type: ignore[arg-type]


def test_csv_cells_that_look_like_formulas_are_quoted() -> None:
    run = sample_run()
    starts = ["=1+1", "+SUM(A1)", "-2+3", "@cmd", "\tx", "\rx"]
    for response, text in zip(run.responses, starts, strict=False):
        response.text = text
    run.responses[0].candidate = '=HYPERLINK("http://x")'
    rows = list(csv.DictReader(io.StringIO(export_run(run, "csv") or "")))
    texts = [row["text"] for row in rows]
    assert "'=1+1" in texts and "'+SUM(A1)" in texts and "'-2+3" in texts
    assert rows[0]["candidate"] == '\'=HYPERLINK("http://x")'
    assert all((cell or " ")[0] not in "=+-@\t\r" for row in rows for cell in row.values())
    # numbers stay numbers; JSON Lines keeps the text as it is
    assert rows[0]["score"] == "8.0"
    assert json.loads((export_run(run, "jsonl") or "").splitlines()[0])["text"] == "=1+1"
