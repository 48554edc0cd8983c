"""Issue 17, item 24: small output faults. ``prompts diff`` ends with a newline, the Lab
says so when no iteration was scored, the dry run of a suite without inputs does not count
its scenarios as input rows, and ``cache stats`` prints a table (JSON behind ``--json``).
In process, against the fake server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_cli_reports import SIMPLE, qualspec, server, workdir, write_suite

from qualspec.store import Store
from qualspec.testing import FakeServer, LabScript

__all__ = ["server", "workdir"]  # fixtures, imported to be used here


def _db(work: Path) -> str:
    return f"sqlite:///{work.parent / 'qualspec-home' / 'qualspec.db'}"


def test_prompts_diff_ends_with_a_newline_even_when_the_texts_do_not(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with Store.open(_db(workdir)) as store:
        store.prompt_version("p", "first line\nold last line")  # no final newline
        store.prompt_version("p", "first line\nnew last line\n")
    code, out, err = qualspec(capsys, "prompts", "diff", "p", "1", "2", "--db", _db(workdir))
    assert code == 0, err
    assert out.endswith("\n")
    lines = out.splitlines()
    assert lines[:2] == ["--- p v1", "+++ p v2"]
    # each changed line stands alone (never run into the next one)
    assert "-old last line" in lines and "+new last line" in lines


def test_a_dry_run_without_inputs_says_none(
    server: FakeServer, workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    two = SIMPLE + '  - name: t\n    prompt: "What is 3+3?"\n    criteria: ["is an answer"]\n'
    suite = write_suite(workdir / "s.yaml", server.base_url, scenarios=two)
    code, out, err = qualspec(capsys, "run", str(suite), "--dry-run")
    assert code == 0, err
    assert "inputs       none" in out
    assert "rows over all scenarios" not in out
    assert server.calls == 0


def test_a_dry_run_with_inputs_counts_the_rows(
    server: FakeServer, workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = (
        '  - name: s\n    prompt: "What is {{ q }}?"\n    criteria: ["is an answer"]\n'
        "    inputs: [{id: a, q: '2+2'}, {id: b, q: '3+3'}, {id: c, q: '4+4'}]\n"
        '  - name: t\n    prompt: "Hello"\n    criteria: ["is an answer"]\n'
    )
    suite = write_suite(workdir / "s.yaml", server.base_url, scenarios=rows)
    code, out, err = qualspec(capsys, "run", str(suite), "--dry-run")
    assert code == 0, err
    assert "inputs       3 (rows over all scenarios)" in out


def test_cache_stats_prints_a_table_and_json_on_request(
    server: FakeServer, workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = _db(workdir)
    code, out, _ = qualspec(capsys, "cache", "stats", "--db", db)
    assert code == 0 and "The cache is empty" in out
    suite = write_suite(workdir / "s.yaml", server.base_url, scenarios=SIMPLE)
    assert qualspec(capsys, "run", str(suite), "--quiet", "--no-calibration")[0] == 0

    code, out, err = qualspec(capsys, "cache", "stats", "--db", db)
    assert code == 0, err
    assert not out.lstrip().startswith("{")
    header = next(line for line in out.splitlines() if "entries" in line)
    for column in ("kind", "entries", "expired", "size", "oldest (UTC)", "newest (UTC)"):
        assert column in header
    total = next(line for line in out.splitlines() if "total" in line)
    assert "candidate" in out and " B" in total

    code, out, err = qualspec(capsys, "cache", "stats", "--json", "--db", db)
    assert code == 0, err
    stats = json.loads(out)
    assert stats["entries"] >= 1 and "candidate" in stats["kinds"]


def test_the_lab_says_no_iteration_was_scored(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = LabScript(scores=["I cannot say."])  # every verdict unreadable: nothing scored
    with FakeServer(judge_reply=script.evaluate, answer=script.generate) as srv:
        monkeypatch.setenv("OPENAI_BASE_URL", srv.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-cli-lab")
        argv = ["lab", "Explain tides", "--format", "Two sentences", "--criteria", "Moon"]
        argv += ["--model", "openai/gen", "--iter-max", "2", "--db", f"sqlite:///{tmp_path}/l.db"]
        code, out, err = qualspec(capsys, *argv)
    assert code == 1, out + err
    assert "iteration - of" not in out
    assert "no iteration was scored (2 tried): did not meet the threshold 0.8" in out
