"""``qualspec.Session``: the async core every entry point (CLI, ``qualspec.run``, plugins) uses.

A session owns the store, the providers, the per-endpoint limits, retries and timeouts,
the cache, cost and budget. ``run`` executes a suite; ``complete`` makes any single call
with the same limits, cache, cost and store. It works inside a running event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import dataclasses
import logging
import os
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from qualspec.engine._calls import CallEngine, CallStopped, Reply
from qualspec.engine._execute import BoundEvaluator, Executor
from qualspec.engine._failures import judge_failures
from qualspec.engine._options import ExecuteOptions, ExecuteStats
from qualspec.engine._prepare import Preparations, alongside
from qualspec.engine._resume import find_run, superseded
from qualspec.engine._sink import close_sink, open_sink
from qualspec.engine._sync import run_sync
from qualspec.errors import StoreError
from qualspec.messages import one_line as _one_line

if TYPE_CHECKING:
    from qualspec.engine._evaluators import Evaluator, EvaluatorCore
    from qualspec.engine._options import ProgressFn
    from qualspec.engine._plan import Plan
    from qualspec.engine._sink import Sink, SinkFactory
    from qualspec.providers import Message
    from qualspec.spec import Evaluation, LoadedSuite, ProviderConfig
    from qualspec.store import ResponseRecord, RunRecord, RunSummary, Store

__all__ = ["RunOutcome", "Session", "run_sync"]

log = logging.getLogger("qualspec.engine")
_T = TypeVar("_T")
SESSION_SUITE = "(session)"
# the run that ``Session.complete`` records into inside ``Session.recording`` (per task)
_SCOPED: contextvars.ContextVar[Sink | None] = contextvars.ContextVar(
    "qualspec_scoped_run", default=None
)


@dataclass
class RunOutcome:
    """What a run produced: its id, final status, what the executor did, and the stored run."""

    run_id: str
    status: str
    stats: ExecuteStats
    record: RunRecord
    resumed: bool = False
    warnings: list[str] = field(default_factory=list)
    judge_failures: list[str] = field(default_factory=list)
    """One line per evaluator that called a model and could not score a single record
    (unreachable, or output that never parsed); ``--strict`` exits 1 on any."""


class Session:
    """The engine, as an async context manager.

    Example::

        async with qualspec.Session(db="sqlite:///evals.db", max_cost=5.0) as session:
            outcome = await session.run("examples/quickstart.yaml")
            reply = await session.complete("local/smollm2", "Say hi", kind="adhoc")
            print(outcome.status, reply.text)

    Args:
        db: A database URL, or an open ``Store`` (not closed by the session); default
            ``$QUALSPEC_DATABASE_URL`` or ``.qualspec/qualspec.db``.
        max_cost: The budget in USD for every call of the session (overrides
            ``options.max_cost``); calls stop once it is spent.
        options: Concurrency, timeout, retries, cache settings.
        providers: Named provider connections for ``complete`` (as a suite's
            ``providers:``).
        prices: A JSON price table overriding the built-in one.
        sink: What makes each run's :class:`~qualspec.engine.Sink` (where results go
            as they complete); default :class:`~qualspec.engine.Recorder`, the store.
    """

    def __init__(
        self,
        *,
        db: str | Store | None = None,
        max_cost: float | None = None,
        options: ExecuteOptions | None = None,
        providers: Mapping[str, ProviderConfig] | None = None,
        prices: str | Path | None = None,
        sink: SinkFactory | None = None,
    ) -> None:
        import dataclasses

        options = options or ExecuteOptions()
        if max_cost is not None:
            options = dataclasses.replace(options, max_cost=max_cost)
        self.options = options
        self._db = db
        self._provider_configs = dict(providers or {})
        self._prices_path = None if prices is None else Path(prices)
        self._store: Store | None = None
        self._owns_store = False
        self._calls: CallEngine | None = None
        self._adhoc_run: str | None = None
        self._adhoc_recorder: Sink | None = None
        self._sink = sink
        # several first calls at once must share one ad-hoc run (and one recorder)
        self._adhoc_lock = asyncio.Lock()

    # ------------------------------------------------------------ lifecycle

    async def __aenter__(self) -> Session:
        await self.open()
        return self

    async def __aexit__(self, *exc: object) -> None:
        if exc and exc[0] is None:
            await self.aclose()
            return
        try:  # an error on the way out must not hide the one that ended the block
            await self.aclose()
        except StoreError as closing:
            log.error("could not close the session's store: %s", _one_line(closing))

    async def open(self) -> None:
        """Open the store and load prices (``async with`` does this)."""
        if self._calls is not None:
            return
        from qualspec.providers import PriceTable
        from qualspec.store import Store

        if self._db is None or isinstance(self._db, str):
            self._store = await asyncio.to_thread(Store.open, self._db)
            self._owns_store = True
        else:
            self._store = self._db
        prices = PriceTable.load(self._prices_path)
        self._calls = CallEngine(store=self._store, options=self.options, prices=prices)

    async def aclose(self) -> None:
        """Finish the session's ad-hoc run, close the providers and (if opened here) the store."""
        calls, self._calls = self._calls, None
        try:
            if self._adhoc_recorder is not None and self._adhoc_run is not None:
                recorder, self._adhoc_recorder = self._adhoc_recorder, None
                await close_sink(recorder)
                await asyncio.to_thread(self.store.finish_run, self._adhoc_run, "finished")
                await asyncio.to_thread(self.store.release_run, self._adhoc_run)
        finally:
            if calls is not None:
                await calls.aclose()
            if self._owns_store and self._store is not None:
                self._store.close()
            self._store = None

    @property
    def store(self) -> Store:
        """The session's results database."""
        if self._store is None:
            raise RuntimeError("the session is not open: use `async with Session(...)`")
        return self._store

    @property
    def calls(self) -> CallEngine:
        """The call layer (limits, retries, cache, cost) shared by everything in the session."""
        if self._calls is None:
            raise RuntimeError("the session is not open: use `async with Session(...)`")
        return self._calls

    @property
    def provider_configs(self) -> Mapping[str, ProviderConfig]:
        """The named provider connections the session was given (``providers=``)."""
        return self._provider_configs

    @property
    def spent_usd(self) -> float:
        """What the session's calls have cost so far (known prices only)."""
        return self.calls.spent_usd

    # ------------------------------------------------------------ single calls

    async def complete(
        self,
        model: str,
        prompt: str | Sequence[Message],
        *,
        kind: str = "adhoc",
        system: str | None = None,
        temperature: float | None = 0.0,
        max_tokens: int | None = None,
        params: Mapping[str, Any] | None = None,
        json_schema: Mapping[str, Any] | None = None,
        attempt: int = 0,
        structured_mode: str = "auto",
        providers: Mapping[str, ProviderConfig] | None = None,
    ) -> Reply:
        """One call to ``provider/model`` with the session's limits, retries, cache and cost.

        The answer is recorded as a response of ``kind`` in the session's own run (suite
        ``(session)``), so ``qualspec runs`` shows it. A failed call returns a reply with
        ``error`` set; a refused key raises ``AuthenticationError``; a spent budget raises
        ``BudgetExceededError``.

        Example::

            reply = await session.complete("openai/gpt-4o-mini", "Say hi", max_tokens=20)
        """
        from qualspec.engine._items import cell_key
        from qualspec.errors import BudgetExceededError
        from qualspec.providers import Message, split_address
        from qualspec.store import ResponseRecord

        name, model_name = split_address(model)
        configs = self._provider_configs if providers is None else providers
        provider = self.calls.providers([name], configs)[name]
        if isinstance(prompt, str):
            messages: tuple[Message, ...] = (Message("user", prompt),)
        else:
            messages = tuple(prompt)
        if system is not None:
            messages = (Message("system", system), *messages)
        recorder = _SCOPED.get() or await self._adhoc()
        try:
            reply = await self.calls.complete(
                provider,
                model_name,
                messages,
                kind=kind,
                recorder=recorder,
                temperature=temperature,
                max_tokens=max_tokens,
                params=params,
                json_schema=json_schema,
                attempt=attempt,
                structured_mode=structured_mode,
            )
        except CallStopped as exc:
            raise BudgetExceededError(f"{exc}: raise max_cost or start a new session") from None
        recorder.response(
            ResponseRecord(
                # the call (everything sent, where to) placed under its model and kind
                key=cell_key(reply.key, model, None, kind, None),
                candidate=model,
                role=None,
                scenario="",
                input_id=None,
                temperature=temperature,  # None: none was sent (the provider's default)
                effective_temperature=reply.effective_temperature,
                run_index=attempt,
                provider=name,
                model=model_name,
                text=reply.text,
                finish_reason=reply.finish_reason,
                input_tokens=reply.input_tokens,
                output_tokens=reply.output_tokens,
                latency_s=reply.latency_s,
                queue_s=reply.queue_s,
                cost_usd=reply.cost_usd,
                attempts=reply.attempts,
                error=reply.error,
                cached=reply.cached,
                created_at=datetime.now(UTC),
                kind=kind,
                call_key=reply.key,
            )
        )
        return reply

    @contextlib.asynccontextmanager
    async def recording(
        self, suite_name: str, metadata: Mapping[str, Any] | None = None
    ) -> AsyncIterator[str]:
        """A run of its own for the calls ``complete`` makes inside the block (this task only).

        Yields the run's id. The run is finished when the block ends (``failed`` when it
        ends with an error, ``interrupted`` when cancelled). Other tasks of the session keep
        recording into the session's ad-hoc run.

        Example::

            async with session.recording("(lab)", {"kind": "lab"}) as run_id:
                await session.complete("local/smollm2", "Say hi", kind="lab")
        """
        store = self.store
        meta = {"pid": os.getpid(), **(metadata or {})}
        run_id = await asyncio.to_thread(store.create_run, suite_name, "", meta)
        await asyncio.to_thread(store.acquire_run, run_id)
        recorder = await open_sink(
            self._sink, store, run_id, retry_window_s=self.options.store_retry_s
        )
        token = _SCOPED.set(recorder)
        status = "failed"
        try:
            yield run_id
            status = "finished"
        except asyncio.CancelledError:
            status = "interrupted"
            raise
        finally:
            _SCOPED.reset(token)
            failure = await self._finish(store, run_id, recorder, None, status)
            if failure is not None and status == "finished":
                raise StoreError(f"could not record the run {run_id}: {failure}")

    async def _adhoc(self) -> Sink:
        if self._adhoc_recorder is not None:
            return self._adhoc_recorder
        async with self._adhoc_lock:  # the others wait for the first one's run
            if self._adhoc_recorder is None:
                store = self.store
                run_id = await asyncio.to_thread(
                    store.create_run, SESSION_SUITE, "", {"kind": "session", "pid": os.getpid()}
                )
                await asyncio.to_thread(store.acquire_run, run_id)
                self._adhoc_run = run_id
                self._adhoc_recorder = await open_sink(
                    self._sink, store, run_id, retry_window_s=self.options.store_retry_s
                )
            return self._adhoc_recorder

    # ------------------------------------------------------------ suites

    async def run(
        self,
        suite: str | Path | Evaluation | LoadedSuite,
        *,
        candidates: Sequence[str] | None = None,
        roles: Sequence[str] | None = None,
        scenarios: Sequence[str] | None = None,
        temperatures: Sequence[float] | str | None = None,
        runs: int | None = None,
        model: str | None = None,
        judge: str | None = None,
        threshold: float | None = None,
        resume: str | bool | None = None,
        progress: ProgressFn | None = None,
    ) -> RunOutcome:
        """Run a suite (a file, an ``Evaluation`` or a loaded suite) and record everything.

        ``resume``: ``True`` resumes the latest unfinished run of this suite, a string resumes
        that run id; only work the store does not hold is done. Filters and overrides are
        those of ``qualspec run``.
        """
        from qualspec.engine._plan import expand
        from qualspec.spec import Evaluation, LoadedSuite, load_evaluation, load_suite

        if isinstance(suite, Evaluation):
            loaded = load_evaluation(suite, Path.cwd())
        elif isinstance(suite, LoadedSuite):
            loaded = suite
        else:
            loaded = await asyncio.to_thread(load_suite, suite)
        plan = expand(
            loaded,
            candidates=candidates,
            roles=roles,
            scenarios=scenarios,
            temperatures=temperatures,
            runs=runs,
            model=model,
        ).with_judge(model=judge, threshold=threshold)
        return await self.run_plan(loaded, plan, resume=resume, progress=progress)

    async def run_plan(
        self,
        suite: LoadedSuite,
        plan: Plan,
        *,
        resume: str | bool | None = None,
        progress: ProgressFn | None = None,
        argv: Sequence[str] | None = None,
        evaluators: Sequence[EvaluatorCore] | None = None,
    ) -> RunOutcome:
        """Execute an expanded plan of ``suite`` (what ``run`` does after expanding).

        ``evaluators``: evaluator objects to run instead of those created from the plan's
        ``judges`` (whose configs, one per evaluator in order, then only describe them in
        the run's metadata); how ``qualspec.testkit`` runs a test's annotators.
        """
        from qualspec.engine._evaluators import create_evaluator, with_defaults
        from qualspec.engine._metadata import metadata, prompt_versions
        from qualspec.engine._plan import check_plan
        from qualspec.providers import split_address

        store = self.store
        calls = self.calls
        evaluation = suite.evaluation
        configs = evaluation.providers
        # Validate everything first: a config error must not leave a run behind.
        check_plan(suite, plan, judge=self.options.judge and evaluators is None)
        # the judges (when judging) and the evaluator of expect: checks (whenever some
        # scenario has them: checks are not a judge)
        run: list[Evaluator]
        if evaluators is None:
            run_configs = plan.run_evaluators(judge=self.options.judge)
            run = [create_evaluator(c) for c in run_configs]
        else:
            run_configs, run = plan.judges, [with_defaults(e) for e in evaluators]
        evaluators = run
        prompts = [e.prompt() for e in evaluators]
        # Providers first: a missing key or package fails before any run is recorded.
        names = {item.provider for item in plan.items}
        names |= {split_address(e.model)[0] for e in evaluators if e.model}
        providers = calls.providers(sorted(names), configs)
        warnings: list[str] = list(plan.warnings)
        n_plan = len(warnings)  # the preparations' warnings follow the plan's
        # what a resumed run's recorded evaluations are checked against (None: judging off)
        current = evaluators if self.options.judge else None
        resumed = bool(resume)
        # the run to resume before any call: an unknown or foreign run id costs nothing
        summary = await asyncio.to_thread(find_run, store, resume, suite) if resume else None
        # the evaluators' preparations (calibrations) run alongside the run's own calls
        preparing = Preparations(
            self, evaluators, configs, calibrate=self.options.calibrate, heard=calls.heard
        )
        try:
            await preparing.started()  # their own runs first, as before
            run_id = await self._open_run(suite, summary, warnings)
        except BaseException:
            await preparing.cancel()
            raise
        status = "failed"
        stats = ExecuteStats()
        recorder: Sink | None = None
        executor: Executor | None = None
        try:
            bound = []
            for evaluator, prompt in zip(evaluators, prompts, strict=True):
                version = None
                if prompt is not None:
                    version = await asyncio.to_thread(store.prompt_version, *prompt)
                bound.append(BoundEvaluator(evaluator, version))
            described = dataclasses.replace(plan, judges=run_configs) if run_configs else plan
            meta = metadata(suite, described, argv, bound, resumed=resumed)
            if resumed:  # an earlier attempt's failure no longer describes the run
                meta["failure"] = None
            await asyncio.to_thread(store.update_run_metadata, run_id, meta)
            versions = await asyncio.to_thread(prompt_versions, store, plan)
            done: dict[str, ResponseRecord] = {}
            done_e: set[tuple[str, str, str]] = set()
            if resumed:  # a new run holds nothing yet
                existing = await asyncio.to_thread(store.load_run, run_id)
                # rows of an earlier plan (an edited suite, another judge): superseded
                stale, stale_e = superseded(existing, plan.items, current, groups=False)
                await asyncio.to_thread(store.supersede, run_id, stale, stale_e)
                done = {
                    r.key: r for r in existing.responses if r.error is None and r.key not in stale
                }
                done_e = {
                    (j.evaluator, j.response_key, j.criterion)
                    for j in existing.judgments
                    if j.error is None and (j.evaluator, j.response_key, j.criterion) not in stale_e
                }
            recorder = await open_sink(
                self._sink,
                store,
                run_id,
                retry_window_s=self.options.store_retry_s,
                on_fatal=lambda exc: executor.on_store_failure(exc) if executor else None,
            )
            executor = Executor(
                plan.items,
                calls=calls,
                providers=providers,
                recorder=recorder,
                run_id=run_id,
                evaluators=bound,
                provider_configs=configs,
                done_responses=done,
                done_evaluations=done_e,
                prompt_versions=versions,
                progress=progress,
            )
            try:
                stats = await alongside(executor.run(), preparing)
            except asyncio.CancelledError:
                status = "interrupted"
                raise
            status = "budget_exceeded" if stats.budget_exceeded else "finished"
            calibrations = await preparing.wait()
            if calibrations:
                await asyncio.to_thread(
                    store.update_run_metadata, run_id, {"judge_calibration": calibrations}
                )
            modes = calls.structured_modes()
            if modes:  # what each endpoint settled on, after a refusal
                await asyncio.to_thread(
                    store.update_run_metadata, run_id, {"structured_output": modes}
                )
        finally:
            await preparing.cancel()  # a run that ended early: what is still running
            settle = None
            if resumed:  # group subjects are known once the answers are: supersede again

                def settle() -> None:
                    record = store.load_run(run_id)
                    stale, stale_e = superseded(record, plan.items, current, groups=True)
                    store.supersede(run_id, stale, stale_e)

            failure = await self._finish(store, run_id, recorder, executor, status, settle)
        if failure is not None:
            raise StoreError(
                f"could not record results: {failure}; nothing recorded is lost: resume with "
                f"qualspec run {suite.path} --resume {run_id}"
            )
        record = await asyncio.to_thread(store.load_run, run_id)
        failures = judge_failures(record, evaluators)
        return RunOutcome(
            run_id=run_id,
            status=status,
            stats=stats,
            record=record,
            resumed=resumed,
            warnings=[*warnings[:n_plan], *preparing.warnings, *warnings[n_plan:], *failures],
            judge_failures=failures,
        )

    async def _open_run(
        self, suite: LoadedSuite, summary: RunSummary | None, warnings: list[str]
    ) -> str:
        """The run to record into, acquired: the resumed one (``summary``), or a new one."""
        store = self.store
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

    async def _finish(
        self,
        store: Store,
        run_id: str,
        recorder: Sink | None,
        executor: Executor | None,
        status: str,
        settle: Callable[[], None] | None = None,
    ) -> str | None:
        """Flush the recorder and record the run's end; the failure reason, if any.

        ``settle`` runs once everything is recorded, when the run completed (finished or
        over budget): it marks what the plan no longer asks for superseded.
        """
        failure: str | None = None
        if recorder is not None:
            try:
                await close_sink(recorder)
            except StoreError as exc:
                failure = recorder.failure or _one_line(exc)
        if failure is None and executor is not None and executor.store_failure is not None:
            failure = _one_line(executor.store_failure)
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
                await asyncio.to_thread(
                    store.update_run_metadata, run_id, {"failure": failure[:500]}
                )
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
