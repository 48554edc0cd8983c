"""How often the recorder commits a steady stream of answers.

Each answer keeps its concurrency slot until it is committed (a kill wastes at most
``--max-concurrency`` calls), so while answers keep coming the recorder gathers them for a
few milliseconds at most: it gathered for up to 50 ms, and a run at 50 ms a call took about
15% longer for it (``benchmarks/engine_throughput.py``). The
recorder's clock and sleep are replaced by a fake clock, advanced by each sleep, during
which one more answer arrives: no test here depends on how fast a thread gets a core.
"""

from __future__ import annotations

import threading
import time
from typing import Any, cast

import pytest

from qualspec.engine import Recorder
from qualspec.store import ResponseRecord, Store

STREAM = 60  # answers that arrive one per linger step, after the first


class _Store:
    """Notes each batch of answers: its keys and the fake time it was written at (one more
    answer arrives while it is written)."""

    def __init__(self, clock: list[float], arrive: Any) -> None:
        self.clock = clock
        self.arrive = arrive
        self.batches: list[tuple[float, list[str]]] = []

    def record_responses(self, run_id: str, records: list[ResponseRecord]) -> None:
        self.batches.append((self.clock[0], [r.key for r in records]))
        self.arrive()

    def record_judgments(self, run_id: str, records: list[Any]) -> None:
        pass

    def cache_put_many(self, entries: list[Any]) -> None:
        pass

    def heartbeat(self, run_id: str) -> None:
        pass

    def reconnect(self) -> None:
        pass


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
        text=f"answer {i}",
    )


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

    def arrive() -> None:  # the next answer of the stream, until STREAM have come
        if len(arrived) < STREAM:
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
    store = _Store(clock, arrive)
    recorder = Recorder(cast(Store, store), "run-1")
    holder.append(recorder)
    recorder.start()
    recorder.response(_response(0))
    assert done.wait(timeout=60), "the stream did not run to its end"
    recorder.close()

    written = [key for _, keys in store.batches for key in keys]
    assert sorted(written) == [f"k{i:03d}" for i in range(STREAM + 1)]  # each once
    assert len(written) == len(set(written))
    # while answers kept coming, each batch closed within a few milliseconds of its first
    starts = [0.0] + [at for at, _ in store.batches[:-1]]
    spans = [at - start for start, (at, _) in zip(starts, store.batches, strict=True)]
    assert max(spans) <= 0.01, spans
    assert max(len(keys) for _, keys in store.batches) <= 6
