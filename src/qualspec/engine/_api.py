"""The library entry point: ``qualspec.run(...)``, a synchronous wrapper over ``Session``."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from qualspec.engine._options import ExecuteOptions, ProgressFn
    from qualspec.engine._session import RunOutcome
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
    threshold: float | None = None,
    options: ExecuteOptions | None = None,
    max_cost: float | None = None,
    resume: str | bool | None = None,
    progress: ProgressFn | None = None,
) -> RunOutcome:
    """Run an evaluation and record it; returns the outcome with the stored run.

    The same as ``await Session(...).run(...)``, from synchronous code (also from inside a
    running event loop, where it runs on a worker thread).

    Example::

        import qualspec
        outcome = qualspec.run("examples/quickstart.yaml", temperatures=[0.0])
        print(outcome.run_id, outcome.status)
    """
    from qualspec.engine._session import Session, run_sync

    async def main() -> RunOutcome:
        async with Session(db=db, options=options, max_cost=max_cost) as session:
            return await session.run(
                suite,
                candidates=candidates,
                roles=roles,
                scenarios=scenarios,
                temperatures=temperatures,
                runs=runs,
                model=model,
                judge=judge,
                threshold=threshold,
                resume=resume,
                progress=progress,
            )

    return run_sync(main)
