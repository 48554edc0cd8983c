"""A cached rerun on a SQLite file has the store copy its answers (issue 20: the cached
rerun of a million cells): the engine hands the recorder each cached cell's identity and
cache key (``copy_cached``), and one ``INSERT ... SELECT ... JOIN cache_entries`` makes
the response rows. The rows must be exactly those the record path makes."""

from __future__ import annotations

import asyncio
import json
import shutil
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from qualspec import Candidate, Evaluation, ExecuteOptions, Scenario, Session
from qualspec.engine import Recorder, RunOutcome
from qualspec.spec import ProviderConfig
from qualspec.testing import FakeServer


class Counting(Recorder):
    """The run's recorder, counting the cached answers given as records and as copies."""

    made: list[Counting] = []

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.records = self.copies = 0
        Counting.made.append(self)

    def responses(self, records: Any, on_commit: Any = None) -> None:
        self.records += len(records)
        super().responses(records, on_commit)

    def copy_cached(self, cells: Any, on_commit: Any = None) -> None:
        self.copies += len(cells)
        super().copy_cached(cells, on_commit)


class NoCopy(Counting):
    """A recorder that does not copy (what a PostgreSQL store's recorder does)."""

    @property
    def copies_cached(self) -> bool:
        return False


def _evaluation(base_url: str, rows: int) -> Evaluation:
    return Evaluation(
        name="copy",
        candidates=[
            Candidate(name="a", model="fake/model-a"),
            Candidate(name="b", model="fake/model-b"),
        ],
        temperatures=[0.0, 0.5],
        scenarios=[
            Scenario(
                name="s",
                prompt="q {{ i }} {{ note }}",
                inputs=[{"i": i, "note": f"n{i % 3}"} for i in range(rows)],
            ),
            Scenario(name="plain", prompt="hello"),
        ],
        providers={
            "fake": ProviderConfig(type="openai", base_url=base_url, api_key_env="FAKE_COPY_KEY")
        },
    )


def _run(db: Path, evaluation: Evaluation, sink: Any, prices: Path) -> RunOutcome:
    async def main() -> RunOutcome:
        async with Session(
            db=f"sqlite:///{db}",
            options=ExecuteOptions(judge=False),
            providers=evaluation.providers,
            sink=sink,
            prices=prices,
        ) as session:
            return await session.run(evaluation)

    return asyncio.run(main())


def _rows(db: Path, run_id: str) -> tuple[list[dict[str, Any]], set[Any]]:
    """A run's answer rows (in insertion order), each column as its value and the class
    SQLite stored it as, and every stored input row."""
    conn = sqlite3.connect(db)
    try:
        names = [r[1] for r in conn.execute("PRAGMA table_info(responses)")]
        both = ", ".join(f"{n}, typeof({n})" for n in names)
        query = f"SELECT {both} FROM responses WHERE run_id = ? ORDER BY id"
        rows = [
            {n: (r[2 * i], r[2 * i + 1]) for i, n in enumerate(names)}
            for r in conn.execute(query, (run_id,))
        ]
        inputs = set(conn.execute("SELECT hash, row_json FROM input_rows"))
    finally:
        conn.close()
    return rows, inputs


@pytest.fixture
def prices(tmp_path: Path) -> Path:
    path = tmp_path / "prices.json"
    price = {"input": 1000.0, "output": 2000.0}
    path.write_text(json.dumps({"fake/model-a": price, "fake/model-b": price}))
    return path


def test_the_copy_makes_the_rows_the_record_path_makes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, prices: Path
) -> None:
    monkeypatch.setenv("FAKE_COPY_KEY", "sk-test")
    first, copied, recorded = (tmp_path / n for n in ("first.db", "copied.db", "recorded.db"))
    with FakeServer() as server:
        evaluation = _evaluation(server.base_url, 25)
        _run(first, _evaluation(server.base_url, 20), None, prices)  # 5 rows left uncached
        shutil.copy(first, copied)
        shutil.copy(first, recorded)
        calls = server.calls
        Counting.made.clear()
        began = datetime.now(UTC)
        by_copy = _run(copied, evaluation, Counting, prices)
        ended = datetime.now(UTC)
        by_record = _run(recorded, evaluation, NoCopy, prices)
        assert server.calls == calls + 2 * 20  # each rerun: the 5 new rows' four cells
    copier, recorder = Counting.made
    assert (copier.copies, copier.records) == (84, 0)  # 21 rows, 2 candidates, 2 temperatures
    assert (recorder.copies, recorder.records) == (0, 84)
    assert by_copy.status == by_record.status == "finished"
    assert by_copy.stats == by_record.stats
    assert by_copy.stats.cached_candidate == 84 and by_copy.stats.saved_usd > 0
    rows, inputs = _rows(copied, by_copy.run_id)
    rows_then, inputs_then = _rows(recorded, by_record.run_id)
    assert len(rows) == len(rows_then) == 104 and inputs == inputs_then
    cached = 0
    by_key = {then["key"]: then for then in rows_then}
    for row in rows:
        then = by_key[row["key"]]
        # what differs between two runs: their ids, the time, a real call's timings (and
        # the row ids: answers of calls and cached ones are written as each is ready)
        differs = {"id", "run_id", "created_at"}
        if not row["cached"][0]:
            differs |= {"latency_s", "queue_s"}
        else:
            cached += 1
            at = datetime.fromisoformat(row["created_at"][0]).replace(tzinfo=UTC)
            assert began - timedelta(seconds=1) <= at <= ended  # while the run ran
        assert {k: v for k, v in row.items() if k not in differs} == {
            k: v for k, v in then.items() if k not in differs
        }
        assert row["created_at"][1] == then["created_at"][1] == "text"
    assert cached == 84


def test_a_store_that_cannot_copy_is_given_records(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, prices: Path
) -> None:
    """A store on SQLAlchemy (PostgreSQL's path; here a SQLite file on it) has no
    ``copy_cached``: its cached answers are records, as before."""
    monkeypatch.setenv("FAKE_COPY_KEY", "sk-test")
    monkeypatch.setenv("QUALSPEC_SQLITE_DRIVER", "sqlalchemy")
    db = tmp_path / "q.db"
    with FakeServer() as server:
        evaluation = _evaluation(server.base_url, 5)
        _run(db, evaluation, None, prices)
        calls = server.calls
        Counting.made.clear()
        again = _run(db, evaluation, Counting, prices)
        assert server.calls == calls
    (recorder,) = Counting.made
    assert not recorder.copies_cached
    assert (recorder.copies, recorder.records) == (0, 24)
    assert again.stats.cached_candidate == 24
    assert all(r.cached for r in again.record.responses)
