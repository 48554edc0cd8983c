"""A writer thread that commits results as they complete, in small group commits.

Model calls finish on the event loop; writing each row there would block it. The
recorder takes records from a queue and commits whatever has arrived (one transaction
per batch: its answers, evaluation records and cache entries together) within half a
millisecond, or while records keep coming within one (or 500 records), so a result is
durable moments after it exists and a kill loses at most the batch being written (resume
calls those again). On a SQLite file it writes inside ``checkpointing()``: the WAL is
copied back by a thread of its own, not by the commits whose answers hold their slots.
Cached answers given together (``responses``: a batch's, holding no call slot) are
written in large transactions instead (up to 10,000 rows, gathered for up to 0.25 s),
and cached cells the store copies itself (``copy_cached``: no record, a SQLite file) in
transactions of up to 50,000: a kill may lose more of them, and a resume finds them in
the cache again, with no call.

When the database cannot write (a restart, a dropped connection, a full disk), the same
batch is tried again with backoff and a fresh connection until ``retry_window_s`` has
passed since its first failure. Meanwhile its ``on_commit`` callbacks stay pending: they
free the engine's concurrency slots, so the engine stalls at ``--max-concurrency``
answers instead of paying for answers it cannot keep. When the window is spent the
failure is fatal: ``on_fatal`` runs once on the event loop (the engine stops starting
calls), every pending callback runs, and later records are dropped unwritten.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import queue
import sys
import threading
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from qualspec.errors import StoreError

if TYPE_CHECKING:
    from qualspec.store import CacheEntry, JudgmentRecord, ResponseRecord, Store

__all__ = ["Recorder"]

log = logging.getLogger("qualspec.store")

_STOP = object()
_MAX_BATCH = 500
_MAX_ROWS = 10_000
_MAX_COPIES = 50_000
_LINGER_S = 0.0005
# answers keep their slots until committed, so the time an answer waits for its commit is
# time its slot does no work: gathered for up to 50 ms, a run at 50 ms a call took about
# 15% longer (benchmarks/engine_throughput.py); at 0 ms a call (scale.py, 100,000 cells,
# 64 slots) 1 ms ran in 29.3-30.1 s where 5 ms ran in 34.3-35.0 s; 0.5 ms was no faster
_LINGER_MAX_S = 0.001
_BULK_LINGER_S = 0.25
_RETRY_FIRST_S = 0.1
_RETRY_MAX_S = 2.0
_SLOW_COMMIT_S = 1.0
_MAX_REASON = 300


class Recorder:
    """Background writer for one run: a :class:`~qualspec.engine.Sink`.

    Its thread starts when it is entered (``async with recorder:``, or ``with`` /
    :meth:`start`), never when it is made; leaving it (or ``close()``) flushes and stops
    the thread. Records given before it started are refused.

    Args:
        store: Where to write.
        run_id: The run the records belong to.
        heartbeat_s: How often to refresh the run lock (``Store.heartbeat``).
        retry_window_s: How long one batch may keep failing (retried with backoff and
            a reconnect) before the failure is fatal.
        on_fatal: Called once, on the event loop it was started on, with the error when
            writing has failed for good (not called when it was started outside a loop,
            or the loop is closed). May also be set later, as the ``on_fatal``
            attribute, before writing fails.
    """

    def __init__(
        self,
        store: Store,
        run_id: str,
        *,
        heartbeat_s: float = 20.0,
        retry_window_s: float = 30.0,
        on_fatal: Callable[[BaseException], None] | None = None,
    ) -> None:
        self._store = store
        self._run_id = run_id
        self._heartbeat_s = heartbeat_s
        self._retry_window_s = max(0.0, retry_window_s)
        self.on_fatal = on_fatal
        self._fatal_sent = False
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self.error: BaseException | None = None
        self._event_loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None  # started when entered

    @property
    def failed(self) -> bool:
        """Whether writing failed for good (records queued since then were dropped)."""
        return self.error is not None

    @property
    def failure(self) -> str | None:
        """The fatal error as one line (no record contents), or None."""
        return None if self.error is None else one_line(self.error)

    def start(self) -> Recorder:
        """Start the writer thread (what entering does); ``on_commit`` callbacks and
        ``on_fatal`` run on the event loop running here (none outside one).

        Raises:
            RuntimeError: It was started before.
        """
        if self._thread is not None:
            raise RuntimeError("this recorder was started before: a recorder starts once")
        try:
            self._event_loop = asyncio.get_running_loop()
        except RuntimeError:  # started outside a loop: callbacks have nowhere to run
            self._event_loop = None
        self._thread = threading.Thread(target=self._loop, name="qualspec-recorder", daemon=True)
        self._thread.start()
        return self

    def _put(self, item: tuple[str, Any, Callable[[], object] | None]) -> None:
        if self._thread is None:
            raise RuntimeError(
                "the recorder is not started: enter it (async with recorder:) before "
                "giving it records"
            )
        self._queue.put(item)

    def response(
        self, record: ResponseRecord, on_commit: Callable[[], object] | None = None
    ) -> None:
        """Queue a response for commit; ``on_commit`` runs on the loop it was started on
        once it is durable (or once writing failed for good, so that nobody waits
        forever)."""
        self._put(("r", record, on_commit))

    def responses(
        self, records: Sequence[ResponseRecord], on_commit: Callable[[], object] | None = None
    ) -> None:
        """Queue answers given together (a batch of cached answers); ``on_commit`` runs
        once, when all of them are durable. They hold no concurrency slot, so they are
        written in large transactions (up to ``_MAX_ROWS`` rows, waiting up to
        ``_BULK_LINGER_S`` for more while nothing else is queued): a transaction's
        commit (and the index pages it rewrites) was most of a cached rerun's time."""
        if records:
            self._put(("R", list(records), on_commit))

    @property
    def copies_cached(self) -> bool:
        """Whether :meth:`copy_cached` can be used: the store copies cached answers
        itself (a SQLite file)."""
        return callable(getattr(self._store, "copy_cached", None))

    def copy_cached(
        self, cells: Sequence[tuple[Any, ...]], on_commit: Callable[[], object] | None = None
    ) -> None:
        """Queue cached cells the store records by copying their cache entries
        (``Store.copy_cached``: each cell a tuple of its identity and cache key, no
        record); ``on_commit`` runs once, when all of them are written. They are
        written in the largest transactions (up to ``_MAX_COPIES`` cells)."""
        if cells:
            self._put(("K", list(cells), on_commit))

    def answer(
        self,
        record: ResponseRecord,
        entry: CacheEntry,
        on_commit: Callable[[], object] | None = None,
    ) -> None:
        """Queue an answer and its cache entry as one item (what ``response(record,
        on_commit)`` then ``cache(entry)`` do, with one queue item: the answered call's
        path); ``on_commit`` runs once both are durable."""
        self._put(("a", (record, entry), on_commit))

    def judgment(
        self, record: JudgmentRecord, on_commit: Callable[[], object] | None = None
    ) -> None:
        """Queue a judgment for commit; ``on_commit`` as for ``response``."""
        self._put(("j", record, on_commit))

    def cache(self, entry: CacheEntry, on_commit: Callable[[], object] | None = None) -> None:
        """Queue a cache entry for commit; ``on_commit`` as for ``response``."""
        self._put(("c", entry, on_commit))

    def close(self) -> None:
        """Flush everything queued and stop the thread; raise if writing failed for good.
        A recorder that never started has nothing to flush."""
        if self._thread is not None:
            self._queue.put(_STOP)
            self._thread.join()
        if self.error is not None:
            raise StoreError(f"could not record results: {one_line(self.error)}") from self.error

    def __enter__(self) -> Recorder:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> Recorder:
        return self.start()

    async def __aexit__(self, *exc: object) -> None:
        # joining the thread blocks: off the loop, which runs the last callbacks meanwhile
        await asyncio.to_thread(self.close)

    # ------------------------------------------------------------------ the thread

    def _loop(self) -> None:
        checkpointing = getattr(self._store, "checkpointing", contextlib.nullcontext)
        with checkpointing():
            self._batches()

    def _batches(self) -> None:
        stop = False
        next_beat = time.monotonic() + self._heartbeat_s
        while not stop:
            try:
                first = self._queue.get(timeout=max(0.0, next_beat - time.monotonic()))
            except queue.Empty:
                first = None
            if time.monotonic() >= next_beat:
                next_beat = self._beat()
            if first is None:
                continue
            batch = [first]
            if first is not _STOP:
                self._gather(batch, _Size().add(first))
            stop = self._write_batch(batch)

    def _gather(self, batch: list[Any], size: _Size) -> None:
        """Add to ``batch`` what arrives while records keep coming, so that a busy run
        commits as many rows per transaction as arrive meanwhile (a transaction's fixed
        cost was most of a batch of ten's) and an idle one within ``_LINGER_S``: taken
        every ``_LINGER_S`` until a pause brings nothing (the engine waits on these
        commits: its slots are freed by them), ``_MAX_BATCH`` records or ``_LINGER_MAX_S``.
        A batch of answers given together only (``responses``: nobody waits on a slot)
        waits on through pauses for up to ``_MAX_ROWS`` rows or ``_BULK_LINGER_S``.
        Sleeping, then taking what arrived, wakes this thread once per interval: waiting
        on the queue woke it (and took the GIL from the event loop) once per record."""
        start = time.monotonic()
        while True:
            time.sleep(_LINGER_S)
            took = self._drain(batch, size)
            if batch[-1] is _STOP or size.full():
                return
            waited = time.monotonic() - start
            if size.singles:
                if not took or waited >= _LINGER_MAX_S:
                    return
            elif waited >= _BULK_LINGER_S:
                return

    def _drain(self, batch: list[Any], size: _Size) -> int:
        """Move what is queued (until ``size`` is full, up to a ``_STOP``) into
        ``batch``; how many."""
        taken = 0
        while not size.full() and batch[-1] is not _STOP:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                break
            batch.append(item)
            size.add(item)
            taken += 1
        return taken

    def _beat(self) -> float:
        """Refresh the run lock; return when to do it next. A failure is never fatal."""
        now = time.monotonic()
        if self.error is not None:
            return now + self._heartbeat_s
        try:
            # tells other hosts this run is still owned (see Store.acquire_run)
            self._store.heartbeat(self._run_id)
        except Exception as exc:  # noqa: BLE001 - transient by definition: try again soon
            delay = min(self._heartbeat_s, _RETRY_MAX_S)
            log.warning("heartbeat failed (%s); retrying in %.1fs", one_line(exc), delay)
            self._reconnect()
            return time.monotonic() + delay
        return time.monotonic() + self._heartbeat_s

    def _write_batch(self, batch: list[Any]) -> bool:
        """Write one batch (retrying); run its callbacks. True when ``_STOP`` was in it."""
        stop = False
        records: dict[str, list[Any]] = {"r": [], "k": [], "j": [], "c": []}
        callbacks: dict[str, list[Callable[[], object]]] = {"r": [], "k": [], "j": [], "c": []}
        for item in batch:
            if item is _STOP:
                stop = True
                continue
            kind, record, on_commit = item
            if kind in ("R", "K"):  # answers given together, cells the store copies
                kind = kind.lower()
                records[kind].extend(record)
            elif kind == "a":  # an answer and its cache entry
                kind = "r"
                records["r"].append(record[0])
                records["c"].append(record[1])
            else:
                records[kind].append(record)
            if on_commit is not None:
                callbacks[kind].append(on_commit)
        store, run_id = self._store, self._run_id
        copy: Any = getattr(store, "copy_cached", None)  # a SQLite file's (copies_cached)
        writers: list[tuple[str, str, Callable[[list[Any]], None]]] = [
            # answers first, and their slots freed as soon as they are durable
            ("r", "responses", lambda rows: store.record_responses(run_id, rows)),
            ("k", "cached answers", lambda rows: copy(run_id, rows)),
            ("j", "judgments", lambda rows: store.record_judgments(run_id, rows)),
            ("c", "cache entries", store.cache_put_many),
        ]
        if self._together(records, writers):
            for kind, _, _ in writers:
                self._notify(callbacks[kind])
            return stop
        retry = _Retry()
        for kind, what, write in writers:
            rows = records[kind]
            if rows and self.error is None:
                self._write(retry, what, len(rows), functools.partial(write, rows))
            # written, or failed for good (dropped): either way nobody may wait for them
            self._notify(callbacks[kind])
        return stop

    def _together(
        self,
        records: dict[str, list[Any]],
        writers: list[tuple[str, str, Callable[[list[Any]], None]]],
    ) -> bool:
        """Write a batch of several kinds (answers and their cache entries) in one
        transaction (``Store.together``: one commit, whose fixed cost was most of a small
        batch's); False when it was not (one kind, or it failed: rolled back whole, then
        written kind by kind with their own retries, so that a judgment that cannot be
        written never holds back the answers)."""
        together = getattr(self._store, "together", None)
        if together is None or self.error is not None or sum(map(bool, records.values())) < 2:
            return False
        try:
            with together():
                for kind, _, write in writers:
                    if records[kind]:
                        write(records[kind])
        except Exception as exc:  # noqa: BLE001 - written again kind by kind, which reports
            log.debug("batch not written together (%s): kind by kind", one_line(exc))
            return False
        return True

    def _write(self, retry: _Retry, what: str, count: int, write: Callable[[], None]) -> bool:
        """Run ``write`` until it succeeds (True) or fails for good (False, fatal)."""
        while True:
            started = time.monotonic()
            try:
                write()
            except BaseException as exc:  # noqa: BLE001 - surfaced by close() and on_fatal
                now = time.monotonic()
                if not isinstance(exc, _transient_errors()):
                    self._fatal(exc)
                    return False
                if retry.first_failure is None:
                    retry.first_failure = started
                left = retry.first_failure + self._retry_window_s - now
                if left <= 0:
                    self._fatal(exc)
                    return False
                delay = min(retry.delay, left)
                retry.delay = min(retry.delay * 2, _RETRY_MAX_S)
                log.warning(
                    "could not write %d %s (%s); retrying in %.1fs",
                    count,
                    what,
                    one_line(exc),
                    delay,
                )
                time.sleep(delay)
                self._reconnect()
                continue
            took = time.monotonic() - started
            if took > _SLOW_COMMIT_S:
                log.info("slow commit: %d %s took %.1fs", count, what, took)
            if retry.first_failure is not None:
                log.warning(
                    "wrote %d %s after retrying for %.1fs",
                    count,
                    what,
                    time.monotonic() - retry.first_failure,
                )
                retry.first_failure = None
                retry.delay = _RETRY_FIRST_S
            return True

    def _reconnect(self) -> None:
        try:
            self._store.reconnect()
        except Exception as exc:  # noqa: BLE001 - the next attempt reports what is wrong
            log.debug("reconnect failed (%s)", one_line(exc))

    def _fatal(self, exc: BaseException) -> None:
        """Writing failed for good: remember why and tell the engine (once)."""
        self.error = exc
        log.error("could not record results: %s; no further results are written", one_line(exc))
        on_fatal, loop = self.on_fatal, self._event_loop
        if self._fatal_sent or on_fatal is None or loop is None or loop.is_closed():
            return
        self._fatal_sent = True
        try:
            # queued before the batch's callbacks: the engine stops before slots free up
            loop.call_soon_threadsafe(on_fatal, exc)
        except RuntimeError:  # the loop closed meanwhile: nobody is running calls any more
            pass

    def _notify(self, callbacks: list[Callable[[], object]]) -> None:
        """Run the batch's commit callbacks on the event loop: one wake-up per batch."""
        loop = self._event_loop
        if not callbacks or loop is None or loop.is_closed():
            return

        def run_all() -> None:
            for callback in callbacks:
                callback()

        try:
            loop.call_soon_threadsafe(run_all)
        except RuntimeError:  # the loop closed meanwhile: nobody is waiting any more
            pass


