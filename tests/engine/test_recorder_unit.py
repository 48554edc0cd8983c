"""The Recorder against a fake store that fails on demand: retry, give up, drop, heartbeat.

Each test drives the recorder from a real event loop (``asyncio.run``) because commit
callbacks and ``on_fatal`` are delivered there. Retry windows are short (0.5 s) and
nothing sleeps on a fixed schedule: tests wait for events with generous deadlines.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import pytest

from qualspec.engine import Recorder
from qualspec.errors import StoreError
from qualspec.store import CacheEntry, JudgmentRecord, ResponseRecord, Store

SECRET_TEXT = "sk-unit-canary-4f1c9e"  # an answer text that must never reach a log
DEADLINE_S = 30.0  # generous: only ever waited out when a test fails


class FakeStore:
    """Records writes; fails while ``down`` is set or for the next ``fail_next`` writes."""

    def __init__(self, error: Callable[[], BaseException] | None = None) -> None:
        self.lock = threading.Lock()
        self.down = threading.Event()
        self.fail_next = 0
        self.beats_fail_next = 0
        self.error = error or (lambda: StoreError("database error on sqlite:///x.db: locked"))
        self.responses: list[str] = []
        self.judgments: list[Any] = []
        self.entries: list[Any] = []
        self.attempts = 0
        self.reconnects = 0
        self.beats = 0
        self.beat_failures = 0

    def _maybe_fail(self) -> None:
        with self.lock:
            self.attempts += 1
            if self.down.is_set():
                raise self.error()
            if self.fail_next > 0:
                self.fail_next -= 1
                raise self.error()

    def record_responses(self, run_id: str, records: list[ResponseRecord]) -> None:
        assert run_id == "run-1"
        self._maybe_fail()
        with self.lock:
            self.responses.extend(r.key for r in records)

    def record_judgments(self, run_id: str, records: list[Any]) -> None:
        self._maybe_fail()
        with self.lock:
            self.judgments.extend(records)

    def cache_put_many(self, entries: list[Any]) -> None:
        self._maybe_fail()
        with self.lock:
            self.entries.extend(entries)

    def heartbeat(self, run_id: str) -> None:
        with self.lock:
            self.beats += 1
            if self.beats_fail_next > 0:
                self.beats_fail_next -= 1
                self.beat_failures += 1
                raise StoreError("database error on postgresql://***@db/x: server closed")

    def reconnect(self) -> None:
        with self.lock:
            self.reconnects += 1

    def written(self) -> list[str]:
        with self.lock:
            return list(self.responses)


def _response(i: int) -> ResponseRecord:
    return ResponseRecord(
        key=f"k{i:03d}",
        candidate="c",
        role=None,
        scenario="s",
        input_id=f"r{i:03d}",
        temperature=0.0,
        effective_temperature=0.0,
        run_index=0,
        provider="fake",
        model="m",
        text=f"{SECRET_TEXT} answer {i}",
    )


def _judgment(i: int) -> JudgmentRecord:
    return cast(JudgmentRecord, {"judgment": i, "text": SECRET_TEXT})


def _entry(i: int) -> CacheEntry:
    return cast(CacheEntry, {"entry": i, "text": SECRET_TEXT})


def _recorder(store: FakeStore, **kwargs: Any) -> Recorder:
    """A started recorder: on the running loop when made inside one (callbacks run there)."""
    return Recorder(cast(Store, store), "run-1", **kwargs).start()


async def _until(predicate: Callable[[], bool], what: str) -> None:
    """Let the loop run until ``predicate`` holds; fail after a generous deadline."""
    deadline = time.monotonic() + DEADLINE_S
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.005)


async def _close(recorder: Recorder) -> BaseException | None:
    """``close()`` off the loop (it joins the thread); then run what it scheduled."""
    loop = asyncio.get_running_loop()
    try:
        await loop.run_in_executor(None, recorder.close)
    except BaseException as exc:  # noqa: BLE001 - returned for the test to inspect
        return exc
    finally:
        await asyncio.sleep(0)
    return None


def _no_secret_in_logs(caplog: pytest.LogCaptureFixture) -> None:
    assert SECRET_TEXT not in caplog.text
    for record in caplog.records:
        assert SECRET_TEXT not in record.getMessage()
        assert record.exc_info is None  # a traceback could carry SQL parameters


# ---------------------------------------------------------------- transient failures


def test_transient_failure_is_retried_and_callbacks_wait_for_the_commit(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="qualspec.store")
    store = FakeStore()
    fatal: list[BaseException] = []
    seen_at_callback: dict[str, bool] = {}

    async def main() -> BaseException | None:
        recorder = _recorder(store, retry_window_s=DEADLINE_S, on_fatal=fatal.append)
        store.down.set()

        def on_commit(key: str) -> Callable[[], None]:
            return lambda: seen_at_callback.setdefault(key, key in store.written())

        for i in range(5):
            recorder.response(_response(i), on_commit=on_commit(f"k{i:03d}"))
        recorder.judgment(_judgment(0))
        recorder.cache(_entry(0))
        # several failed attempts, each followed by a reconnect; no callback ran meanwhile
        await _until(lambda: store.reconnects >= 2, "two reconnects")
        assert seen_at_callback == {}
        assert store.written() == []
        store.down.clear()
        await _until(lambda: len(seen_at_callback) == 5, "the commit callbacks")
        for i in range(5, 8):
            recorder.response(_response(i), on_commit=on_commit(f"k{i:03d}"))
        error = await _close(recorder)
        assert not recorder.failed
        assert recorder.failure is None
        return error

    assert asyncio.run(main()) is None
    keys = [f"k{i:03d}" for i in range(8)]
    assert sorted(store.written()) == keys  # every row once: failed attempts wrote nothing
    assert len(store.written()) == len(set(store.written()))
    assert seen_at_callback == dict.fromkeys(keys, True)  # each ran after its row was durable
    assert len(store.judgments) == 1 and len(store.entries) == 1
    assert fatal == []
    retries = [r for r in caplog.records if "retrying in" in r.getMessage()]
    assert retries and all(r.levelno == logging.WARNING for r in retries)
    assert all(r.name == "qualspec.store" for r in retries)
    assert "locked" in retries[0].getMessage()
    _no_secret_in_logs(caplog)


def test_backoff_doubles_from_a_tenth_of_a_second_up_to_two(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    caplog.set_level(logging.WARNING, logger="qualspec.store")
    import qualspec.engine._recorder as recorder_module

    delays: list[float] = []
    real_sleep = time.sleep

    def fake_sleep(seconds: float) -> None:
        if threading.current_thread().name == "qualspec-recorder":
            delays.append(seconds)
            real_sleep(0.001)
        else:
            real_sleep(seconds)

    monkeypatch.setattr(recorder_module.time, "sleep", fake_sleep)
    store = FakeStore()
    store.fail_next = 7
    recorder = _recorder(store, retry_window_s=3600)
    recorder.response(_response(0))
    recorder.close()
    assert store.written() == ["k000"]
    # (the writer also sleeps _LINGER_S before each batch, to gather it)
    backoff = [d for d in delays if d != recorder_module._LINGER_S]
    assert backoff == [0.1, 0.2, 0.4, 0.8, 1.6, 2.0, 2.0]
    assert store.reconnects == 7


def test_judgment_retry_does_not_hold_back_committed_answers() -> None:
    store = FakeStore()
    released: list[str] = []

    async def main() -> BaseException | None:
        recorder = _recorder(store, retry_window_s=DEADLINE_S)

        original = store.record_judgments
        gate = threading.Event()

        tries: list[int] = []

        def slow_judgments(run_id: str, records: list[Any]) -> None:
            tries.append(1)
            if not gate.is_set():
                raise StoreError("database error: connection lost")
            original(run_id, records)

        store.record_judgments = slow_judgments  # type: ignore[method-assign]
        recorder.response(_response(0), on_commit=lambda: released.append("k000"))
        recorder.judgment(_judgment(0), on_commit=lambda: released.append("j0"))
        await _until(lambda: released == ["k000"], "the answer's slot to be released")
        await _until(lambda: len(tries) >= 2, "judgment retries")
        assert released == ["k000"]  # the judgment's own callback waits for its commit
        gate.set()
        await _until(lambda: released == ["k000", "j0"], "the judgment's callback")
        return await _close(recorder)

    assert asyncio.run(main()) is None
    assert store.written() == ["k000"]
    assert len(store.judgments) == 1


# ---------------------------------------------------------------- persistent failures


def test_persistent_failure_is_fatal_once_releases_everyone_and_drops_the_rest(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="qualspec.store")
    store = FakeStore()
    store.down.set()
    events: list[str] = []
    fatal: list[BaseException] = []

    def on_fatal(exc: BaseException) -> None:
        fatal.append(exc)
        events.append("fatal")

    async def main() -> BaseException | None:
        recorder = _recorder(store, retry_window_s=0.5)
        recorder.on_fatal = on_fatal  # the engine is built after the recorder
        for i in range(4):
            recorder.response(_response(i), on_commit=lambda i=i: events.append(f"cb{i}"))
        recorder.judgment(_judgment(0))
        await _until(lambda: len(events) == 5, "on_fatal and the 4 callbacks")
        assert recorder.failed
        attempts = store.attempts
        # later records are consumed and dropped, their callbacks still run
        store.down.clear()
        for i in range(4, 7):
            recorder.response(_response(i), on_commit=lambda i=i: events.append(f"cb{i}"))
        recorder.judgment(_judgment(1))
        recorder.cache(_entry(1))
        await _until(lambda: len(events) == 8, "the dropped records' callbacks")
        error = await _close(recorder)
        assert store.attempts == attempts, "wrote after giving up"
        return error

    error = asyncio.run(main())
    assert events[0] == "fatal", "on_fatal must run before the slots are released"
    assert sorted(events[1:]) == [f"cb{i}" for i in range(7)]
    assert len(fatal) == 1 and isinstance(fatal[0], StoreError)
    assert store.written() == [] and store.judgments == [] and store.entries == []
    assert store.attempts >= 2  # it did retry before giving up
    assert isinstance(error, StoreError)
    message = str(error)
    assert message.startswith("could not record results: ")
    assert "locked" in message
    assert "\n" not in message
    assert error.__cause__ is fatal[0]
    assert any(r.levelno == logging.ERROR for r in caplog.records)
    _no_secret_in_logs(caplog)


def test_persistent_failure_without_a_loop_still_raises_on_close() -> None:
    store = FakeStore()
    store.down.set()
    fatal: list[BaseException] = []
    recorder = _recorder(store, retry_window_s=0.3, on_fatal=fatal.append)
    recorder.response(_response(0), on_commit=lambda: None)
    with pytest.raises(StoreError, match="^could not record results: "):
        recorder.close()
    assert recorder.failed
    assert fatal == []  # no loop bound: nowhere to run it


def test_a_programming_error_is_fatal_at_once() -> None:
    store = FakeStore(error=lambda: TypeError("unexpected keyword"))
    store.fail_next = 1
    recorder = _recorder(store, retry_window_s=DEADLINE_S)
    recorder.response(_response(0))
    with pytest.raises(StoreError, match="unexpected keyword"):
        recorder.close()
    assert store.attempts == 1 and store.reconnects == 0


def test_sqlalchemy_error_parameters_never_reach_the_log_or_the_message(
    caplog: pytest.LogCaptureFixture,
) -> None:
    from sqlalchemy.exc import OperationalError

    caplog.set_level(logging.DEBUG, logger="qualspec.store")

    def error() -> BaseException:
        return OperationalError(
            "INSERT INTO responses (text) VALUES (?)",
            {"text": SECRET_TEXT},
            Exception("database or disk is full"),
        )

    store = FakeStore(error=error)
    store.down.set()
    recorder = _recorder(store, retry_window_s=0.3)
    recorder.response(_response(0))
    with pytest.raises(StoreError) as raised:
        recorder.close()
    assert str(raised.value) == "could not record results: database or disk is full"
    assert recorder.failure == "database or disk is full"
    assert "database or disk is full" in caplog.text
    _no_secret_in_logs(caplog)


# ---------------------------------------------------------------- heartbeat


def test_heartbeat_failures_are_not_fatal(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="qualspec.store")
    store = FakeStore()
    store.beats_fail_next = 2
    fatal: list[BaseException] = []

    async def main() -> BaseException | None:
        recorder = _recorder(store, heartbeat_s=0.05, retry_window_s=0.2, on_fatal=fatal.append)
        await _until(lambda: store.beats >= 4, "a good heartbeat after the failed ones")
        recorder.response(_response(0))
        return await _close(recorder)

    assert asyncio.run(main()) is None
    assert store.beat_failures == 2
    assert store.reconnects >= 2
    assert store.written() == ["k000"]
    assert fatal == []
    assert any("heartbeat failed" in r.getMessage() for r in caplog.records)


# ---------------------------------------------------------------- Store.reconnect


def test_store_reconnect_keeps_file_and_memory_databases(tmp_path: Path) -> None:
    for url in (f"sqlite:///{tmp_path / 'r.db'}", "sqlite:///:memory:"):
        with Store.open(url) as store:
            run_id = store.create_run("suite", "hash", {})
            store.reconnect()
            assert store.get_run(run_id).status == "running"
            store.reconnect()
            store.finish_run(run_id, "finished")
            assert store.get_run(run_id).status == "finished"


# How often a steady stream of answers is committed. Each answer keeps its concurrency slot
# until it is committed (a kill wastes at most --max-concurrency calls), so while answers
# keep coming the recorder gathers them for a few milliseconds at most: it gathered for up
# to 50 ms, and a run at 50 ms a call took about 15% longer for it
# (benchmarks/engine_throughput.py). The recorder's clock and sleep are a fake clock,
# advanced by each sleep, during which one more answer arrives: nothing here depends on
# how fast a thread gets a core.

_STREAM = 60  # answers that arrive one per linger step, after the first


class _StreamStore(FakeStore):
    """Notes each batch of answers with the fake time it was written at; one more answer
    arrives while it is written."""

    def __init__(self, clock: list[float], arrive: Callable[[], None]) -> None:
        super().__init__()
        self.clock = clock
        self.arrive = arrive
        self.batches: list[tuple[float, list[str]]] = []

    def record_responses(self, run_id: str, records: list[ResponseRecord]) -> None:
        self.batches.append((self.clock[0], [r.key for r in records]))
        self.arrive()


def test_a_steady_stream_of_answers_is_committed_every_few_milliseconds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import qualspec.engine._recorder as recorder_module

    clock = [0.0]
    real_sleep, real_monotonic = time.sleep, time.monotonic
    arrived: list[int] = []
    holder: list[Recorder] = []
    done = threading.Event()

    def on_recorder() -> bool:
        return threading.current_thread().name == "qualspec-recorder"

    def fake_monotonic() -> float:
        return clock[0] if on_recorder() else real_monotonic()

    def arrive() -> None:  # the next answer of the stream, until _STREAM have come
        if len(arrived) < _STREAM:
            arrived.append(1)
            holder[0].response(_response(len(arrived)))
        else:
            done.set()

    def fake_sleep(seconds: float) -> None:
        if not on_recorder():
            real_sleep(seconds)
            return
        clock[0] += seconds
        arrive()  # one answer arrives during each step the recorder waits

    monkeypatch.setattr(recorder_module.time, "sleep", fake_sleep)
    monkeypatch.setattr(recorder_module.time, "monotonic", fake_monotonic)
    store = _StreamStore(clock, arrive)
    recorder = Recorder(cast(Store, store), "run-1")
    holder.append(recorder)
    recorder.start()
    recorder.response(_response(0))
    assert done.wait(timeout=60), "the stream did not run to its end"
    recorder.close()

    written = [key for _, keys in store.batches for key in keys]
    assert sorted(written) == [f"k{i:03d}" for i in range(_STREAM + 1)]  # each once
    assert len(written) == len(set(written))
    # while answers kept coming, each batch closed within a few milliseconds of its first
    starts = [0.0] + [at for at, _ in store.batches[:-1]]
    spans = [at - start for start, (at, _) in zip(starts, store.batches, strict=True)]
    assert max(spans) <= 0.01, spans
    assert max(len(keys) for _, keys in store.batches) <= 6
