"""A run from start to finish, from synchronous code: :func:`execute_plan`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from qualspec.engine._metadata import metadata, prompt_versions
from qualspec.engine._session import RunOutcome, Session, run_sync

if TYPE_CHECKING:
    from qualspec.engine._options import ExecuteOptions, ProgressFn
    from qualspec.engine._plan import Plan
    from qualspec.spec import LoadedSuite
    from qualspec.store import Store

__all__ = ["RunOutcome", "execute_plan", "metadata", "prompt_versions"]


def execute_plan(
    suite: LoadedSuite,
    plan: Plan,
    *,
    store: Store,
    options: ExecuteOptions | None = None,
    resume: str | bool | None = None,
    argv: Sequence[str] | None = None,
    progress: ProgressFn | None = None,
    prices_path: str | None = None,
) -> RunOutcome:
    """Execute ``plan`` and record everything in ``store``: a synchronous ``Session.run_plan``.

    ``resume``: ``True`` resumes the latest unfinished run of this suite, a string resumes
    that run id; only work the store does not hold is done. Ctrl-C marks the run
    interrupted and keeps what finished (KeyboardInterrupt is re-raised).
    """

    async def main() -> RunOutcome:
        async with Session(db=store, options=options, prices=prices_path) as session:
            return await session.run_plan(suite, plan, resume=resume, progress=progress, argv=argv)

    return run_sync(main)
