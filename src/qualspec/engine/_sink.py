"""Where a run's results go the moment they exist: the :class:`Sink` protocol.

The engine hands every answer, judgment and cache entry to a sink and waits for nothing
but the ``on_commit`` callbacks it passes (they free its concurrency slots once a result
is durable). It knows sinks through this protocol only; :class:`~qualspec.engine.Recorder`
(a writer thread over the store) is the one a session uses unless given another
(``Session(sink=...)``).

A sink may also take a batch of answers at once, ``responses(records, on_commit=None)``
(``on_commit`` runs once, when all of them are durable): the engine hands it the cached
answers of a batch that way, and each one to ``response`` where a sink has no such method.

A sink is an async context manager that starts when entered (a sink that was made but
never entered runs nothing) and, when left, flushes what it was given and stops.

Example (an in-memory sink, e.g. for a test)::

    class Memory:
        failure = None

        def __init__(self, store, run_id, *, retry_window_s, on_fatal=None):
            self.rows = []

        async def __aenter__(self):
            return self

        async def __aexit__(self, *exc):
            pass

        def response(self, record, on_commit=None):
            self.rows.append(record)
            if on_commit is not None:
                on_commit()

        judgment = cache = response

    async with qualspec.Session(sink=Memory) as session: ...
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from qualspec.store import CacheEntry, JudgmentRecord, ResponseRecord, Store

__all__ = ["Sink", "SinkFactory", "close_sink", "open_sink"]


@runtime_checkable
class Sink(Protocol):
    """Takes a run's results as they complete (see the module docstring).

    ``on_commit`` runs on the event loop the sink was entered on, once the record is
    durable (or once the sink failed for good, so that nobody waits forever).
    """

    @property
    def failure(self) -> str | None:
        """Why writing failed for good, as one line (None: it has not)."""
        ...

    def response(
        self, record: ResponseRecord, on_commit: Callable[[], object] | None = None
    ) -> None:
        """Take an answer (a candidate's, a reference's, an ad-hoc call's)."""
        ...

    def judgment(
        self, record: JudgmentRecord, on_commit: Callable[[], object] | None = None
    ) -> None:
        """Take an evaluation's record."""
        ...

    def cache(self, entry: CacheEntry, on_commit: Callable[[], object] | None = None) -> None:
        """Take a cache entry (an answer to reuse)."""
        ...

    async def __aenter__(self) -> Any:
        """Start taking records, on the running event loop."""
        ...

    async def __aexit__(self, *exc: object) -> None:
        """Flush what was taken and stop.

        Raises:
            StoreError: Writing failed for good (``failure`` says why).
        """
        ...


class SinkFactory(Protocol):
    """Makes the sink of one run (``Recorder`` is one): called with the store, the run's
    id, how long one batch may keep failing, and what to call once writing failed for
    good (the engine then starts no new call)."""

    def __call__(
        self,
        store: Store,
        run_id: str,
        *,
        retry_window_s: float,
        on_fatal: Callable[[BaseException], None] | None = None,
    ) -> Sink: ...


async def open_sink(
    factory: SinkFactory | None,
    store: Store,
    run_id: str,
    *,
    retry_window_s: float,
    on_fatal: Callable[[BaseException], None] | None = None,
) -> Sink:
    """The sink of ``run_id``, made by ``factory`` (None: a :class:`Recorder`) and
    entered on the running event loop."""
    if factory is None:
        from qualspec.engine._recorder import Recorder

        factory = Recorder
    sink = factory(store, run_id, retry_window_s=retry_window_s, on_fatal=on_fatal)
    await sink.__aenter__()
    return sink


async def close_sink(sink: Sink) -> None:
    """Leave ``sink``: flush and stop it.

    Raises:
        StoreError: Writing failed for good.
    """
    await sink.__aexit__(None, None, None)
