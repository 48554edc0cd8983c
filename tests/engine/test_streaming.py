"""A suite of any size in constant memory (issue 20): the plan is a stream, an inputs
file is read row by row, a bounded number of items is in flight, resume looks up what is
done a batch of keys at a time, and a dry run counts without a list of items."""

from __future__ import annotations

import asyncio
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from qualspec import ExecuteOptions, RetryPolicy, Session
from qualspec.engine import LazyItems, estimate, expand
from qualspec.errors import SpecError
from qualspec.spec import StreamedRows, load_suite
from qualspec.testing import FakeServer


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeServer]:
    monkeypatch.setenv("FAKE_KEY", "sk-test")
    with FakeServer(log_requests=False) as srv:
        yield srv


def _suite(tmp: Path, rows: int, base_url: str = "http://127.0.0.1:9/v1", **extra: str) -> Path:
    with (tmp / "rows.csv").open("w", encoding="utf-8") as out:
        out.write("id,q\n")
        for i in range(rows):
            out.write(f"r{i},question {i}\n")
    suite = tmp / "big.yaml"
    suite.write_text(
        "name: big\n"
        f"providers: {{fake: {{type: openai, base_url: '{base_url}', api_key_env: FAKE_KEY}}}}\n"
        "candidates: [{name: c, model: fake/m}]\n"
        "judge: {model: fake/judge}\n"
        "scenarios:\n"
        "  - name: s\n"
        "    prompt: 'Answer {{ q }}'\n"
        "    inputs: rows.csv\n"
        "    criteria: [Answers.]\n" + "".join(f"{k}: {v}\n" for k, v in extra.items()),
        encoding="utf-8",
    )
    return suite


def test_the_plan_is_a_stream_that_reads_its_inputs_file_row_by_row(tmp_path: Path) -> None:
    suite = load_suite(_suite(tmp_path, 1000))
    rows = suite.inputs["s"]
    assert isinstance(rows, StreamedRows) and len(rows) == 1000
    plan = expand(suite)
    assert isinstance(plan.items, LazyItems)
    assert len(plan.items) == 1000  # counted from the suite, nothing expanded
    # the file's later rows are broken now: a plan that had read it whole would not see it
    (tmp_path / "rows.csv").write_text(
        "id,q\nr0,question 0\nr1,question 1\nbroken,row,with,too,many,values\n", encoding="utf-8"
    )
    stream = iter(plan.items)
    first = next(stream)  # the first item is made without reading the rest
    assert (first.input_id, first.messages[-1].content) == ("r0", "Answer question 0")
    assert next(stream).input_id == "r1"
    with pytest.raises(SpecError) as raised:
        next(stream)  # reached only now
    assert "rows.csv:4" in str(raised.value)


def test_loading_and_a_dry_run_of_a_large_csv_hold_no_list_of_rows_or_items(
    tmp_path: Path,
) -> None:
    (tmp_path / "warm").mkdir()  # what the calls import is loaded before measuring
    estimate(expand(load_suite(_suite(tmp_path / "warm", 10))), None, judge=True, calibrate=False)
    path = _suite(tmp_path, 20_000)
    tracemalloc.start()
    try:
        suite = load_suite(path)
        plan = expand(suite)
        counted = estimate(plan, None, judge=True, calibrate=False)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert counted.candidate_calls == 20_000
    assert counted.judge_calls == 20_000  # one criterion per answer
    assert plan.rows == 20_000
    # 20,000 rows and work items held at once take about 30 MB; the bit set that finds
    # repeated ids takes 8 MB
    assert peak < 15 * 1024 * 1024, f"peak {peak / 2**20:.1f} MB"


def test_a_repeated_id_deep_in_a_streamed_file_is_still_found(tmp_path: Path) -> None:
    path = _suite(tmp_path, 5000)
    with (tmp_path / "rows.csv").open("a", encoding="utf-8") as out:
        out.write("r17,again\n")
    with pytest.raises(SpecError) as raised:
        load_suite(path)
    assert "rows.csv:5002" in str(raised.value)
    assert "duplicate input id 'r17' (first at line 19)" in str(raised.value)


@pytest.mark.asyncio
async def test_a_bounded_number_of_items_is_in_flight(server: FakeServer, tmp_path: Path) -> None:
    suite = load_suite(_suite(tmp_path, 400, server.base_url))
    options = ExecuteOptions(judge=False, max_concurrency=4, max_in_flight=20)
    most_tasks = 0

    def progress(kind: str, n: int) -> None:
        nonlocal most_tasks
        most_tasks = max(most_tasks, len(asyncio.all_tasks()))

    async with Session(db=f"sqlite:///{tmp_path / 'q.db'}", options=options) as session:
        outcome = await session.run(suite, progress=progress)
    assert outcome.stats.candidate_calls == 400
    assert len(outcome.record.responses) == 400
    assert server.max_in_flight <= 4
    # one task per item in flight, one per call (its timeout) and a few of the session's
    # own: never one per cell
    assert 0 < most_tasks <= 20 + 4 + 10


