"""What the store already holds for a batch of a run's work (a base of ``Executor``): the
cached answers of its calls, read in one query, made into this run's response records.

Every answer a run reports is a response record of that run, a cached one too; the
records of a batch are made in one pass and handed to the recorder together. Where
nothing in the run needs a cached cell's record (no evaluation of it, nothing waiting on
its answer) and the store can (a SQLite file), the store copies the answer itself: the
cache is asked only which keys it holds (and their tokens), and each such cell is handed
to the recorder as a plain tuple of its identity and cache key (``copy_cached``), with no
record and no entry read into Python.
"""

from __future__ import annotations

import asyncio
import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from qualspec.store import COPY_FIELDS, ResponseRecord

if TYPE_CHECKING:
    from qualspec.engine._blocks import Block
    from qualspec.engine._calls import CallEngine
    from qualspec.engine._items import WorkItem
    from qualspec.engine._options import ExecuteOptions, ExecuteStats
    from qualspec.engine._reply import Reply
    from qualspec.engine._sink import Sink
    from qualspec.providers import Provider
    from qualspec.store import CacheEntry

__all__ = [
    "BACKLOG",
    "CACHED_BACKLOG",
    "COPY_BACKLOG",
    "CacheLookup",
    "CachedAnswers",
    "cached_record",
]

BACKLOG = 2_000
"""Records not yet written (beyond those holding a call slot) before the plan waits."""
CACHED_BACKLOG = 20_000
"""Cached answers not yet written before the plan waits: they are written in large
transactions (see ``Recorder.responses``), so more of them may wait for one."""
COPY_BACKLOG = 100_000
"""Cached cells to copy in the store not yet written before the plan waits: a few
hundred bytes each (no record), written in the largest transactions (a transaction's
commit, and the index pages it rewrites, was most of a cached rerun's time)."""

# a cell copied from the cache: its item's fields, as ``Store.copy_cached`` takes them
# (then its cache key, prompt versions and time)
_IDENTITY = operator.attrgetter(*COPY_FIELDS[: COPY_FIELDS.index("call_key")])


@dataclass(frozen=True, slots=True)
class CacheLookup:
    """What the cache holds for a batch: the entries of the cells whose record is
    needed, and the keys (with their tokens) of the cells the store copies itself."""

    keys: dict[str, str] = field(default_factory=dict)  # item key -> cache key (records)
    entries: dict[str, CacheEntry] = field(default_factory=dict)
    copy_keys: dict[str, str] = field(default_factory=dict)  # item key -> cache key (copies)
    hits: dict[str, tuple[int | None, int | None]] = field(default_factory=dict)


