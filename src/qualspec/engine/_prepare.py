"""The evaluators' preparations (``Evaluator.prepare``: a judge's calibration on known
pairs), made at the same time as each other and as the run's calls.

A preparation's calls go through the session (limits, cache, cost, budget) like any
other; judging waits for answers anyway, so nothing waits for a preparation but the end
of the run, which records what they returned (``judge_calibration`` in its metadata).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from qualspec.engine import Session  # the package's name: no file cycle (see tests)
    from qualspec.engine._evaluators import Evaluator
    from qualspec.spec import ProviderConfig

__all__ = ["Preparations", "alongside"]

_T = TypeVar("_T")


class _Context:
    """One evaluator's :class:`~qualspec.engine.PrepareContext`."""

    def __init__(
        self,
        session: Session,
        providers: Mapping[str, ProviderConfig],
        calibrate: bool,
        shared: dict[str, asyncio.Future[Any]],
        warnings: list[str],
    ) -> None:
        self.session = session
        self.providers = providers
        self.calibrate = calibrate
        self._shared = shared
        self._warnings = warnings

    def warn(self, line: str) -> None:
        self._warnings.append(line)

    async def once(self, key: str, make: Callable[[], Awaitable[_T]]) -> _T:
        found = self._shared.get(key)
        if found is None:
            found = self._shared[key] = asyncio.ensure_future(make())
        result: _T = await asyncio.shield(found)
        return result


class Preparations:
    """Every evaluator's ``prepare``, in a task of its own, at the same time.

    They start once ``heard`` is set (a provider answered or refused one of the run's
    calls: a refused key then costs one call, not one per preparation call) or
    :meth:`release` is called (the run made no call: everything was cached). ``results``
    (by evaluator name, what ``prepare`` returned) and ``warnings`` (in the evaluators'
    order) are read once :meth:`wait` returned.
    """

    def __init__(
        self,
        session: Session,
        evaluators: Sequence[Evaluator],
        providers: Mapping[str, ProviderConfig],
        *,
        calibrate: bool,
        heard: asyncio.Event,
    ) -> None:
        self._shared: dict[str, asyncio.Future[Any]] = {}
        self._lines: list[list[str]] = [[] for _ in evaluators]
        self._evaluators = list(evaluators)
        self._contexts = [
            _Context(session, providers, calibrate, self._shared, lines) for lines in self._lines
        ]
        self._heard = heard
        self._released = asyncio.Event()
        self.results: dict[str, dict[str, Any]] = {}
        self.task: asyncio.Future[list[Mapping[str, Any] | None]] = asyncio.ensure_future(
            self._run()
        )

    async def _run(self) -> list[Mapping[str, Any] | None]:
        waiting = [asyncio.ensure_future(e.wait()) for e in (self._heard, self._released)]
        try:
            await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for each in waiting:
                each.cancel()
        pairs = zip(self._evaluators, self._contexts, strict=True)
        return await _all([e.prepare(c) for e, c in pairs])

    def release(self) -> None:
        """Start now, whether or not a provider was heard from."""
        self._released.set()

    @property
    def warnings(self) -> list[str]:
        """The preparations' warnings, evaluator by evaluator."""
        return [line for lines in self._lines for line in lines]

    async def wait(self) -> dict[str, dict[str, Any]]:
        """Every preparation's result, by evaluator name (those that returned one)."""
        self.release()
        done = await self.task
        self.results = {
            e.name: dict(r) for e, r in zip(self._evaluators, done, strict=True) if r is not None
        }
        return self.results

    async def cancel(self) -> None:
        """Stop what is still running (a run that ended early)."""
        pending = [self.task, *self._shared.values()]
        for each in pending:
            each.cancel()
        await asyncio.gather(*pending, return_exceptions=True)


async def _all(calls: Sequence[Coroutine[Any, Any, _T]]) -> list[_T]:
    """The results of ``calls``, made at the same time; the first exception cancels the
    others."""
    tasks = [asyncio.ensure_future(c) for c in calls]
    try:
        return list(await asyncio.gather(*tasks))
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise


async def alongside(main: Coroutine[Any, Any, _T], preparing: Preparations) -> _T:
    """``main``'s result, once the preparations are done too (released when ``main`` is
    done); an exception of either stops the other (``main`` is cancelled, and the
    exception raised)."""
    task = asyncio.ensure_future(main)
    task.add_done_callback(lambda _: preparing.release())
    other = preparing.task
    both: list[asyncio.Future[Any]] = [task, other]
    try:
        await asyncio.wait(both, return_when=asyncio.FIRST_EXCEPTION)
    except asyncio.CancelledError:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        raise
    if other.done() and not other.cancelled() and other.exception() is not None:
        if not task.done():
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        raise other.exception()  # type: ignore[misc]
    return await task
