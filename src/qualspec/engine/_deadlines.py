"""Per-call timeouts on one timer: :class:`Deadlines`.

``asyncio.timeout`` makes a timer per call (a handle pushed on the loop's heap, cancelled
when the call returns): at thousands of calls a second that was the call layer's largest
cost after aiohttp's own. Here every call in flight registers its deadline in a dict, and
one timer, due at the earliest deadline, cancels the calls that are past theirs (then is
set again for the next one). A call that ends in time only adds and removes a dict entry.
It behaves as ``asyncio.timeout`` does: the task is cancelled at its deadline and the
``CancelledError`` becomes a ``TimeoutError`` where it leaves the block; a cancellation
from outside stays a cancellation.
"""

from __future__ import annotations

import asyncio
from types import TracebackType

__all__ = ["Deadline", "Deadlines"]


class Deadlines:
    """The deadlines of one event loop's calls in flight (one timer for all of them)."""

    __slots__ = ("_due", "_loop", "_timer", "_timer_at")

    def __init__(self) -> None:
        self._due: dict[asyncio.Task[object], tuple[float, Deadline]] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._timer_at = 0.0

    def after(self, seconds: float | None) -> Deadline:
        """An async context manager that times out its block after ``seconds`` (None:
        never), as ``asyncio.timeout(seconds)`` does."""
        return Deadline(self, seconds)

    def _add(
        self,
        loop: asyncio.AbstractEventLoop,
        task: asyncio.Task[object],
        when: float,
        entry: Deadline,
    ) -> None:
        if loop is not self._loop:  # another event loop (a new asyncio.run): start afresh
            self._due.clear()
            self._loop, self._timer = loop, None
        self._due[task] = (when, entry)
        timer = self._timer
        if timer is None or when < self._timer_at:
            if timer is not None:
                timer.cancel()
            self._timer_at = when
            self._timer = loop.call_at(when, self._expire)

    def _remove(self, task: asyncio.Task[object]) -> None:
        self._due.pop(task, None)

    def _expire(self) -> None:
        """Cancel every call past its deadline; set the timer for the next deadline."""
        self._timer = None
        if not self._due:
            return
        now = asyncio.get_running_loop().time()
        later = None
        for task, (when, entry) in list(self._due.items()):
            if when <= now:
                del self._due[task]
                entry.expired = True
                task.cancel()
            elif later is None or when < later:
                later = when
        if later is not None:
            self._timer_at = later
            self._timer = asyncio.get_running_loop().call_at(later, self._expire)


class Deadline:
    """One block's deadline (see :meth:`Deadlines.after`); entered once."""

    __slots__ = ("_cancelling", "_owner", "_seconds", "_task", "expired")

    def __init__(self, owner: Deadlines, seconds: float | None) -> None:
        self._owner = owner
        self._seconds = seconds
        self._task: asyncio.Task[object] | None = None
        self._cancelling = 0
        self.expired = False

    async def __aenter__(self) -> Deadline:
        if self._seconds is None:
            return self
        task = asyncio.current_task()
        if task is None:
            raise RuntimeError("a deadline is entered inside a task")
        self._task = task
        self._cancelling = task.cancelling()
        loop = asyncio.get_running_loop()
        self._owner._add(loop, task, loop.time() + self._seconds, self)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        task = self._task
        if task is None:
            return
        self._owner._remove(task)
        if (
            self.expired
            and task.uncancel() <= self._cancelling
            and exc_type is asyncio.CancelledError
        ):
            raise TimeoutError from exc