class _Size:
    """How much a batch being gathered holds: records given one by one (``singles``),
    rows in all (a ``responses`` item counts its answers) and cells the store copies
    (``copies``: up to ``_MAX_COPIES`` a transaction)."""

    __slots__ = ("copies", "rows", "singles")

    def __init__(self) -> None:
        self.singles = 0
        self.rows = 0
        self.copies = 0

    def add(self, item: Any) -> _Size:
        if item is _STOP:
            return self
        if item[0] == "K":  # cells the store copies: no record, larger transactions
            self.copies += len(item[1])
        elif item[0] == "R":
            self.rows += len(item[1])
        elif item[0] == "a":  # an answer and its cache entry
            self.singles += 1
            self.rows += 2
        else:
            self.singles += 1
            self.rows += 1
        return self

    def full(self) -> bool:
        return self.singles >= _MAX_BATCH or self.rows >= _MAX_ROWS or self.copies >= _MAX_COPIES


class _Retry:
    """Retry state of one batch: when it first failed and the next backoff delay."""

    __slots__ = ("delay", "first_failure")

    def __init__(self) -> None:
        self.first_failure: float | None = None
        self.delay = _RETRY_FIRST_S


def one_line(exc: BaseException) -> str:
    """An error as one short line: the driver's first line, never SQL parameters."""
    if isinstance(exc, StoreError):
        text = str(exc)
    else:
        # a raw SQLAlchemy error's str() carries the statement and its parameters (which
        # may hold prompts and answers): use the driver error's own message instead
        orig = getattr(exc, "orig", None)
        text = str(orig if isinstance(orig, BaseException) else exc)
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    line = lines[0] if lines else type(exc).__name__
    return line if len(line) <= _MAX_REASON else line[: _MAX_REASON - 3] + "..."


def _transient_errors() -> tuple[type[BaseException], ...]:
    """Errors worth retrying: the store's, the database driver's, the operating system's
    (SQLAlchemy's once it is imported: a store on a SQLite file may never import it)."""
    import sqlite3

    found: tuple[type[BaseException], ...] = (StoreError, OSError, sqlite3.Error)
    sa = sys.modules.get("sqlalchemy.exc")
    return found if sa is None else (*found, sa.SQLAlchemyError)
