"""Issue 20, the fully cached rerun: the plan is walked once (the run itself), what the
checks and the metadata need is known from the suite's dimensions, and an answer the cache
holds with nothing to evaluate is recorded without a task, in the run's order."""

from __future__ import annotations

import dataclasses
import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from qualspec.cli import main
from qualspec.engine import LazyItems, expand
from qualspec.spec import load_suite
from qualspec.store import Store
from qualspec.testing import FakeServer

KEY_ENV = "FAKE_CACHED_RERUN_KEY"
ROWS = 60


def _write_suite(folder: Path, base_url: str) -> Path:
    rows = folder / "rows.csv"
    rows.write_text("id,q\n" + "".join(f"r{i},question {i}\n" for i in range(ROWS)))
    suite = folder / "suite.yaml"
    suite.write_text(
        "name: rerun\n"
        "providers:\n"
        f"  fake: {{type: openai, base_url: '{base_url}', api_key_env: {KEY_ENV}}}\n"
        "candidates: [{name: a, model: fake/a}, {name: b, model: fake/b}]\n"
        "roles: [{name: expert, preamble: You know.}, {name: novice, system_prompt: Be kind.}]\n"
        "judge: {model: fake/judge}\n"
        "scenarios:\n"
        "  - name: q\n"
        "    prompt: 'Answer: {{ q }}'\n"
        "    inputs: rows.csv\n"
        "    criteria: [Answers the question.]\n",
        encoding="utf-8",
    )
    return suite


@pytest.fixture
def server() -> Iterator[FakeServer]:
    with FakeServer() as srv:
        yield srv


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(KEY_ENV, "sk-cached")
    return tmp_path


def _run(capsys: pytest.CaptureFixture[str], suite: Path, db: str, out: Path) -> str:
    args = ["run", str(suite), "--db", db, "--output", str(out), "--no-judge", "--quiet"]
    with pytest.raises(SystemExit) as exc:
        main(args)
    captured = capsys.readouterr()
    assert exc.value.code == 0, captured.out + captured.err
    return captured.out


def _count_reads(monkeypatch: pytest.MonkeyPatch, path: Path) -> list[int]:
    """Count every opening of ``path`` (the inputs file) from now on."""
    opened = [0]
    real_open = Path.open

    def counting_open(self: Path, *args: Any, **kwargs: Any) -> io.IOBase:
        if self.name == path.name:
            opened[0] += 1
        return real_open(self, *args, **kwargs)  # type: ignore[return-value]

    monkeypatch.setattr(Path, "open", counting_open)
    return opened


def test_a_cached_rerun_reads_its_inputs_file_twice_makes_no_call_and_records_every_answer(
    server: FakeServer,
    workdir: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    suite = _write_suite(workdir, server.base_url)
    db = f"sqlite:///{workdir / 'q.db'}"
    _run(capsys, suite, db, workdir / "first.json")
    cells = ROWS * 2 * 2
    assert server.calls == cells
    opened = _count_reads(monkeypatch, workdir / "rows.csv")
    out = _run(capsys, suite, db, workdir / "again.json")
    # loading the suite scans the file once (rows checked, template variables known, ids
    # unique and, for a file this small, kept for the metadata), and the run reads it
    # once: no pass for the plan's checks, its metadata or the template (there were five)
    assert opened[0] == 2
    assert server.calls == cells, "a fully cached rerun makes no call"
    assert "Calls: 0 candidate" in out
    with Store(db) as store:
        first, again = sorted(store.list_runs(), key=lambda r: r.started_at)
        answers = store.load_run(again.id).responses
        before = {r.key: r for r in store.load_run(first.id).responses}
    assert len(answers) == cells and all(r.cached for r in answers)
    for record in answers:  # the first run's answer, as a cached one of this run
        made = before[record.key]
        assert (record.text, record.input_tokens, record.call_key) == (
            made.text,
            made.input_tokens,
            made.call_key,
        )
        assert (record.attempts, record.cost_usd, record.queue_s) == (0, 0.0, None)
        assert record.input_values == {"id": record.input_id, "q": made.input_values["q"]}


def test_a_plans_survey_and_input_order_are_those_a_walk_finds(tmp_path: Path) -> None:
    suite = _write_suite(tmp_path, "http://127.0.0.1:1/v1")
    for plan in [
        expand(load_suite(suite)),
        expand(load_suite(suite), roles=["novice"], candidates=["b"]),
        expand(load_suite(suite)).with_references("fake/ref"),
    ]:
        assert isinstance(plan.items, LazyItems)
        assert plan.items.survey is not None and plan.items.input_order is not None
        walked = dataclasses.replace(plan, items=list(plan.items))  # no facts: it walks
        assert plan.survey == walked.survey
        ids = {"q": [f"r{i}" for i in range(ROWS)]}
        assert plan.items.input_order() == ids
