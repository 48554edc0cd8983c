"""Closing a store while other work goes on: closing a SQLite store checkpoints its log to
disk (tens of milliseconds of I/O), which ``qualspec run`` does while it writes the results."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from qualspec.store import Store

__all__ = ["BackgroundClose"]


class BackgroundClose:
    """Closes a store in a thread of its own while the block runs; the block's end waits
    for it (and raises what closing raised, unless the block raised)."""

    def __init__(self, store: Store) -> None:
        self._error: BaseException | None = None
        self._thread = threading.Thread(
            target=self._run, args=(store,), name="qualspec-store-close"
        )

    def _run(self, store: Store) -> None:
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
