"""``qualspec diff`` labels an answer that failed (an HTTP 500) as an error, with its
message, not "unscored" (issue 19, item 2): text, Markdown and JSON (schema 1.2)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "web"))

from helpers_compare import HTTP_500, seed_compare_runs  # noqa: E402

from helpers_cli import run_cli


@pytest.fixture
def runs(tmp_path: Path) -> tuple[str, str, str]:
    db = f"sqlite:///{tmp_path / 'diff.db'}"
    a, b, _ = seed_compare_runs(db)  # B's every answer of candidate beta: an HTTP 500
    return db, a, b


def test_text_names_the_error_and_its_message(
    runs: tuple[str, str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    db, a, b = runs
    code, out, err = run_cli(capsys, "diff", a, b, "--db", db)
    assert code == 0, err
    row = next(line for line in out.splitlines() if " beta " in line)
    assert row.split()[0] == "error"
    assert "PASS -> ERROR" in row and f"B: error: {HTTP_500}" in row
    assert "unscored" not in row
    assert "1 error, 0 unscored" in out.splitlines()[-1]


def test_markdown_names_the_error(
    runs: tuple[str, str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    db, a, b = runs
    code, out, _ = run_cli(capsys, "diff", a, b, "--db", db, "--format", "markdown")
    assert code == 0
    row = next(line for line in out.splitlines() if "| beta |" in line)
    assert row.startswith("| error |") and f"B: error: {HTTP_500}" in row


def test_json_status_error_with_the_message(
    runs: tuple[str, str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    db, a, b = runs
    code, out, _ = run_cli(capsys, "diff", a, b, "--db", db, "--format", "json")
    assert code == 0
    data = json.loads(out)
    assert data["schema_version"] == "1.2"
    beta = next(c for c in data["changes"] if c["candidate"] == "beta")
    assert (beta["status"], beta["label_a"], beta["label_b"]) == ("error", "PASS", "ERROR")
    assert (beta["error_a"], beta["error_b"]) == (None, HTTP_500)
    assert data["summary"]["error"] == 1 and data["summary"]["unscored"] == 0
    # an answer that failed beside one that passed: the cell keeps its verdict, the error
    # is still named
    epsilon = next(c for c in data["changes"] if c["candidate"] == "epsilon")
    assert (epsilon["status"], epsilon["error_b"]) == ("unchanged", HTTP_500)
