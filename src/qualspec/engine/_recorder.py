"""A writer thread that commits results as they complete, in small group commits.

Model calls finish on the event loop; writing each row there would block it. The
recorder takes records from a queue and commits whatever has arrived (one transaction
per batch) within about 50 ms, so a result is durable moments after it exists and a
kill loses at most the batch being written (resume calls those again).
"""

from __future__ import annotations

import queue
import threading
import time
from typing import TYPE_CHECKING, Any

from qualspec.errors import StoreError

if TYPE_CHECKING:
    from qualspec.store._records import CacheEntry, JudgmentRecord, ResponseRecord
    from qualspec.store._store import Store

__all__ = ["Recorder"]

_STOP = object()
_MAX_BATCH = 500
_LINGER_S = 0.05


class Recorder:
    """Background writer for one run. Use as a context manager; ``close()`` flushes."""

    def __init__(self, store: Store, run_id: str, *, heartbeat_s: float = 20.0) -> None:
        self._store = store
        self._run_id = run_id
        self._heartbeat_s = heartbeat_s
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._loop, name="qualspec-recorder", daemon=True)
        self._thread.start()

    def response(self, record: ResponseRecord) -> None:
        """Queue a response for commit."""
        self._queue.put(("r", record))

    def judgment(self, record: JudgmentRecord) -> None:
        """Queue a judgment for commit."""
        self._queue.put(("j", record))

    def cache(self, entry: CacheEntry) -> None:
        """Queue a cache entry for commit."""
        self._queue.put(("c", entry))

    def close(self) -> None:
        """Flush everything queued and stop the thread; raise if a write failed."""
        self._queue.put(_STOP)
        self._thread.join()
        if self.error is not None:
            raise StoreError(f"could not record results: {self.error}") from self.error

    def __enter__(self) -> Recorder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _loop(self) -> None:
        stop = False
        last_beat = time.monotonic()
        while not stop:
            try:
                first = self._queue.get(timeout=self._heartbeat_s)
            except queue.Empty:
                first = None
            if time.monotonic() - last_beat >= self._heartbeat_s and self.error is None:
                # tells other hosts this run is still owned (see Store.acquire_run)
                try:
                    self._store.heartbeat(self._run_id)
                except Exception as exc:  # noqa: BLE001 - surfaced by close()
                    self.error = exc
                last_beat = time.monotonic()
            if first is None:
                continue
            batch = [first]
            # Linger a moment so a busy run commits in tens of rows per transaction, not one.
            deadline = time.monotonic() + _LINGER_S
            while len(batch) < _MAX_BATCH and first is not _STOP and batch[-1] is not _STOP:
                remaining = deadline - time.monotonic()
                try:
                    batch.append(
                        self._queue.get(timeout=remaining)
                        if remaining > 0
                        else self._queue.get_nowait()
                    )
                except queue.Empty:
                    break
            responses: list[ResponseRecord] = []
            judgments: list[JudgmentRecord] = []
            entries: list[CacheEntry] = []
            for item in batch:
                if item is _STOP:
                    stop = True
                    continue
                kind, record = item
                (responses if kind == "r" else judgments if kind == "j" else entries).append(record)
            if self.error is not None:
                continue  # keep draining so producers never block; report at close()
            try:
                if responses:
                    self._store.record_responses(self._run_id, responses)
                if judgments:
                    self._store.record_judgments(self._run_id, judgments)
                if entries:
                    self._store.cache_put_many(entries)
            except BaseException as exc:  # noqa: BLE001 - surfaced by close()
                self.error = exc
