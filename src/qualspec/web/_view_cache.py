"""Runs' snapshots (``_snapshot``), built once per finished run and kept: in the app's
memory (:class:`ViewCache`: the last :data:`KEEP` viewed) and in the store's cache table
(kind ``view``, one entry per run: ``qualspec cache clear --kind view`` drops them), so a
fresh server opens a large run without loading it.

A snapshot is valid for one state of its run: its key names the qualspec version,
:data:`SNAPSHOT_VERSION`, the run's id, status, finish time, counts and metadata, and the
stamp of its rows (``Store.run_stamp``: row counts and highest ids, superseded rows
included). A run resumed, re-judged or otherwise changed gets a new key, and its snapshot
is built again (and replaces the kept one). A run in progress is built afresh on every
view and never kept. ``qualspec run`` keeps the snapshot of a run of 1,000 answers or more
at its end (:func:`keep_run_view`), so the first view of it reads the snapshot; a smaller
run's is built on its first view and kept then. Either way it is built from the store in
parts (``_snapshot_build``), never by loading the whole run.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import threading
from collections import OrderedDict
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from qualspec.store import CacheEntry, RunSummary, Store
from qualspec.web._run_page import keep_stats, stats_key
from qualspec.web._snapshot import SNAPSHOT_VERSION, RunView, StaleView
from qualspec.web._snapshot_build import build_view

__all__ = [
    "KEEP",
    "VIEW_KIND",
    "ViewCache",
    "keep_run_view",
    "load_view",
    "run_page_parts",
    "run_summary",
    "view_key",
]

_log = logging.getLogger("qualspec.web")

VIEW_KIND = "view"
KEEP = 4  # snapshots kept in memory (a 100,000-answer run's: about 15 MB)
_SETTLED = frozenset({"finished", "failed", "interrupted", "budget_exceeded"})


class ViewCache:
    """Snapshots by key, the ``size`` last used (the web app holds one)."""

    def __init__(self, size: int = KEEP) -> None:
        self.size = size
        self._views: OrderedDict[str, RunView] = OrderedDict()
        self._lock = threading.Lock()  # views are loaded in worker threads
        self.summaries: dict[tuple[Any, ...], RunSummary] = {}  # by run id and stamp

    def get(self, key: str) -> RunView | None:
        """The snapshot kept under ``key``, or None."""
        with self._lock:
            found = self._views.get(key)
            if found is not None:
                self._views.move_to_end(key)
            return found

    def put(self, key: str, view: RunView) -> None:
        """Keep ``view`` under ``key`` (the least recently used dropped past ``size``)."""
        with self._lock:
            self._views[key] = view
            self._views.move_to_end(key)
            while len(self._views) > self.size:
                self._views.popitem(last=False)


def view_key(store: Store, summary: RunSummary, stamp: tuple[Any, ...] | None = None) -> str | None:
    """The key of the run's snapshot in its present state (``stamp``: the run's
    ``Store.run_stamp`` when the caller has it); None for a run in progress."""
    if summary.status not in _SETTLED or summary.finished_at is None:
        return None
    from qualspec.version import __version__

    facts = [
        VIEW_KIND,
        SNAPSHOT_VERSION,
        __version__,
        summary.id,
        summary.status,
        str(summary.finished_at),
        summary.n_responses,
        summary.n_judgments,
        summary.n_errors,
        summary.n_unscored,
        summary.n_cached,
        summary.cost_usd,
        summary.metadata,
        stamp if stamp is not None else store.run_stamp(summary.id),
    ]
    text = json.dumps(facts, sort_keys=True, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _entry_key(run_id: str) -> str:
    return f"{VIEW_KIND}:{run_id}"


def _summary_key(run_id: str) -> str:
    return f"{VIEW_KIND}-summary:{run_id}"


def _plain(summary: RunSummary) -> dict[str, Any]:
    out = dataclasses.asdict(summary)
    for name in ("started_at", "finished_at", "heartbeat_at"):
        value = out[name]
        out[name] = None if value is None else value.isoformat()
    return out


def _summary(data: Mapping[str, Any]) -> RunSummary:
    values = dict(data)
    for name in ("started_at", "finished_at", "heartbeat_at"):
        value = values[name]
        values[name] = None if value is None else datetime.fromisoformat(value)
    return RunSummary(**values)


def run_summary(store: Store, run_id: str, memory: ViewCache | None = None) -> RunSummary:
    """The run's summary (``Store.get_run``'s, by id or unique prefix). A finished run's is
    kept (in ``memory`` and in the store, cache kind ``view``) under its stamp
    (``Store.run_stamp``, a cheap read): a large run's counts are summed over its rows
    once, not on every view.

    Raises:
        UnknownRunError: As ``Store.get_run``.
    """
    stamp = store.run_stamp(run_id)
    if stamp is None or stamp[0] not in _SETTLED or stamp[1] == "None":
        return store.get_run(run_id)  # a prefix, an unknown id, a run in progress
    key = (run_id, *stamp)
    found = memory.summaries.get(key) if memory is not None else None
    if found is not None:
        return found
    try:
        entry = store.cache_get_many([_summary_key(run_id)]).get(_summary_key(run_id))
        kept = entry.structured if entry is not None else None
        if isinstance(kept, Mapping) and kept.get("stamp") == list(key):
            found = _summary(kept["summary"])
    except Exception as exc:  # an unreadable or damaged entry: summed again
        _log.warning("kept summary of run %s unusable (%s)", run_id, exc)
    if found is None:
        found = store.get_run(run_id)
        entry = CacheEntry(
            key=_summary_key(run_id),
            kind=VIEW_KIND,
            provider="qualspec",
            model=f"view-v{SNAPSHOT_VERSION}",
            structured={"stamp": list(key), "summary": _plain(found)},
        )
        try:
            store.cache_put_many([entry])
        except Exception as exc:  # a read-only store: summed again next time
            _log.warning("could not keep the summary of run %s (%s)", run_id, exc)
    if memory is not None:
        if len(memory.summaries) > 1000:
            memory.summaries.clear()
        memory.summaries[key] = found
    return found


def _build(store: Store, summary: RunSummary) -> dict[str, Any]:
    """The run's snapshot, read from the store in parts (``_snapshot_build``)."""
    try:
        return build_view(store, summary)
    except StaleView:  # changed while it was read (a run being resumed): once more
        return build_view(store, summary)


