"""``qualspec run``'s progress bars (rich), drawn from the first progress report on, with
the pace of the run on the first line: calls per second, the time left and the cost so far
(``412.3 calls/s · ETA 0:40:12 · $1.2345 so far``)."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.progress import Progress, ProgressColumn, Task

    from qualspec.engine import Plan

__all__ = ["LazyProgress", "pace_text"]


def pace_text(done: int, left: int | None, seconds: float, cost: float | None) -> str:
    """The pace line: ``done`` calls finished in ``seconds``, ``left`` still to make (None:
    not known yet), ``cost`` spent so far in USD (None: not shown).

    Example:
        >>> pace_text(100, 900, 10.0, 0.25)
        '10.0 calls/s · ETA 0:01:30 · $0.2500 so far'
    """
    rate = done / seconds if seconds > 0 else 0.0
    parts = [f"{rate:,.1f} calls/s"]
    if left is not None and rate > 0:
        eta = round(left / rate)
        parts.append(f"ETA {eta // 3600}:{eta // 60 % 60:02d}:{eta % 60:02d}")
    else:
        parts.append("ETA -")
    if cost is not None:
        parts.append(f"${cost:.4f} so far")
    return " · ".join(parts)


def _pace_column(text: Callable[[Task], str]) -> ProgressColumn:
    from rich.progress import ProgressColumn
    from rich.text import Text

    class Pace(ProgressColumn):
        def render(self, task: Task) -> Text:
            return Text(text(task))

    return Pace()


_PUSH_EVERY_S = 0.1  # the bars are redrawn ten times a second (rich's default)
_COUNTED = 50_000  # answers up to which the judge calls are counted before the run


class LazyProgress:
    """The progress bars, drawn from the first finished call on (a total told before it,
    as the run schedules its work, is kept until then).

    Errors found before the run really starts (an unknown run id for ``--resume``, a
    missing key) are printed alone, with no bar above them.
    """

    def __init__(
        self,
        plan: Plan,
        *,
        judge: bool,
        quiet: bool,
        cost: Callable[[], float | None] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._plan = plan
        self._judge = judge
        self._quiet = quiet
        self._cost = cost or (lambda: None)
        self._clock = clock
        self._started = clock()
        self._bar: Progress | None = None
        self._tasks: dict[str, Any] = {}
        self._done: dict[str, int] = {}
        self._totals: dict[str, int | None] = {}
        self._told: dict[str, int] = {}  # the totals the run reported ("total:judge")
        self._pushed = -math.inf  # when the counts were last given to the bars

    def __enter__(self) -> LazyProgress | None:
        self._started = self._clock()
        return None if self._quiet else self

    def pace(self) -> str:
        """The pace line (see :func:`pace_text`): every call counted since the run began
        (answers and judgments), the time left from those still to make."""
        done = sum(self._done.values())
        totals = {kind: self._totals.get(kind) for kind in self._tasks}
        left = None
        if totals and all(t is not None for t in totals.values()):
            left = sum(max(0, (t or 0) - self._done.get(k, 0)) for k, t in totals.items())
        return pace_text(done, left, self._clock() - self._started, self._cost())

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._push(self._bar)
            self._bar.stop()
            self._bar = None

    def _start(self) -> Progress:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
        )

        console = Console(stderr=True)
        bar = Progress(
            TextColumn("{task.description:<10}", markup=False),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            _pace_column(lambda task: self.pace() if task.id == self._first() else ""),
            console=console,
            transient=False,
            # drawn again ten times a second on a terminal only: elsewhere (a log file, a
            # pipe) the bars are written once, as the run ends, and redrawing them in a
            # thread beside the run's calls was work for nothing
            auto_refresh=console.is_terminal,
        )
        answers = len(self._plan.items)  # counted from the suite's dimensions, no list
        self._tasks["candidate"] = bar.add_task("answers", total=answers)
        self._totals["candidate"] = answers
        compared = any(j.type == "comparative" for j in self._plan.judges)
        # a large plan is not walked to count its judge calls: the run sets the total
        # as it starts each scenario and input row
        judged = self._plan.judge_calls if answers <= _COUNTED else None
        if self._judge and (judged or compared or (judged is None and self._plan.run_evaluators())):
            self._tasks["judge"] = bar.add_task("judgments", total=judged)
            self._totals["judge"] = judged
        for kind, n in self._told.items():
            self._set_total(bar, kind, n)
        bar.start()
        self._bar = bar
        return bar

    def __call__(self, kind: str, n: int) -> None:
        if kind.startswith("total:"):  # kept until the bars are drawn
            self._told[kind.removeprefix("total:")] = n
            if self._bar is not None:
                self._set_total(self._bar, kind.removeprefix("total:"), n)
            return
        # drawn from the first finished call on: totals are told as the run schedules its
        # work, before its first call (the bars' modules, loaded then, delayed that call)
        bar = self._bar if self._bar is not None else self._start()
        if n and kind in self._tasks:
            self._done[kind] = self._done.get(kind, 0) + n
            now = self._clock()
            if now - self._pushed >= _PUSH_EVERY_S:
                self._push(bar)
                self._pushed = now

    def _push(self, bar: Progress) -> None:
        """Give the bars the counts: at most as often as they are redrawn, not at every
        finished call (rich's bookkeeping of one update was a tenth of the calls' own)."""
        for kind, task in self._tasks.items():
            bar.update(task, completed=self._done.get(kind, 0))

    def _set_total(self, bar: Progress, kind: str, n: int) -> None:
        task = self._tasks.get(kind)
        if task is not None:
            self._totals[kind] = n
            bar.update(task, total=n)

    def _first(self) -> Any:
        return next(iter(self._tasks.values()), None)
