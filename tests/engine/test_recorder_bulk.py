"""Cached answers are written in large transactions (issue 20, the cached rerun of a
million cells): a batch of them is handed to the recorder together (``responses``), and
the recorder writes what is queued of them in one transaction of up to 10,000 rows, where
answers given one by one (each holding a call slot) are written 500 at a time.

The store's first write is held until the rest is queued, so what each write finds
queued is known: nothing here depends on timing."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from qualspec import Candidate, Evaluation, ExecuteOptions, Scenario, Session
from qualspec.engine import Recorder
from qualspec.spec import ProviderConfig
from qualspec.store import CacheEntry, ResponseRecord, Store
from qualspec.testing import FakeServer

DEADLINE_S = 30.0  # generous: only ever waited out when a test fails


def _record(i: int) -> ResponseRecord:
    return ResponseRecord(
        key=f"k{i:05d}",
        candidate="c",
        role=None,
        scenario="s",
        input_id=f"r{i}",
        temperature=None,
        effective_temperature=None,
        run_index=0,
        provider="p",
        model="m",
        text=f"answer {i}",
        attempts=0,
        cached=True,
    )


def _write_sizes(tmp_path: Path, give: Any) -> tuple[list[int], int, Store, str]:
    """Start a recorder, hold its first write, ``give(recorder)`` meanwhile, then let it
    write: the size of every write, how many ``on_commit`` callbacks ran."""
    store = Store(f"sqlite:///{tmp_path / 'q.db'}")
    run_id = store.create_run("s", "h", {})
    sizes: list[int] = []
    entered, release = threading.Event(), threading.Event()
    real = store.record_responses

    def held(run: str, records: Any) -> None:
        sizes.append(len(records))
        if len(sizes) == 1:
            entered.set()
            assert release.wait(DEADLINE_S)
        real(run, records)

    store.record_responses = held  # type: ignore[method-assign]
    committed = [0]

    def done() -> None:
        committed[0] += 1

    async def main() -> None:
        async with Recorder(store, run_id) as recorder:
            recorder.response(_record(99_999), on_commit=done)
            assert await asyncio.to_thread(entered.wait, DEADLINE_S)
            give(recorder, done)
            release.set()

    asyncio.run(main())
    return sizes, committed[0], store, run_id


def test_answers_given_together_are_written_in_one_large_transaction(tmp_path: Path) -> None:
    def give(recorder: Recorder, done: Any) -> None:
        for start in range(0, 1800, 600):  # three batches of cached answers
            recorder.responses([_record(i) for i in range(start, start + 600)], on_commit=done)

    sizes, committed, store, run_id = _write_sizes(tmp_path, give)
    try:
        assert sizes == [1, 1800]  # one transaction for all three batches
        assert committed == 1 + 3  # one callback per batch, once it is durable
        assert len(store.response_keys(run_id)) == 1801
    finally:
        store.close()


def test_answers_given_one_by_one_are_still_written_500_at_a_time(tmp_path: Path) -> None:
    def give(recorder: Recorder, done: Any) -> None:
        for i in range(1200):
            recorder.response(_record(i), on_commit=done)

    sizes, committed, store, run_id = _write_sizes(tmp_path, give)
    try:
        assert sizes == [1, 500, 500, 200]  # each holds a call slot: small commits
        assert committed == 1201
        assert len(store.response_keys(run_id)) == 1201
    finally:
        store.close()


class OneByOne:
    """A sink without ``responses`` (its answers kept in a list of that name)."""

    made: list[OneByOne] = []

    def __init__(self, store: Store, run_id: str, **_: Any) -> None:
        self.responses: list[ResponseRecord] = []
        self.failure: str | None = None
        OneByOne.made.append(self)

    async def __aenter__(self) -> OneByOne:
        return self

    async def __aexit__(self, *exc: object) -> None:
        pass

    def response(self, record: ResponseRecord, on_commit: Any = None) -> None:
        self.responses.append(record)
        if on_commit is not None:
            on_commit()

    def judgment(self, record: Any, on_commit: Any = None) -> None:
        if on_commit is not None:
            on_commit()

    cache = judgment


def test_a_sink_without_responses_is_given_cached_answers_one_by_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_BULK_KEY", "sk-test")
    OneByOne.made.clear()
    with FakeServer() as server:
        evaluation = Evaluation(
            name="bulk",
            candidates=[Candidate(name="c", model="fake/model")],
            scenarios=[
                Scenario(name="s", prompt="q {{ i }}", inputs=[{"i": i} for i in range(30)])
            ],
            providers={
                "fake": ProviderConfig(
                    type="openai", base_url=server.base_url, api_key_env="FAKE_BULK_KEY"
                )
            },
        )
        db = f"sqlite:///{tmp_path / 'q.db'}"

        async def main() -> Any:
            options = ExecuteOptions(judge=False)
            async with Session(db=db, options=options, providers=evaluation.providers) as first:
                await first.run(evaluation)  # the store's recorder: the cache is filled
            async with Session(
                db=db, options=options, providers=evaluation.providers, sink=OneByOne
            ) as again:
                return await again.run(evaluation)

        outcome = asyncio.run(main())
        assert server.calls == 30  # the second run: every answer from the cache
    (sink,) = OneByOne.made
    assert outcome.status == "finished"
    assert len(sink.responses) == 30 and all(r.cached for r in sink.responses)
    assert all(r.attempts == 0 and r.cost_usd == 0.0 for r in sink.responses)


def _cache_entry(kind: str) -> CacheEntry:
    """A cache entry of ``kind`` with every answer field set."""
    return CacheEntry(
        key="ck",
        kind=kind,
        provider="p",
        model="m",
        text="hello",
        finish_reason="stop",
        input_tokens=3,
        output_tokens=5,
        effective_temperature=0.5,
    )


def test_a_record_from_a_cache_entry_is_what_from_reply_makes_of_its_cached_reply() -> None:
    from datetime import UTC, datetime

    from qualspec.engine import Reply

    entry = _cache_entry("candidate")
    identity: dict[str, Any] = {
        "key": "k",
        "candidate": "c",
        "provider": "p",
        "model": "m",
        "scenario": "s",
        "role": "r",
        "input_id": "i",
        "temperature": 0.5,
        "run_index": 2,
        "kind": "candidate",
        "prompt_versions": {"scenario_prompt:1": 4},
        "created_at": datetime(2026, 11, 28, tzinfo=UTC),
        "input_values": {"q": "x"},
    }
    reply = Reply.from_cache(entry, key="ck", queue_s=None)
    made = ResponseRecord.from_cache_entry(
        entry,
        identity=SimpleNamespace(**identity),
        prompt_versions=identity.pop("prompt_versions"),
        created_at=identity.pop("created_at"),
    )
    assert made == ResponseRecord.from_reply(
        reply,
        call_key="ck",
        prompt_versions={"scenario_prompt:1": 4},
        created_at=datetime(2026, 11, 28, tzinfo=UTC),
        **identity,
    )


def test_the_cached_record_of_a_work_item_is_what_from_reply_makes_of_its_cached_reply() -> None:
    from datetime import UTC, datetime
    from types import MappingProxyType

    from qualspec.engine import Reply, WorkItem
    from qualspec.engine._cached import _identity, cached_record
    from qualspec.providers import Message

    entry = _cache_entry("reference")
    now = datetime(2026, 11, 28, tzinfo=UTC)
    for values in ({"q": "x"}, MappingProxyType({"q": "y"}), None):
        item = WorkItem(
            key="k",
            call_key="ck0",
            candidate="c",
            role="r",
            scenario="s",
            input_id="i",
            temperature=0.5,
            run_index=2,
            provider="p",
            model="m",
            messages=(Message("user", "x"),),
            params={},
            criteria=(),
            input_values=values,
            kind="reference",
        )
        made = cached_record(item, entry, {"scenario_prompt:1": 4}, now)
        reply = Reply.from_cache(entry, key="ck", queue_s=None)
        assert made == ResponseRecord.from_reply(
            reply,
            call_key="ck",
            **_identity(item),
            prompt_versions={"scenario_prompt:1": 4},
            created_at=now,
            input_values=None if values is None else dict(values),
        )
        assert values is None or type(made.input_values) is dict
