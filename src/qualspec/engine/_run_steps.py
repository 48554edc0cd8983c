"""The named steps of ``Session.run_plan``: which evaluators run, what their prompts are
stored as, what a resumed run already holds, how the run is opened and how it ends."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from qualspec.engine._execute import DEFAULT_WINDOW, BoundEvaluator, Executor
from qualspec.engine._resume import superseded, superseded_streamed
from qualspec.engine._sink import close_sink
from qualspec.errors import ProviderError, QualspecError, StoreError
from qualspec.messages import one_line as _one_line

if TYPE_CHECKING:
    from qualspec.engine._calls import CallEngine
    from qualspec.engine._evaluators import Evaluator, EvaluatorCore
    from qualspec.engine._options import ExecuteOptions, ProgressFn
    from qualspec.engine._plan import Plan
    from qualspec.engine._prepare import Preparations
    from qualspec.engine._sink import Sink
    from qualspec.providers import Provider
    from qualspec.spec import EvaluatorConfig, LoadedSuite, ProviderConfig
    from qualspec.store import RunRecord, RunSummary, Store

__all__ = [
    "FULL_RECORD_LIMIT",
    "bind_prompts",
    "choose_evaluators",
    "describe_run",
    "executor_for",
    "finish_run",
    "open_providers",
    "open_run",
    "outcome_record",
    "record_settled",
    "resume_state",
    "run_failure",
    "settle_superseded",
]

log = logging.getLogger("qualspec.engine")


def choose_evaluators(
    plan: Plan, evaluators: Sequence[EvaluatorCore] | None, *, judge: bool
) -> tuple[tuple[EvaluatorConfig, ...], list[Evaluator]]:
    """The evaluators a run runs, and the configs that describe them: the judges (when
    ``judge``) and the evaluator of ``expect:`` checks (whenever a scenario has them:
    checks are not a judge), or ``evaluators`` given (described by the plan's judges)."""
    from qualspec.engine._evaluators import create_evaluator, with_defaults

    if evaluators is None:
        configs = plan.run_evaluators(judge=judge)
        return configs, [create_evaluator(c) for c in configs]
    return plan.judges, [with_defaults(e) for e in evaluators]


def open_providers(
    calls: CallEngine,
    plan: Plan,
    evaluators: Sequence[Evaluator],
    configs: Mapping[str, ProviderConfig],
) -> dict[str, Any]:
    """Every provider the run calls (its items' and its evaluators'): a missing key or
    package fails here, before any run is recorded."""
    from qualspec.providers import split_address

    names = {split_address(a)[0] for a in plan.survey.others}
    names |= {split_address(a)[0] for _, a in plan.survey.candidates}
    names |= {split_address(e.model)[0] for e in evaluators if e.model}
    # a judge panel calls every member's model (``models``: not part of the protocol)
    names |= {split_address(m)[0] for e in evaluators for m in getattr(e, "models", ()) or ()}
    return dict(calls.providers(sorted(names), configs))


async def open_run(
    store: Store, suite: LoadedSuite, summary: RunSummary | None, warnings: list[str]
) -> str:
    """The run to record into, acquired: the resumed one (``summary``), or a new one."""
    if summary is not None:
        run_id = summary.id
        if summary.suite_hash != suite.content_hash:
            warnings.append(
                f"the suite file changed since run {run_id} started; "
                "new or changed cells are run, unchanged ones are kept, and what the "
                "suite no longer asks for is kept but not counted (superseded)"
            )
    else:
        run_id = await asyncio.to_thread(
            store.create_run, suite.evaluation.name, suite.content_hash, {}
        )
    await asyncio.to_thread(store.acquire_run, run_id)
    return run_id


async def bind_prompts(
    store: Store,
    evaluators: Sequence[Evaluator],
    prompts: Sequence[tuple[str, str] | None],
) -> list[BoundEvaluator]:
    """Each evaluator with the id of its prompt's version (``prompts``, theirs in order:
    asked before the run opened) in the store."""
    bound = []
    for evaluator, prompt in zip(evaluators, prompts, strict=True):
        version = None
        if prompt is not None:
            version = await asyncio.to_thread(store.prompt_version, *prompt)
        bound.append(BoundEvaluator(evaluator, version))
    return bound


async def describe_run(
    store: Store,
    run_id: str,
    suite: LoadedSuite,
    plan: Plan,
    configs: tuple[EvaluatorConfig, ...],
    argv: Sequence[str] | None,
    bound: Sequence[BoundEvaluator],
    *,
    resumed: bool,
) -> None:
    """Record the run's metadata (its suite, plan, evaluators and command line)."""
    from qualspec.engine._metadata import metadata

    described = dataclasses.replace(plan, judges=configs) if configs else plan
    meta = metadata(suite, described, argv, list(bound), resumed=resumed)
    if resumed:  # an earlier attempt's failure no longer describes the run
        meta["failure"] = None
    await asyncio.to_thread(store.update_run_metadata, run_id, meta)


async def resume_state(
    store: Store, run_id: str, plan: Plan, current: Sequence[Evaluator] | None
) -> None:
    """Mark a resumed run's rows of an earlier plan superseded (an edited suite, another
    judge; ``current``: the evaluators recorded evaluations are checked against, None
    when judging is off). What it holds that the plan still asks for is then looked up by
    the executor, a batch of keys at a time."""

    def settle() -> None:
        found = superseded_streamed(store, run_id, plan.items, current)
        if found is None:  # an edited suite: some answer is no work item any more
            found = superseded(store.load_run(run_id), plan.items, current, groups=False)
        store.supersede(run_id, *found)

    await asyncio.to_thread(settle)


async def executor_for(
    calls: CallEngine,
    run_id: str,
    plan: Plan,
    recorder: Sink,
    bound: Sequence[BoundEvaluator],
    providers: Mapping[str, Provider],
    configs: Mapping[str, ProviderConfig],
    current: Sequence[Evaluator] | None,
    resumed: bool,
    progress: ProgressFn | None,
) -> Executor:
    """The executor of ``plan`` in run ``run_id``: the work the store does not hold yet
    (a resumed run's answers and evaluations that the plan still asks for are kept)."""
    from qualspec.engine._metadata import prompt_versions

    store = calls.store
    versions = await asyncio.to_thread(prompt_versions, store, plan)
    if resumed:  # a new run holds nothing yet
        await resume_state(store, run_id, plan, current)
    widest = max((p.default_concurrency for p in providers.values()), default=1)
    return Executor(
        plan.items,
        calls=calls,
        providers=providers,
        recorder=recorder,
        run_id=run_id,
        evaluators=bound,
        provider_configs=configs,
        prompt_versions=versions,
        progress=progress,
        look_up_done=resumed,
        window=calls.options.max_in_flight
        or max(DEFAULT_WINDOW, 4 * (calls.options.max_concurrency or widest)),
    )


async def record_settled(
    store: Store, run_id: str, preparing: Preparations, calls: CallEngine
) -> None:
    """Record what the run settled once its calls are done: its evaluators' preparations
    (calibrations) and each endpoint's structured-output mode after a refusal."""
    calibrations = await preparing.wait()
    if calibrations:
        await asyncio.to_thread(
            store.update_run_metadata, run_id, {"judge_calibration": calibrations}
        )
    modes = calls.structured_modes()
    if modes:  # what each endpoint settled on, after a refusal
        await asyncio.to_thread(store.update_run_metadata, run_id, {"structured_output": modes})


def settle_superseded(
    store: Store, run_id: str, plan: Plan, current: Sequence[Evaluator] | None
) -> Callable[[], None]:
    """What marks a resumed run's group subjects of an earlier plan superseded (they are
    known once the answers are): run by :func:`finish_run` when the run completed."""

    def settle() -> None:
        if not any(e.scope == "group" for e in current or ()):
            return  # what else is stale was marked when the run resumed
        record = store.load_run(run_id)
        stale, stale_e = superseded(record, plan.items, current, groups=True)
        store.supersede(run_id, stale, stale_e)

    return settle


async def finish_run(
    store: Store,
    run_id: str,
    recorder: Sink | None,
    executor: Executor | None,
    status: str,
    settle: Callable[[], None] | None = None,
    *,
    failed: str | None = None,
) -> str | None:
    """Flush the recorder and record the run's end; the failure reason, if any.

    ``settle`` runs once everything is recorded, when the run completed (finished or
    over budget): it marks what the plan no longer asks for superseded. ``failed``: why
    the calls could not go on (the run ends ``failed``, unless the store failed first).
    """
    failure: str | None = None
    if recorder is not None:
        try:
            await close_sink(recorder)
        except StoreError as exc:  # "could not record results: ..." (the reason recorded)
            failure = _one_line(exc)
    if failure is None and executor is not None and executor.store_failure is not None:
        failure = _one_line(executor.store_failure)
    if failure is None:
        failure = failed
    if failure is None and settle is not None and status in ("finished", "budget_exceeded"):
        try:
            await asyncio.to_thread(settle)
        except StoreError as exc:
            failure = _one_line(exc)
    if failure is not None:
        status = "failed"
    marked = False
    try:
        if failure is not None:
            await asyncio.to_thread(store.update_run_metadata, run_id, {"failure": failure[:500]})
        await asyncio.to_thread(store.finish_run, run_id, status)
        marked = True
    except StoreError as exc:
        if failure is None:
            raise
        log.error("could not mark run %s %s: %s", run_id, status, _one_line(exc))
    finally:
        # Unmarked, the run keeps this process as its owner: once the process is gone
        # the store reads it as failed (and resumable), never as running forever.
        if marked:
            try:
                await asyncio.to_thread(store.release_run, run_id)
            except StoreError as exc:
                log.error("could not release run %s: %s", run_id, _one_line(exc))
    return failure


def run_failure(failure: str, calls_failure: str | None, resume: str) -> QualspecError:
    """The error a run that ended ``failed`` raises: the calls could not go on
    (``calls_failure``: no Ray actor left), else the store could not record; both say how
    to resume (``resume``: the command)."""
    if failure == calls_failure:
        return ProviderError(
            f"the run could not finish: {failure}; what it recorded is kept: resume with {resume}"
        )
    return StoreError(
        f"could not record results: {failure}; nothing recorded is lost: resume with {resume}"
    )


FULL_RECORD_LIMIT = 5_000
"""Work items above which a run's outcome does not load every record by default
(``ExecuteOptions.summarise_above``): its ``record`` holds the summary, and reports read
the store a page at a time."""


async def outcome_record(
    store: Store,
    run_id: str,
    plan: Plan,
    evaluators: Sequence[Evaluator],
    options: ExecuteOptions,
) -> tuple[RunRecord, list[str], bool]:
    """The run as stored for its outcome, the evaluators that could score nothing, and
    whether it is summarised (a plan of more than ``options.summarise_above`` items: the
    summary only, nothing loaded whole)."""
    from qualspec.engine._failures import judge_failures
    from qualspec.store import RunRecord

    if len(plan.items) > options.summarise_above:
        return RunRecord(summary=await asyncio.to_thread(store.get_run, run_id)), [], True
    record = await asyncio.to_thread(store.load_run, run_id)
    return record, judge_failures(record, evaluators), False
