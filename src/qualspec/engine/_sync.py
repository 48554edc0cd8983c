"""Running the async engine from synchronous code: :func:`run_sync`."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar

__all__ = ["run_sync"]

_T = TypeVar("_T")


def run_sync(main: Callable[[], Awaitable[_T]]) -> _T:
    """Run a coroutine function to completion from synchronous code.

    With no event loop running this is ``asyncio.run``; inside a running loop (Jupyter,
    an async test) it runs in a worker thread with its own loop, so it never deadlocks.
    In the main thread, SIGTERM then stops it as Ctrl-C does (:mod:`._signals`).
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(_as_coroutine(main)).value
    import concurrent.futures

    with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="qualspec-sync") as pool:
        return pool.submit(lambda: asyncio.run(_as_coroutine(main)).value).result()


class _Boxed(Generic[_T]):
    """A coroutine's result with a constant ``repr``.

    When ``asyncio.run`` restores the SIGINT handler, ``signal.signal`` formats the old
    handler (which holds the main task) into an error message it then discards: that is
    ``repr`` of the task's result. For a whole run (thousands of records) that took tens
    of milliseconds of CPU, twice per run.
    """

    __slots__ = ("value",)

    def __init__(self, value: _T) -> None:
        self.value = value

    def __repr__(self) -> str:
        return "<result>"


async def _as_coroutine(main: Callable[[], Awaitable[_T]]) -> _Boxed[_T]:
    from qualspec.engine._signals import sigterm_interrupts

    with sigterm_interrupts():  # SIGTERM: interrupted, as Ctrl-C
        return _Boxed(await main())
