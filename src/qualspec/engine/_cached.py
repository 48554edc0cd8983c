"""What the store already holds for a batch of a run's work (a base of ``Executor``): the
cached answers of its calls, read in one query, made into this run's response records.

Every answer a run reports is a response record of that run, a cached one too; the
records of a batch are made in one pass and handed to the recorder together.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from qualspec.store import ResponseRecord

if TYPE_CHECKING:
    from qualspec.engine._calls import CallEngine
    from qualspec.engine._items import WorkItem
    from qualspec.engine._options import ExecuteOptions, ExecuteStats
    from qualspec.engine._reply import Reply
    from qualspec.engine._sink import Sink
    from qualspec.providers import Provider
    from qualspec.store import CacheEntry

__all__ = ["CachedAnswers", "cached_record"]


class CachedAnswers:
    """Cached answers for a batch of work items, as response records of the run."""

    _calls: CallEngine
    _providers: dict[str, Provider]
    _recorder: Sink
    _opt: ExecuteOptions
    _done: dict[str, ResponseRecord]
    _versions: Mapping[str, Mapping[str, int]]
    stats: ExecuteStats

    def _unwritten(self, rows: int = 1, *, bulk: bool = False) -> Callable[[], None]:
        """Counts records given to the recorder until they are written (the executor's)."""
        raise NotImplementedError

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

    async def _cache_entries(self, keys: Mapping[str, str]) -> dict[str, CacheEntry]:
        """The cache entries of ``keys``' cache keys: one query, in a worker thread."""
        if not keys:
            return {}
        return await asyncio.to_thread(self._calls.cache_get_many, set(keys.values()))

    def _cached_records(
        self, items: list[WorkItem], keys: Mapping[str, str], entries: Mapping[str, CacheEntry]
    ) -> dict[str, ResponseRecord]:
        """The response records of the items answered from the cache (by item key), given
        to the recorder together (one ``responses`` call where the sink has it).

        Each is made straight from its entry, as ``ResponseRecord.from_reply`` makes it
        of ``Reply.from_cache`` (nothing paid, no attempt, no queue time: a bulk-read
        answer never waited for a slot), without the reply in between."""
        out: dict[str, ResponseRecord] = {}
        if not entries:
            return out
        now = _now()
        stats = self.stats
        cost = self._calls.cost
        versions: dict[int, dict[str, int]] = {}  # by the id of an item's prompt parts
        for item in items:
            cache_key = keys.get(item.key)
            entry = entries.get(cache_key) if cache_key is not None else None
            if entry is None or cache_key is None:
                continue
            saved = cost(item.provider, item.model, entry.input_tokens, entry.output_tokens)
            if item.kind == "candidate":
                stats.cached_candidate += 1
            else:
                stats.cached_reference += 1
            stats.saved_usd += saved or 0.0
            parts = item.prompt_parts
            found = versions.get(id(parts))
            if found is None:
                found = versions[id(parts)] = self._part_versions(item)
            out[item.key] = cached_record(item, entry, dict(found), now)
        self._give_cached(list(out.values()))
        return out

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
