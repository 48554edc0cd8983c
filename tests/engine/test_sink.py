"""The recorder behind a small sink protocol that starts when entered (issue 18, item 5):
a ``Recorder`` that is made but never entered starts no thread and takes no record, and
the engine writes through any :class:`~qualspec.engine.Sink` a session is given."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import pytest

from qualspec import Candidate, Evaluation, ExecuteOptions, Scenario, Session
from qualspec.engine import Recorder, Sink
from qualspec.spec import ExpectCheck, ProviderConfig
from qualspec.store import CacheEntry, JudgmentRecord, ResponseRecord, Store
from qualspec.testing import FakeServer


def _writers() -> set[threading.Thread]:
    return {t for t in threading.enumerate() if t.name == "qualspec-recorder"}


def test_a_recorder_never_entered_starts_no_thread(tmp_path: Path) -> None:
    store = Store.open(f"sqlite:///{tmp_path / 'q.db'}")
    try:
        before = _writers()
        recorder = Recorder(store, "run-1")
        assert isinstance(recorder, Sink)
        assert _writers() == before  # made: nothing runs
        with pytest.raises(RuntimeError, match="not started"):
            recorder.response(cast(ResponseRecord, object()))
        recorder.close()  # nothing to flush

        async def entered() -> tuple[int, int]:
            async with Recorder(store, "run-1") as running:
                during = len(_writers() - before)
                assert running.failure is None
            return during, len(_writers() - before)

        assert asyncio.run(entered()) == (1, 0)  # one thread while entered, none after
    finally:
        store.close()


class MemorySink:
    """Keeps every record in memory (writes nothing to the store)."""

    made: list[MemorySink] = []

    def __init__(
        self,
        store: Store,
        run_id: str,
        *,
        retry_window_s: float,
        on_fatal: Callable[[BaseException], None] | None = None,
    ) -> None:
        self.run_id = run_id
        self.events: list[str] = []
        self.responses: list[ResponseRecord] = []
        self.judgments: list[JudgmentRecord] = []
        self.entries: list[CacheEntry] = []
        self.failure: str | None = None
        MemorySink.made.append(self)

    async def __aenter__(self) -> MemorySink:
        self.events.append("enter")
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.events.append("exit")

    def _took(self, rows: list[Any], record: Any, on_commit: Callable[[], object] | None) -> None:
        assert self.events == ["enter"], "a record before the sink was entered, or after"
        rows.append(record)
        if on_commit is not None:
            on_commit()

    def response(
        self, record: ResponseRecord, on_commit: Callable[[], object] | None = None
    ) -> None:
        self._took(self.responses, record, on_commit)

    def judgment(
        self, record: JudgmentRecord, on_commit: Callable[[], object] | None = None
    ) -> None:
        self._took(self.judgments, record, on_commit)

    def cache(self, entry: CacheEntry, on_commit: Callable[[], object] | None = None) -> None:
        self._took(self.entries, entry, on_commit)


def test_the_engine_writes_through_the_sink_it_is_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_KEY", "sk-test")
    MemorySink.made.clear()
    with FakeServer() as server:
        evaluation = Evaluation(
            name="sink",
            candidates=[Candidate(name="c", model="fake/model")],
            scenarios=[
                Scenario(
                    name="s",
                    prompt="q {{ i }}",
                    inputs=[{"i": 1}, {"i": 2}],
                    expect=[ExpectCheck(max_words=500)],
                )
            ],
            providers={
                "fake": ProviderConfig(
                    type="openai", base_url=server.base_url, api_key_env="FAKE_KEY"
                )
            },
        )

        async def main() -> Any:
            options = ExecuteOptions(judge=False)
            db = f"sqlite:///{tmp_path / 'q.db'}"
            providers = evaluation.providers
            async with Session(
                db=db, options=options, providers=providers, sink=MemorySink
            ) as session:
                outcome = await session.run(evaluation)
                await session.complete("fake/model", "hi")  # the session's own run
                return outcome

        outcome = asyncio.run(main())
    assert outcome.status == "finished"
    run, adhoc = MemorySink.made
    assert run.run_id == outcome.run_id and adhoc.run_id != outcome.run_id
    assert run.events == adhoc.events == ["enter", "exit"]
    assert len(run.responses) == 2 and len(run.judgments) == 2  # two answers, one check each
    assert len(run.entries) == 2  # each answer offered to the cache
    assert [r.kind for r in adhoc.responses] == ["adhoc"]
    # the sink took them: nothing went to the store
    assert outcome.record.responses == [] and outcome.record.judgments == []
