"""The call layer's cache: keys per endpoint, reads (memory, then the store) and writes
through the run's recorder, with each kind's lifetime. A base class of
:class:`~qualspec.engine.CallEngine`, kept apart for its size."""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from qualspec.engine._reply import cached_structured
from qualspec.store import CacheEntry

if TYPE_CHECKING:
    from qualspec.engine._options import ExecuteOptions
    from qualspec.engine._sink import Sink
    from qualspec.providers import ChatResponse, Provider
    from qualspec.store import ResponseRecord, Store

__all__ = ["MEMORY_ENTRIES", "CallCache", "endpoint"]

log = logging.getLogger("qualspec.engine")


def endpoint(provider: Provider) -> str:
    """Where a provider's calls go (its ``endpoint``, else its name)."""
    value = getattr(provider, "endpoint", None)
    return str(value) if value else f"name:{provider.name}"


MEMORY_ENTRIES = 20_000
"""Cache entries of other kinds than candidate a session keeps in memory (a judge's
repeated calls); older ones are read back from the store, so memory stays flat."""


class CallCache:
    """The cache methods of the call layer (see :class:`~qualspec.engine.CallEngine`)."""

    store: Store
    options: ExecuteOptions

    def __init__(self) -> None:
        self._memory: dict[str, CacheEntry] = {}
        self._forgot = False  # some entry of this session is now only in the store
        self._kinds_in_store: set[str] | None = None
        self._kinds_lock: asyncio.Lock | None = None
        # per provider object: it and its cache_key_of (its endpoint found once)
        self._key_of: dict[int, tuple[Provider, Callable[[str], str]]] = {}

    def cache_key(self, call: str, provider: Provider) -> str:
        """The cache key of a call: its call key plus the endpoint it goes to (for replicas,
        the provider's ``cache_endpoint``: one key whichever replica answers)."""
        found = self._key_of.get(id(provider))
        if found is None or found[0] is not provider:
            found = self._key_of[id(provider)] = (provider, self.cache_key_of(provider))
        return found[1](call)

    def cache_key_of(self, provider: Provider) -> Callable[[str], str]:
        """:meth:`cache_key` for many calls to ``provider`` (its endpoint found once)."""
        where = getattr(provider, "cache_endpoint", None) or endpoint(provider)
        suffix = f"@{where}"

        def key(call: str) -> str:
            return hashlib.sha256((call + suffix).encode()).hexdigest()[:32]

        return key

    def _reads_enabled(self, kind: str | None = None) -> bool:
        if kind is not None and kind in self.options.refresh_kinds:
            return False
        return self.options.use_cache and not self.options.refresh

    def now(self) -> datetime:
        """The cache's "now" (``ExecuteOptions.clock``, else the system clock)."""
        clock = self.options.clock
        return clock() if clock is not None else datetime.now(UTC)

    def cache_get_many(self, keys: set[str]) -> dict[str, CacheEntry]:
        """Bulk read of cache entries (one query)."""
        if not self._reads_enabled() or not keys:
            return {}
        # the lifetime asked for now judges each entry by its age (not the one it was
        # written with)
        return self.store.cache_get_many(keys, self.now(), self.options.cache_ttl)

    def cache_hits(self, keys: set[str]) -> dict[str, tuple[int | None, int | None]]:
        """The keys :meth:`cache_get_many` would find, each with its entry's input and
        output tokens (one query; only a store that copies cached answers itself has it:
        a SQLite file)."""
        if not self._reads_enabled() or not keys:
            return {}
        hits = self.store.cache_hits  # type: ignore[attr-defined]
        found: dict[str, tuple[int | None, int | None]] = hits(
            keys, self.now(), self.options.cache_ttl
        )
        return found

    async def cache_get(self, kind: str, key: str) -> CacheEntry | None:
        """A cache entry, from this session's memory or the store.

        The store is asked only when it held entries of ``kind`` when the session first
        looked: a fresh store costs no query per call. Store reads run in a worker thread,
        never on the event loop (on PostgreSQL each is a network round trip).
        """
        if not self._reads_enabled(kind):
            return None
        entry = self._memory.get(key)
        if entry is not None:
            return entry
        if self._kinds_in_store is None:
            if self._kinds_lock is None:
                self._kinds_lock = asyncio.Lock()
            async with self._kinds_lock:  # one query, however many calls ask at once
                if self._kinds_in_store is None:
                    self._kinds_in_store = await asyncio.to_thread(self.store.cache_kinds)
        if kind not in self._kinds_in_store and not self._forgot:
            return None
        found = (
            await asyncio.to_thread(
                self.store.cache_get_many, [key], self.now(), self.options.cache_ttl
            )
        ).get(key)
        if found is not None:
            log.debug("cache hit (%s)", kind)
        return found

    def cache_put(
        self,
        recorder: Sink,
        entry: CacheEntry,
        on_commit: Callable[[], object] | None = None,
    ) -> bool:
        """Queue a cache entry for the store and remember it for this session.

        ``on_commit`` runs once the entry is durable. False (and nothing queued) when the
        cache is off.
        """
        if not self.options.use_cache and not self.options.refresh:
            return False
        self._remember(entry)
        recorder.cache(entry, on_commit=on_commit)
        return True

    def record_answer(
        self,
        recorder: Sink,
        record: ResponseRecord,
        entry: CacheEntry,
        on_commit: Callable[[], object] | None = None,
    ) -> None:
        """Queue an answer and its cache entry (as ``recorder.response(record, on_commit)``
        then :meth:`cache_put`): as one item where the sink takes them so (its optional
        ``answer(record, entry, on_commit)``: one queue item, one transaction)."""
        together = getattr(recorder, "answer", None)
        if together is None or not (self.options.use_cache or self.options.refresh):
            recorder.response(record, on_commit=on_commit)
            self.cache_put(recorder, entry)
            return
        self._remember(entry)
        together(record, entry, on_commit)

    def _remember(self, entry: CacheEntry) -> None:
        """Keep an entry of a kind read one by one (not candidate: read in bulk) in
        memory, forgetting the oldest beyond ``MEMORY_ENTRIES`` (the store has it)."""
        if entry.kind != "candidate":
            if len(self._memory) >= MEMORY_ENTRIES:
                del self._memory[next(iter(self._memory))]
                self._forgot = True
            self._memory[entry.key] = entry

    def cache_entry(
        self,
        kind: str,
        key: str,
        provider: Provider,
        model: str,
        response: ChatResponse,
        effective: float | None,
    ) -> CacheEntry:
        """The cache entry for a successful answer, with the kind's TTL."""
        now = self.now()
        ttl = self.options.cache_ttl.get(kind)
        return CacheEntry(
            key=key,
            kind=kind,
            provider=provider.name,
            model=model,
            text=response.text,
            finish_reason=response.finish_reason,
            input_tokens=response.input_tokens,
            output_tokens=response.output_tokens,
            effective_temperature=effective,
            structured=cached_structured(response),
            created_at=now,
            expires_at=None if ttl is None else now + timedelta(seconds=ttl),
        )