def _kept(store: Store, summary: RunSummary, key: str) -> Mapping[str, Any] | None:
    """The snapshot kept in the store under ``key``, or None."""
    try:
        entry = store.cache_get_many([_entry_key(summary.id)]).get(_entry_key(summary.id))
    except Exception as exc:  # an unreadable store: built again
        _log.warning("kept view of run %s unreadable (%s): built again", summary.id, exc)
        return None
    found = entry.structured if entry is not None else None
    if isinstance(found, Mapping) and found.get("key") == key:
        return found
    return None


def _keep(store: Store, summary: RunSummary, key: str, snapshot: Mapping[str, Any]) -> None:
    entry = CacheEntry(
        key=_entry_key(summary.id),
        kind=VIEW_KIND,
        provider="qualspec",
        model=f"view-v{SNAPSHOT_VERSION}",
        structured={**snapshot, "key": key},
    )
    try:
        store.cache_put_many([entry])
    except Exception as exc:  # a read-only store: the view is still right
        _log.warning("could not keep the view of run %s (%s)", summary.id, exc)


def load_view(
    store: Store,
    summary: RunSummary,
    memory: ViewCache | None = None,
    *,
    fresh: bool = False,
    key: str | None = None,
) -> RunView:
    """The run's snapshot: from ``memory``, else from the store, else built from the run
    (and kept when the run is finished). ``fresh``: built again whatever is kept;
    ``key``: :func:`view_key`'s, when the caller has it."""
    key = key or view_key(store, summary)
    if key is not None and not fresh:
        found = memory.get(key) if memory is not None else None
        if found is not None:
            return found
        kept = _kept(store, summary, key)
        if kept is not None:
            try:
                view = RunView(kept)
            except Exception as exc:  # a damaged entry: built again (and replaced)
                _log.warning("kept view of run %s unusable (%s): built again", summary.id, exc)
            else:
                _remember(memory, summary, key, view)
                return view
    snapshot = _build(store, summary)
    view = RunView(snapshot)
    if key is not None:
        _keep(store, summary, key, snapshot)
        _remember(memory, summary, key, view)
    return view


def _remember(memory: ViewCache | None, summary: RunSummary, key: str, view: RunView) -> None:
    """Keep ``view`` in ``memory``, and its stats for the runs list."""
    if memory is not None:
        memory.put(key, view)
    stats = stats_key(summary)
    if stats is not None:
        keep_stats(stats, view.page_parts["stats"])


def keep_run_view(store: Store, run_id: str) -> bool:
    """Build and keep the snapshot and the summary of a finished run (as its first view
    would), unless kept already, so that the web app opens it without loading it; False
    when the run is still in progress.

    Example:
        >>> keep_run_view(store, run_id)  # at the end of a large run
        True
    """
    summary = run_summary(store, run_id)  # kept too: a view need not sum the run's rows
    key = view_key(store, summary)
    if key is None:
        return False
    if _kept(store, summary, key) is None:
        _keep(store, summary, key, _build(store, summary))
    return True


def run_page_parts(store: Store, run_id: str) -> dict[str, Any]:
    """What a finished run's page shows whatever the query (its verdicts, the overview
    per candidate, the most failed criteria and checks, the matrix's rows), JSON-ready:
    from its kept snapshot, else built from the store in parts (and kept).

    Example:
        >>> parts = run_page_parts(store, run_id)  # the HTML report of a large run
        >>> parts["facts"][0]
        ['verdicts', '3 of 4 candidate lines passed', '...']
    """
    summary = run_summary(store, run_id)
    return dict(load_view(store, summary).page_parts)
