"""A run from start to finish: store, lock, prompt versions, metadata, execute, finish."""

from __future__ import annotations

import asyncio
import os
import platform
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from qualspec.engine._execute import (
    ExecuteOptions,
    ExecuteStats,
    Executor,
    JudgeSettings,
    ProgressFn,
)
from qualspec.errors import ConfigError

if TYPE_CHECKING:
    from qualspec.engine._plan import Plan
    from qualspec.engine._recorder import Recorder
    from qualspec.providers import ProviderPool
    from qualspec.providers._base import Provider
    from qualspec.spec import LoadedSuite
    from qualspec.store._records import RunRecord
    from qualspec.store._store import Store

__all__ = ["RunOutcome", "execute_plan"]


@dataclass
class RunOutcome:
    """What a run produced: its id, final status, what the executor did, and the stored run."""

    run_id: str
    status: str
    stats: ExecuteStats
    record: RunRecord
    resumed: bool = False
    warnings: list[str] = field(default_factory=list)


def execute_plan(
    suite: LoadedSuite,
    plan: Plan,
    *,
    store: Store,
    options: ExecuteOptions | None = None,
    resume: str | bool | None = None,
    argv: Sequence[str] | None = None,
    progress: ProgressFn | None = None,
    providers: dict[str, Provider] | None = None,
    prices_path: str | None = None,
) -> RunOutcome:
    """Execute ``plan`` and record everything in ``store``.

    ``resume``: ``True`` resumes the latest unfinished run of this suite, a string resumes
    that run id; only work the store does not hold is done. Ctrl-C marks the run
    interrupted and keeps what finished (KeyboardInterrupt is re-raised).
    """
    from qualspec.judges import JUDGE_PROMPT_NAME, judge_prompt_text
    from qualspec.providers import PriceTable, ProviderPool, split_address

    options = options or ExecuteOptions()
    evaluation = suite.evaluation
    judge_provider, judge_model = split_address(plan.judge_model)
    # Providers first: a missing key or package fails before any run is recorded.
    pool = ProviderPool(evaluation.providers)
    if providers is None:
        names = {item.provider for item in plan.items}
        if plan.items and options.judge:
            names.add(judge_provider)
        providers = {name: pool.get(name) for name in sorted(names)}
    warnings: list[str] = []
    resumed = bool(resume)
    if resume:
        run_id = resume if isinstance(resume, str) else store.latest_unfinished_run(evaluation.name)
        if run_id is None:
            raise ConfigError(
                f"no unfinished run of suite '{evaluation.name}' to resume: run without --resume"
            )
        summary = store.get_run(run_id)
        run_id = summary.id
        if summary.suite_hash != suite.content_hash:
            warnings.append(
                f"the suite file changed since run {run_id} started; "
                "new or changed cells are run, unchanged ones are kept"
            )
    else:
        run_id = store.create_run(evaluation.name, suite.content_hash, {})
    store.acquire_run(run_id)
    try:
        judge_version = store.prompt_version(JUDGE_PROMPT_NAME, judge_prompt_text())
        store.update_run_metadata(
            run_id, _metadata(suite, plan, argv, judge_version, resumed=resumed)
        )
        prompt_versions = _prompt_versions(store, plan)
        existing = store.load_run(run_id)
        done = {r.key: r for r in existing.responses if r.error is None}
        done_j = {(j.response_key, j.criterion) for j in existing.judgments if j.error is None}
        prices = PriceTable.load(None if prices_path is None else Path(prices_path))
        judge = JudgeSettings(
            provider=judge_provider,
            model=judge_model,
            threshold=plan.threshold,
            params=evaluation.judge.params,
            prompt_version=judge_version,
        )
        from qualspec.engine._recorder import Recorder

        recorder = Recorder(store, run_id)
        executor = Executor(
            plan.items,
            providers=providers,
            store=store,
            recorder=recorder,
            judge=judge,
            prices=prices,
            options=options,
            done_responses=done,
            done_judgments=done_j,
            prompt_versions=prompt_versions,
            progress=progress,
            timeouts={n: c.timeout for n, c in evaluation.providers.items() if c.timeout},
        )
        status, stats = _drive(executor, recorder, pool, store, run_id)
    finally:
        store.release_run(run_id)
    return RunOutcome(
        run_id=run_id,
        status=status,
        stats=stats,
        record=store.load_run(run_id),
        resumed=resumed,
        warnings=warnings,
    )


def _drive(
    executor: Executor, recorder: Recorder, pool: ProviderPool, store: Store, run_id: str
) -> tuple[str, ExecuteStats]:
    """Run the executor's event loop; always flush the recorder and set the run's status."""

    async def main() -> ExecuteStats:
        try:
            return await executor.run()
        finally:
            await pool.aclose()  # closes only the providers the pool created

    status = "failed"
    try:
        stats = asyncio.run(main())
        status = "budget_exceeded" if stats.budget_exceeded else "finished"
    except KeyboardInterrupt:
        status = "interrupted"
        raise
    finally:
        try:
            recorder.close()
        finally:
            store.finish_run(run_id, status)
    return status, stats


def _prompt_versions(store: Store, plan: Plan) -> dict[str, dict[str, int]]:
    pairs = sorted({(n, t) for item in plan.items for n, t in item.prompt_parts.items()})
    ids = store.prompt_versions_many(pairs)
    out: dict[str, dict[str, int]] = {}
    for (name, text), version_id in zip(pairs, ids, strict=True):
        out.setdefault(name, {})[text] = version_id
    return out


def _metadata(
    suite: LoadedSuite,
    plan: Plan,
    argv: Sequence[str] | None,
    judge_version: int,
    *,
    resumed: bool,
) -> dict[str, Any]:
    from qualspec import __version__

    evaluation = suite.evaluation
    meta: dict[str, Any] = {
        "qualspec_version": __version__,
        "python_version": platform.python_version(),
        "platform": platform.platform(),
        "suite_path": str(suite.path),
        "suite_hash": suite.content_hash,
        "argv": [_mask_url(a) for a in (argv if argv is not None else sys.argv[1:])],
        "candidates": {
            c.name: {"model": c.model, "params": c.params} for c in evaluation.candidates
        },
        "judge": {
            "model": plan.judge_model,
            "threshold": plan.threshold,
            "params": evaluation.judge.params,
            "prompt_version_id": judge_version,
        },
        "dimensions": {
            "candidates": list(plan.candidates),
            "roles": list(plan.roles),
            "scenarios": list(plan.scenarios),
            "temperatures": list(plan.temperatures),
            "runs": plan.runs,
        },
        "pid": os.getpid(),
    }
    if resumed:
        meta["resumed"] = True
    return meta


_URL_PASSWORD = re.compile(r"(://[^:/@\s]+:)[^@\s]+@")


def _mask_url(text: str) -> str:
    """Hide the password of a database URL given on the command line."""
    return _URL_PASSWORD.sub(r"\1***@", text)