@pytest.mark.asyncio
async def test_resume_looks_up_what_is_done_a_batch_of_keys_at_a_time(
    server: FakeServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    suite = load_suite(_suite(tmp_path, 1200, server.base_url))
    options = ExecuteOptions(judge=False, retry=RetryPolicy(max_attempts=1))
    server.fail_next(30, status=400)  # not retried: 30 cells end as errors
    async with Session(db=f"sqlite:///{tmp_path / 'q.db'}", options=options) as session:
        first = await session.run(suite)
        assert sum(r.error is not None for r in first.record.responses) == 30
        store = session.store
        asked: list[int] = []
        lookup = store.done_responses

        def spy(run_id: str, keys: Any) -> Any:
            keys = list(keys)
            asked.append(len(keys))
            return lookup(run_id, keys)

        monkeypatch.setattr(store, "done_responses", spy)
        calls = server.calls
        again = await session.run(suite, resume=first.run_id)
    assert server.calls - calls == 30  # only the failed cells are asked again
    assert again.stats.candidate_calls == 30
    assert all(r.error is None for r in again.record.responses)
    assert len(again.record.responses) == 1200
    assert sum(asked) == 1200 and len(asked) >= 3 and max(asked) <= 500


@pytest.mark.asyncio
async def test_a_large_run_is_summarised_and_its_results_file_streamed(
    server: FakeServer, tmp_path: Path
) -> None:
    import json

    from qualspec.report import write_results_stream

    suite = load_suite(_suite(tmp_path, 30, server.base_url))
    options = ExecuteOptions(calibrate=False, summarise_above=10)
    async with Session(db=f"sqlite:///{tmp_path / 'q.db'}", options=options) as session:
        outcome = await session.run(suite)
        assert outcome.summarised and outcome.status == "finished"
        assert outcome.record.responses == [] and outcome.record.summary.id == outcome.run_id
        write_results_stream(session.store, outcome.run_id, tmp_path / "out.json")
    data = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
    assert data["summary"]["large_run"] is True
    counts = data["summary"]["counts"]
    assert (counts["responses"], counts["judgments"], counts["errors"]) == (30, 30, 0)
    assert len(data["responses"]) == 30
    assert sorted(r["input_id"] for r in data["responses"]) == sorted(f"r{i}" for i in range(30))
    assert all(len(r["judgments"]) == 1 for r in data["responses"])


def test_a_streamed_plan_with_reference_answers_is_counted_without_expanding(
    tmp_path: Path,
) -> None:
    (tmp_path / "rows.csv").write_text("id,q\na,x\nb,y\nc,z\n", encoding="utf-8")
    path = tmp_path / "graded.yaml"
    path.write_text(
        "name: graded\n"
        "candidates: [{name: bot, model: fake/bot}, {name: bot2, model: fake/bot}]\n"
        "roles: [{name: r1, preamble: hi}, {name: r2, preamble: ho}]\n"
        "scenarios:\n"
        "  - name: profile\n"
        "    prompt: 'Profile of {{ q }} as JSON'\n"
        "    inputs: rows.csv\n"
        "    criteria: [ok]\n"
        "    reference: {model: fake/ref}\n"
        "    output_schema: {fields: [{name: name}]}\n"
        "providers:\n"
        "  fake: {type: openai, base_url: 'http://127.0.0.1:9', api_key_env: K}\n",
        encoding="utf-8",
    )
    plan = expand(load_suite(path))
    # 3 rows x 2 roles x 2 candidates, and one reference per row and preamble
    assert len(plan.items) == 12 + 6
    kinds = [(i.kind, i.input_id) for i in plan.items]
    assert len(kinds) == 18 and kinds[0] == ("reference", "a")
    assert sum(kind == "reference" for kind, _ in kinds) == 6


async def _run_peak(server: FakeServer, tmp: Path, runs: int) -> int:
    """The peak of memory traced while a run of 50 input rows x ``runs`` cells executes."""
    tmp.mkdir()
    suite = load_suite(_suite(tmp, 50, server.base_url, runs_per_temperature=str(runs)))
    options = ExecuteOptions(judge=False, max_concurrency=8, max_in_flight=64, summarise_above=20)
    async with Session(db=f"sqlite:///{tmp / 'q.db'}", options=options) as session:
        calls = server.calls
        tracemalloc.start()
        try:
            outcome = await session.run(suite)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert outcome.summarised and outcome.status == "finished"
    assert outcome.stats.candidate_calls == server.calls - calls == 50 * runs
    return peak


@pytest.mark.asyncio
@pytest.mark.timeout(900)  # 1,700 calls traced by tracemalloc: minutes on a loaded machine
async def test_a_run_holds_the_same_memory_at_ten_times_the_cells(
    server: FakeServer, tmp_path: Path
) -> None:
    await _run_peak(server, tmp_path / "warm", 1)  # imports, first use
    small = await _run_peak(server, tmp_path / "small", 3)
    large = await _run_peak(server, tmp_path / "large", 30)
    # the same input rows (the store encodes each row once, in a memo of the last 4,096),
    # ten times the cells: a run that kept something per cell (a record, a key, a task)
    # would hold ~10x; what is held is the window of items in flight and the batch being
    # written, whatever the size
    assert large < 1.5 * small + 512 * 1024, f"{small / 2**20:.2f} MB -> {large / 2**20:.2f} MB"
