"""Closing a store while other work goes on: closing a SQLite store checkpoints its log to
disk (tens of milliseconds of I/O), which ``qualspec run`` does while it writes the results;
before it, a large run's page snapshot is kept (:func:`view_keeper`)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from qualspec.store import RunRecord, Store

__all__ = ["KEEP_VIEW_FROM", "KEEP_VIEW_UNTIL", "BackgroundClose", "view_keeper"]


class BackgroundClose:
    """Closes a store in a thread of its own while the block runs; the block's end waits
    for it (and raises what closing raised, unless the block raised).

    ``first`` runs in that thread before the store closes (work on the store that the
    block need not wait for); what it raises is logged, never raised."""

    def __init__(self, store: Store, first: Callable[[], object] | None = None) -> None:
        self._error: BaseException | None = None
        self._first = first
        self._thread = threading.Thread(
            target=self._run, args=(store,), name="qualspec-store-close"
        )

    def _run(self, store: Store) -> None:
        if self._first is not None:
            try:
                self._first()
            except Exception as exc:  # noqa: BLE001 - optional work: the run is kept anyway
                logging.getLogger("qualspec").warning("after the run: %s", exc)
        try:
            store.close()
        except BaseException as exc:  # noqa: BLE001 - raised by __exit__ in the main thread
            self._error = exc

    def __enter__(self) -> None:
        self._thread.start()

    def __exit__(self, *exc: object) -> None:
        self._thread.join()
        if self._error is not None and exc[0] is None:
            raise self._error


KEEP_VIEW_FROM = 1000
"""Answers from which a run's page snapshot is kept at its end, so that ``qualspec serve``
opens it without loading the run (a smaller run's is built on its first view, quickly)."""

KEEP_VIEW_UNTIL = 250_000
"""Answers up to which a large run's page snapshot is kept at its end. The snapshot is
built from the store in parts, but it holds every distinct input id and a few numbers per
answer: past this, the end of the run would grow with it, so ``qualspec serve`` builds it
on the run's first view instead (the same builder)."""


def view_keeper(store: Store, record: RunRecord) -> Callable[[], object] | None:
    """Keeping a large run's page snapshot (``qualspec.web.keep_run_view``), or None."""
    if sum(1 for r in record.responses if r.kind == "candidate") < KEEP_VIEW_FROM:
        return None
    run_id = record.summary.id

    def keep() -> object:
        from qualspec.web import keep_run_view

        return keep_run_view(store, run_id)

    return keep
