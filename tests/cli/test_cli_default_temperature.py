"""Issue 7, item 20: a suite without ``temperatures:`` sends no temperature (the provider's
default, as the Ruby gem does) and every report says "default"; explicit temperatures are
sent as given. End to end, in process, against the fake server."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest
from test_cli_reports import (  # the CLI report tests' helpers and fixtures
    SIMPLE,
    only_run_id,
    qualspec,
    results_files,
    server,
    workdir,
    write_suite,
)

from qualspec.store import Store
from qualspec.testing import FakeServer

__all__ = ["server", "workdir"]  # fixtures, imported to be used here

QUESTION = "What is 2+2?"


def candidate_bodies(server: FakeServer) -> list[dict[str, Any]]:
    """The bodies of the candidate calls (the judge's prompts quote the question too, but
    the candidate's last message is the question alone)."""
    out = []
    for _t, _headers, body in server.request_log:
        messages = body.get("messages") or []
        if messages and messages[-1].get("content") == QUESTION:
            out.append(body)
    return out


def all_run_ids(work: Path) -> list[str]:
    with Store.open(f"sqlite:///{work.parent / 'qualspec-home' / 'qualspec.db'}") as store:
        return [run.id for run in store.list_runs()]


def test_no_temperatures_sends_none_and_every_report_says_default(
    server: FakeServer, workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = write_suite(workdir / "s.yaml", server.base_url, scenarios=SIMPLE)

    code, out, err = qualspec(capsys, "run", str(suite), "--dry-run")
    assert code == 0, err
    assert "temperatures 1: default (none sent" in out
    assert server.calls == 0

    code, out, err = qualspec(capsys, "run", str(suite), "--show-responses", "--no-calibration")
    assert code == 0, out + err
    (body,) = candidate_bodies(server)
    assert "temperature" not in body  # the provider's default
    assert "Temperature: default" in out
    assert "@default: Answer to: What is 2+2?" in out
    run_id = only_run_id(workdir)

    code, shown, err = qualspec(capsys, "runs", "show", run_id, "--show-responses")
    assert code == 0, err
    assert "Temperature: default" in shown and "@default:" in shown

    (written,) = results_files(workdir)
    for data in (
        json.loads(written.read_text(encoding="utf-8")),
        json.loads(qualspec(capsys, "runs", "export", run_id, "--format", "json")[1]),
    ):
        (response,) = data["responses"]
        assert response["temperature"] is None
        assert response["effective_temperature"] is None  # a remote server's: unknown
        assert data["run"]["metadata"]["dimensions"]["temperatures"] == [None]
    lines = qualspec(capsys, "runs", "export", run_id, "--format", "jsonl")[1].splitlines()
    assert {json.loads(line)["temperature"] for line in lines} == {None}
    exported = qualspec(capsys, "runs", "export", run_id, "--format", "csv")[1]
    rows = list(csv.DictReader(io.StringIO(exported)))
    assert rows and {row["temperature"] for row in rows} == {""}

    # an explicit 0.0 is still sent, and diff tells the two apart
    code, out, err = qualspec(capsys, "run", str(suite), "--temps", "0", "--no-calibration")
    assert code == 0, out + err
    assert [b.get("temperature") for b in candidate_bodies(server)] == [None, 0.0]
    assert "temperature" in candidate_bodies(server)[1]
    newest, oldest = all_run_ids(workdir)[:2]
    code, text, err = qualspec(capsys, "diff", oldest, newest)
    assert code == 0, err
    assert "default" in text and "0.0" in text
    code, text, err = qualspec(capsys, "diff", oldest, newest, "--format", "json")
    assert code == 0, err
    temps = [change["temperature"] for change in json.loads(text)["changes"]]
    assert sorted(temps, key=lambda t: (t is not None, t or 0.0)) == [None, 0.0]


def test_explicit_temperatures_are_sent_as_given(
    server: FakeServer, workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = write_suite(
        workdir / "s.yaml", server.base_url, scenarios=SIMPLE, extra="temperatures: [0.0, 0.7]\n"
    )
    code, out, err = qualspec(capsys, "run", str(suite), "--no-calibration")
    assert code == 0, out + err
    assert sorted(b["temperature"] for b in candidate_bodies(server)) == [0.0, 0.7]
    assert "Temp 0" in out and "Temp 0.7" in out and "default" not in out
