"""Answers embedded while the run waits on the network: :class:`EmbeddingSink`.

A run's stability score compares its answers' embeddings. Embedding them all after the
last call made the run wait for it; this sink embeds each answer the moment it is
recorded, on one background thread, while the calls that follow are still in flight:

* it records everything through a :class:`~qualspec.engine.Recorder` (the store), as the
  default sink does, and offers each candidate answer's text to a bounded queue (never
  blocking the event loop: when the queue is full the text is left to the analysis at the
  end, which embeds what it does not find);
* one worker thread takes what has arrived in small batches, skips the texts it has seen,
  looks the rest up among the embeddings kept in the store (by the text's SHA-256: see
  :mod:`qualspec.analysis._kept_vectors`), embeds only the texts not kept, and hands their
  vectors to the recorder, which keeps them in the store with the answers;
* leaving the sink waits for the queue to drain, then flushes the recorder: when the run
  ends, the analysis finds every vector in the store, and a rerun whose answers come from
  the cache embeds nothing.

An embedding failure (no usable model) is logged once and stops the embedding, never the
run; the analysis then falls back as it would without this sink.

Example::

    async with qualspec.Session(sink=EmbeddingSink) as session: ...
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from qualspec.analysis._kept_vectors import embedding_key, read_vectors, vector_entries
from qualspec.analysis._similarity import EMBEDDINGS, embed, similarity_method

if TYPE_CHECKING:
    from qualspec.engine import Sink, SinkFactory
    from qualspec.store import CacheEntry, JudgmentRecord, ResponseRecord, Store

__all__ = ["EmbeddingSink", "live_embedding_sink"]

_log = logging.getLogger("qualspec.analysis")

_STOP = None
_QUEUE = 4096  # texts waiting (about 5 MB of answers); beyond, left to the analysis
_BATCH = 256  # texts embedded at once at most
_LINGER_S = 0.02  # gathers a batch (a call takes longer): one lookup and one commit per batch
_SEEN = 100_000  # keys of texts remembered (then forgotten: the store lookup still skips them)


class EmbeddingSink:
    """A :class:`~qualspec.engine.Sink` that records through ``inner`` (default: a
    :class:`~qualspec.engine.Recorder`) and embeds each candidate answer while the run
    goes on (see the module docstring); its arguments are a ``SinkFactory``'s.

    Attributes:
        embedded: Texts this sink embedded.
        reused: Texts whose embedding was kept in the store already.
        left: Texts it did not take (queue full, or embedding failed): the analysis
            embeds them at the end.
    """

    def __init__(
        self,
        store: Store,
        run_id: str,
        *,
        retry_window_s: float = 30.0,
        on_fatal: Callable[[BaseException], None] | None = None,
        inner: SinkFactory | None = None,
        max_queue: int = _QUEUE,
    ) -> None:
        if inner is None:
            from qualspec.engine import Recorder

            inner = Recorder
        self._inner: Sink = inner(store, run_id, retry_window_s=retry_window_s, on_fatal=on_fatal)
        self._store = store
        self._queue: queue.Queue[str | None] = queue.Queue(maxsize=max(1, max_queue))
        self._seen: set[str] = set()  # the keys (sha256) of the texts taken
        self._thread: threading.Thread | None = None
        self._broken = False
        self.embedded = 0
        self.reused = 0
        self.left = 0

    @property
    def failure(self) -> str | None:
        """Why recording failed for good (the recorder's), or None."""
        return self._inner.failure

    def response(
        self, record: ResponseRecord, on_commit: Callable[[], object] | None = None
    ) -> None:
        """Record an answer; a candidate's text is offered to the embedder."""
        self._inner.response(record, on_commit)
        if record.kind != "candidate" or record.error is not None or not record.text:
            return
        if self._thread is None or self._broken:
            self.left += 1
            return
        try:
            self._queue.put_nowait(record.text)
        except queue.Full:  # never wait on the event loop: the analysis embeds it
            self.left += 1

    def judgment(
        self, record: JudgmentRecord, on_commit: Callable[[], object] | None = None
    ) -> None:
        """Record an evaluation's record."""
        self._inner.judgment(record, on_commit)

    def cache(self, entry: CacheEntry, on_commit: Callable[[], object] | None = None) -> None:
        """Record a cache entry."""
        self._inner.cache(entry, on_commit)

    async def __aenter__(self) -> EmbeddingSink:
        await self._inner.__aenter__()
        self._thread = threading.Thread(target=self._work, name="qualspec-embedder", daemon=True)
        self._thread.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        import asyncio

        try:
            thread = self._thread
            if thread is not None:  # the last texts embedded, off the event loop
                await asyncio.to_thread(self._finish, thread)
        finally:
            await self._inner.__aexit__(*exc)

    def _finish(self, thread: threading.Thread) -> None:
        self._queue.put(_STOP)
        thread.join()
        if self.embedded or self.reused or self.left:
            _log.debug(
                "embedded %d answers during the run (%d kept before, %d left to the analysis)",
                self.embedded,
                self.reused,
                self.left,
            )

    # ------------------------------------------------------------------ the thread

    def _work(self) -> None:
        stop = False
        while not stop:
            batch = [self._queue.get()]
            if batch[0] is not _STOP:
                time.sleep(_LINGER_S)  # let a batch gather: one wake-up, lookup and commit
            while len(batch) < _BATCH and batch[-1] is not _STOP:
                try:
                    batch.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            stop = batch[-1] is _STOP
            texts = [t for t in batch if t is not None]
            if self._broken:
                self.left += len(texts)
            elif texts:
                try:
                    self._embed(texts)
                except Exception as exc:  # never dies before _STOP: leaving waits for it
                    self._broken = True
                    self.left += len(texts)
                    _log.warning("embedding during the run stopped (%s): left to the end", exc)

    def _embed(self, texts: list[str]) -> None:
        """Embed the texts of a batch that are neither seen nor kept; keep their vectors."""
        keys: dict[str, str] = {}
        if len(self._seen) > _SEEN:  # bounded: the store still knows what is kept
            self._seen.clear()
        for text in texts:
            key = embedding_key(text)
            if key not in self._seen:
                self._seen.add(key)
                keys[key] = text
        if not keys:
            return
        kept = read_vectors(self._store, keys)
        self.reused += len(kept)
        new = [t for t in keys.values() if t not in kept]
        if not new:
            return
        try:
            vectors = embed(new)
        except Exception as exc:  # no usable model: the analysis falls back, the run goes on
            self._broken = True
            self.left += len(new)
            _log.warning("could not embed answers during the run (%s): left to the end", exc)
            return
        # written by the recorder, in the transactions of the answers
        for entry in vector_entries(zip(new, vectors, strict=True)):
            self._inner.cache(entry)
        self.embedded += len(new)


def live_embedding_sink(repeats: bool, method: str | None = None) -> type[EmbeddingSink] | None:
    """The sink that embeds a run's answers as they come (:class:`EmbeddingSink`) when
    its stability will be computed with embeddings: the extra is installed (and
    ``method`` is not ``lexical``) and the plan ``repeats`` a cell (several temperatures
    or runs, so there are answers to compare); else None (the default sink)."""
    return EmbeddingSink if repeats and similarity_method(method) == EMBEDDINGS else None
