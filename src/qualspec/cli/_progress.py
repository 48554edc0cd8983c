"""``qualspec run``'s progress bars (rich), drawn from the first progress report on."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.progress import Progress

    from qualspec.engine import Plan

__all__ = ["LazyProgress"]

_COUNTED = 50_000  # answers up to which the judge calls are counted before the run


class LazyProgress:
    """The progress bars, drawn from the first progress report on.

    Errors found before the run really starts (an unknown run id for ``--resume``, a
    missing key) are printed alone, with no bar above them.
    """

    def __init__(self, plan: Plan, *, judge: bool, quiet: bool) -> None:
        self._plan = plan
        self._judge = judge
        self._quiet = quiet
        self._bar: Progress | None = None
        self._tasks: dict[str, Any] = {}

    def __enter__(self) -> LazyProgress | None:
        return None if self._quiet else self

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
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

        bar = Progress(
            TextColumn("{task.description:<10}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=Console(stderr=True),
            transient=False,
        )
        answers = len(self._plan.items)  # counted from the suite's dimensions, no list
        self._tasks["candidate"] = bar.add_task("answers", total=answers)
        compared = any(j.type == "comparative" for j in self._plan.judges)
        # a large plan is not walked to count its judge calls: the run sets the total
        # as it starts each scenario and input row
        judged = self._plan.judge_calls if answers <= _COUNTED else None
        if self._judge and (judged or compared or (judged is None and self._plan.run_evaluators())):
            self._tasks["judge"] = bar.add_task("judgments", total=judged)
        bar.start()
        self._bar = bar
        return bar

    def __call__(self, kind: str, n: int) -> None:
        bar = self._bar if self._bar is not None else self._start()
        tasks = self._tasks
        if kind.startswith("total:"):
            task = tasks.get(kind.removeprefix("total:"))
            if task is not None:
                bar.update(task, total=n)
        elif n and kind in tasks:
            bar.advance(tasks[kind], n)
