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
        go: Callable[[], Awaitable[None]],
    ) -> None:
        self.session = session
        self.providers = providers
        self.calibrate = calibrate
        self.warnings: list[str] = []
        self.reached = asyncio.Event()  # it waits for the run's calls (``ready``)
        self._shared = shared
        self._go = go

    def warn(self, line: str) -> None:
        self.warnings.append(line)

    async def ready(self) -> None:
        self.reached.set()
        await self._go()

    async def once(self, key: str, make: Callable[[], Awaitable[_T]]) -> _T:
        found = self._shared.get(key)
        if found is None:
            found = self._shared[key] = asyncio.ensure_future(make())
        else:  # another evaluator's measurement: it waits as that one does
            self.reached.set()
        result: _T = await asyncio.shield(found)
        return result


class Preparations:
    """Every evaluator's ``prepare``, each in a task of its own, at the same time.

    A preparation runs until it calls ``ctx.ready()`` (a calibration: once it looked up
    its cache and opened its own run) before the run is created (:meth:`started`), so the
    runs are created in the order they were before; from ``ready`` on it waits until
    ``heard`` is set (a provider answered or refused one of the run's calls: a refused key
    then costs one call, not one per calibration call) or :meth:`release` is called (the
    run made no call: everything was cached). ``results`` (by evaluator name, what
    ``prepare`` returned) and ``warnings`` (in the evaluators' order) are read once
    :meth:`wait` returned.
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
        self._evaluators = list(evaluators)
        self._heard = heard
        self._released = asyncio.Event()
        self._contexts = [
            _Context(session, providers, calibrate, self._shared, self._go)
            for _ in self._evaluators
        ]
        self.results: dict[str, dict[str, Any]] = {}
        self._tasks = [
            asyncio.ensure_future(e.prepare(c))
            for e, c in zip(self._evaluators, self._contexts, strict=True)
        ]
        self.task: asyncio.Future[list[Mapping[str, Any] | None]] = asyncio.ensure_future(
            _all(self._tasks)
        )

    async def _go(self) -> None:
        waiting = [asyncio.ensure_future(e.wait()) for e in (self._heard, self._released)]
        try:
            await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for each in waiting:
                each.cancel()

    async def started(self) -> None:
        """Wait until every preparation is done or waits for the run's calls; the first
        that failed raises its error (before the run is created)."""
        for task, context in zip(self._tasks, self._contexts, strict=True):
            reached = asyncio.ensure_future(context.reached.wait())
            try:
                await asyncio.wait([task, reached], return_when=asyncio.FIRST_COMPLETED)
            finally:
                reached.cancel()
            if task.done() and not task.cancelled() and task.exception() is not None:
                raise task.exception()  # type: ignore[misc]

    def release(self) -> None:
        """Let the preparations' calls start now, whether or not a provider was heard."""
        self._released.set()

    @property
    def warnings(self) -> list[str]:
        """The preparations' warnings, evaluator by evaluator."""
        return [line for c in self._contexts for line in c.warnings]

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
        pending: list[asyncio.Future[Any]] = [self.task, *self._tasks, *self._shared.values()]
        for each in pending:
            each.cancel()
        await asyncio.gather(*pending, return_exceptions=True)


async def _all(tasks: Sequence[asyncio.Future[_T]]) -> list[_T]:
    """The results of ``tasks`` (running at the same time); the first exception cancels
    the others."""
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