class CachedAnswers:
    """Cached answers for a batch of work items, as response records of the run (or
    copied by the store), and the count of what is given to the recorder unwritten."""

    _calls: CallEngine
    _providers: dict[str, Provider]
    _recorder: Sink
    _opt: ExecuteOptions
    _done: dict[str, ResponseRecord]
    _versions: Mapping[str, Mapping[str, int]]
    _response_evals: list[Any]
    _group_evals: list[Any]
    _backlog: int
    _cached_backlog: int
    _copy_backlog: int
    _drained: asyncio.Event
    run_id: str
    stats: ExecuteStats

    def _unwritten(
        self, rows: int = 1, *, bulk: bool = False, copy: bool = False
    ) -> Callable[[], None]:
        """Count ``rows`` records given to the recorder without a call slot (a cached
        answer, an evaluation; ``bulk``: cached answers given together; ``copy``: cells
        the store copies from the cache) until they are written: the plan is read no
        faster than they are."""
        if copy:
            self._copy_backlog += rows
        elif bulk:
            self._cached_backlog += rows
        else:
            self._backlog += rows

        def written() -> None:
            if copy:
                self._copy_backlog -= rows
            elif bulk:
                self._cached_backlog -= rows
            else:
                self._backlog -= rows
            if not self._behind():
                self._drained.set()

        return written

    def _behind(self) -> bool:
        return (
            self._backlog > BACKLOG
            or self._cached_backlog > CACHED_BACKLOG
            or self._copy_backlog > COPY_BACKLOG
        )

    async def _wait_for_writes(self) -> None:
        """Wait while more than ``BACKLOG`` such records (``CACHED_BACKLOG`` cached
        answers, ``COPY_BACKLOG`` copies) are unwritten (a second at most each time: a
        sink that never calls back slows the run, never stops it)."""
        while self._behind():
            self._drained.clear()
            try:
                await asyncio.wait_for(self._drained.wait(), 1.0)
            except TimeoutError:
                return

    def _cache_keys(self, items: list[WorkItem], done: Mapping[str, object]) -> dict[str, str]:
        """The cache key of each item (by its key) whose answer may come from the cache:
        not done in this run, its kind not refreshed."""
        refresh = self._opt.refresh_kinds
        key_of = {name: self._calls.cache_key_of(p) for name, p in self._providers.items()}
        return {
            item.key: key_of[item.provider](item.call_key)
            for item in items
            if item.key not in done and item.key not in self._done and item.kind not in refresh
        }

    def _copies(self) -> bool:
        """Whether the store copies cached answers itself (the recorder and the store
        both can) and nothing in this run needs a cached cell's record (no evaluation of
        an answer, no group waiting on its members')."""
        if self._response_evals or self._group_evals:
            return False
        if not getattr(self._recorder, "copies_cached", False):
            return False
        return callable(getattr(self._calls.store, "cache_hits", None))

    async def _look_up_cache(
        self, batch: list[Block], items: list[WorkItem], done: Mapping[str, object]
    ) -> CacheLookup:
        """What the cache holds for a batch's items not done: the entries of those whose
        record is needed, the keys of those the store copies (one query each, in a
        worker thread). A block with an item depending on another has its records made."""
        keys = self._cache_keys(items, done)
        copy_keys: dict[str, str] = {}
        if keys and self._copies():
            for block in batch:
                if any(i.depends_on for i in block.items):
                    continue
                for item in block.items:
                    found = keys.pop(item.key, None)
                    if found is not None:
                        copy_keys[item.key] = found
        hits: dict[str, tuple[int | None, int | None]] = {}
        if copy_keys:
            hits = await asyncio.to_thread(self._calls.cache_hits, set(copy_keys.values()))
        return CacheLookup(keys, await self._cache_entries(keys), copy_keys, hits)

    async def _cache_entries(self, keys: Mapping[str, str]) -> dict[str, CacheEntry]:
        """The cache entries of ``keys``' cache keys: one query, in a worker thread."""
        if not keys:
            return {}
        return await asyncio.to_thread(self._calls.cache_get_many, set(keys.values()))

    def _count_cached(self, item: WorkItem, tokens_in: int | None, tokens_out: int | None) -> None:
        saved = self._calls.cost(item.provider, item.model, tokens_in, tokens_out)
        if item.kind == "candidate":
            self.stats.cached_candidate += 1
        else:
            self.stats.cached_reference += 1
        self.stats.saved_usd += saved or 0.0

    def _cached_records(
        self, items: list[WorkItem], found: CacheLookup
    ) -> tuple[dict[str, ResponseRecord], set[str]]:
        """The response records of the items answered from the cache (by item key), given
        to the recorder together (one ``responses`` call where the sink has it), and the
        keys of those the store copies itself (given as ``copy_cached`` cells).

        Each record is made straight from its entry, as ``ResponseRecord.from_reply``
        makes it of ``Reply.from_cache`` (nothing paid, no attempt, no queue time: a
        bulk-read answer never waited for a slot), without the reply in between."""
        out: dict[str, ResponseRecord] = {}
        copied: set[str] = set()
        if not found.entries and not found.hits:
            return out, copied
        now = _now()
        cells: list[tuple[Any, ...]] = []
        versions: dict[int, dict[str, int]] = {}  # by the id of an item's prompt parts
        for item in items:
            entry: CacheEntry | None = None
            cache_key = found.copy_keys.get(item.key)
            tokens = None if cache_key is None else found.hits.get(cache_key)
            if tokens is None:
                cache_key = found.keys.get(item.key)
                entry = None if cache_key is None else found.entries.get(cache_key)
                if entry is None:
                    continue
                tokens = (entry.input_tokens, entry.output_tokens)
            self._count_cached(item, *tokens)
            parts = item.prompt_parts
            part_versions = versions.get(id(parts))
            if part_versions is None:
                part_versions = versions[id(parts)] = self._part_versions(item)
            if entry is None:  # copied by the store: the same versions object, unchanged
                cells.append((*_IDENTITY(item), cache_key, part_versions, now))
                copied.add(item.key)
            else:
                out[item.key] = cached_record(item, entry, dict(part_versions), now)
        self._give_cached(list(out.values()))
        if cells:
            copy = getattr(self._recorder, "copy_cached")  # noqa: B009 - optional (see _copies)
            copy(cells, on_commit=self._unwritten(len(cells), copy=True))
        return out, copied

    def _give_cached(self, records: list[ResponseRecord]) -> None:
        """Hand cached answers to the recorder: together where it takes them so (its
        ``responses``: large transactions), else one by one."""
        if not records:
            return
        together = getattr(self._recorder, "responses", None)
        if callable(together):
            together(records, on_commit=self._unwritten(len(records), bulk=True))
            return
        for record in records:
            self._recorder.response(record, on_commit=self._unwritten())

    def _response_record(
        self, item: WorkItem, reply: Reply, now: datetime | None = None
    ) -> ResponseRecord:
        return ResponseRecord.from_reply(
            reply,
            **_identity(item),
            prompt_versions=self._part_versions(item),
            created_at=now or _now(),
            call_key=reply.key,
            input_values=item.input_values,
        )

    def _part_versions(self, item: WorkItem) -> dict[str, int]:
        out: dict[str, int] = {}
        for name, text in item.prompt_parts.items():
            version = self._versions.get(name, {}).get(text)
            if version is not None:
                out[name] = version
        return out


def _now() -> datetime:
    return datetime.now(UTC)


def cached_record(
    item: WorkItem, entry: CacheEntry, prompt_versions: dict[str, int], now: datetime
) -> ResponseRecord:
    """The record of ``item``'s cell answered from ``entry`` (a cached rerun makes one per
    cell; ``tests/engine/test_recorder_bulk.py`` holds it equal to the general path's)."""
    return ResponseRecord.from_cache_entry(
        entry, identity=item, prompt_versions=prompt_versions, created_at=now
    )


def _identity(item: WorkItem) -> dict[str, Any]:
    """The fields a response record takes from its work item, whatever answered it."""
    return {
        "key": item.key,
        "candidate": item.candidate,
        "provider": item.provider,
        "model": item.model,
        "scenario": item.scenario,
        "role": item.role,
        "input_id": item.input_id,
        "temperature": item.temperature,
        "run_index": item.run_index,
        "kind": item.kind,
    }
