"""A writer thread that commits results as they complete, in small group commits.

Model calls finish on the event loop; writing each row there would block it. The
recorder takes records from a queue and commits whatever has arrived (one transaction
per batch) within a few milliseconds, so a result is durable moments after it exists and a
kill loses at most the batch being written (resume calls those again).
"""

from __future__ import annotations

import asyncio
import queue
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from qualspec.errors import StoreError

if TYPE_CHECKING:
    from qualspec.store._records import CacheEntry, JudgmentRecord, ResponseRecord
    from qualspec.store._store import Store

__all__ = ["Recorder"]

_STOP = object()
_MAX_BATCH = 500
_LINGER_S = 0.002


class Recorder:
    """Background writer for one run. Use as a context manager; ``close()`` flushes."""

    def __init__(self, store: Store, run_id: str, *, heartbeat_s: float = 20.0) -> None:
        self._store = store
        self._run_id = run_id
        self._heartbeat_s = heartbeat_s
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self.error: BaseException | None = None
        self._event_loop: asyncio.AbstractEventLoop | None = None
        self._thread = threading.Thread(target=self._loop, name="qualspec-recorder", daemon=True)
        self._thread.start()

    def bind_loop(self, loop: asyncio.AbstractEventLoop) -> None:
        """The event loop on which ``on_commit`` callbacks run."""
        self._event_loop = loop

    def response(
        self, record: ResponseRecord, on_commit: Callable[[], object] | None = None
    ) -> None:
        """Queue a response for commit; ``on_commit`` runs on the bound loop once it is durable
        (or once writing failed, so that nobody waits forever)."""
        self._queue.put(("r", record, on_commit))

    def judgment(self, record: JudgmentRecord) -> None:
        """Queue a judgment for commit."""
        self._queue.put(("j", record, None))

    def cache(self, entry: CacheEntry) -> None:
        """Queue a cache entry for commit."""
        self._queue.put(("c", entry, None))

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
            callbacks: list[Callable[[], object]] = []
            for item in batch:
                if item is _STOP:
                    stop = True
                    continue
                kind, record, on_commit = item
                if on_commit is not None:
                    callbacks.append(on_commit)
                (responses if kind == "r" else judgments if kind == "j" else entries).append(record)
            if self.error is None:
                try:
                    if responses:
                        self._store.record_responses(self._run_id, responses)
                    if callbacks:  # answers are durable: free their slots before the rest
                        self._notify(callbacks)
                        callbacks = []
                    if judgments:
                        self._store.record_judgments(self._run_id, judgments)
                    if entries:
                        self._store.cache_put_many(entries)
                except BaseException as exc:  # noqa: BLE001 - surfaced by close()
                    self.error = exc
            if callbacks:
                self._notify(callbacks)

    def _notify(self, callbacks: list[Callable[[], object]]) -> None:
        """Run the batch's commit callbacks on the event loop: one wake-up per batch."""
        loop = self._event_loop
        if loop is None or loop.is_closed():
            return

        def run_all() -> None:
            for callback in callbacks:
                callback()

        try:
            loop.call_soon_threadsafe(run_all)
        except RuntimeError:  # the loop closed meanwhile: nobody is waiting any more
            pass
