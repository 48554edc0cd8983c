"""The library entry point: ``qualspec.run(...)``, the same path the CLI takes."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from qualspec.engine._execute import ExecuteOptions, ProgressFn
    from qualspec.engine._run import RunOutcome
    from qualspec.spec import Evaluation, LoadedSuite

__all__ = ["run"]


def run(
    suite: str | Path | Evaluation | LoadedSuite,
    *,
    db: str | None = None,
    candidates: Sequence[str] | None = None,
    roles: Sequence[str] | None = None,
    scenarios: Sequence[str] | None = None,
    temperatures: Sequence[float] | str | None = None,
    runs: int | None = None,
    model: str | None = None,
    judge: str | None = None,
    options: ExecuteOptions | None = None,
    resume: str | bool | None = None,
    progress: ProgressFn | None = None,
) -> RunOutcome:
    """Run an evaluation and record it; returns the outcome with the stored run.

    Example::

        import qualspec
        outcome = qualspec.run("examples/quickstart.yaml", temperatures=[0.0])
        print(outcome.run_id, outcome.status)
    """
    from qualspec.engine._plan import expand
    from qualspec.engine._run import execute_plan
    from qualspec.spec import Evaluation, LoadedSuite, load_evaluation, load_suite
    from qualspec.store import Store

    if isinstance(suite, Evaluation):
        loaded = load_evaluation(suite, Path.cwd())
    elif isinstance(suite, LoadedSuite):
        loaded = suite
    else:
        loaded = load_suite(suite)
    plan = expand(
        loaded,
        candidates=candidates,
        roles=roles,
        scenarios=scenarios,
        temperatures=temperatures,
        runs=runs,
        model=model,
    )
    if judge is not None:
        plan = dataclasses.replace(plan, judge_model=judge)
    store = Store.open(db)
    try:
        return execute_plan(
            loaded, plan, store=store, options=options, resume=resume, progress=progress, argv=[]
        )
    finally:
        store.close()
