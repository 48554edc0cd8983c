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
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from qualspec.engine._adhoc import adhoc_messages, adhoc_record
from qualspec.engine._calls import CallEngine, CallStopped, Reply
from qualspec.engine._execute import Executor
from qualspec.engine._options import CallOptions, ExecuteOptions, ExecuteStats
from qualspec.engine._prepare import Preparations, alongside
from qualspec.engine._resume import find_run
from qualspec.engine._run_steps import (
    bind_prompts,
    choose_evaluators,
    describe_run,
    executor_for,
    finish_run,
    open_providers,
    open_run,
    outcome_record,
    record_settled,
    run_failure,
    settle_superseded,
)
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
    from qualspec.store import RunRecord, Store

__all__ = ["RunOutcome", "Session", "run_sync"]

log = logging.getLogger("qualspec.engine")
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
    summarised: bool = False
    """A large run (see ``FULL_RECORD_LIMIT``): ``record`` holds its summary only."""


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
        executor: ``"ray"``: embedded models run as Ray actors over a cluster (overrides
            ``options.executor``; the ``ray`` extra); ``ray_address``: the cluster.
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
        executor: str | None = None,
        ray_address: str | None = None,
    ) -> None:
        options = options or ExecuteOptions()
        if max_cost is not None:
            options = dataclasses.replace(options, max_cost=max_cost)
        if executor is not None or ray_address is not None:
            executor = executor or options.executor
            options = dataclasses.replace(options, executor=executor, ray_address=ray_address)
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
        options: CallOptions | None = None,
    ) -> Reply:
        """One call to ``provider/model`` with the session's limits, retries, cache and cost.

        The call's settings are the keywords from ``temperature`` to ``structured_mode``,
        or one :class:`~qualspec.engine.CallOptions` given as ``options`` (not both).
        The answer is recorded as a response of ``kind`` in the session's own run (suite
        ``(session)``), so ``qualspec runs`` shows it. A failed call returns a reply with
        ``error`` set; a refused key raises ``AuthenticationError``; a spent budget raises
        ``BudgetExceededError``.

        Example::

            reply = await session.complete("openai/gpt-4o-mini", "Say hi", max_tokens=20)
        """
        from qualspec.providers import split_address

        if options is None:
            options = CallOptions(
                temperature=temperature,
                max_tokens=max_tokens,
                params=params,
                json_schema=json_schema,
                attempt=attempt,
                structured_mode=structured_mode,
            )
        elif (temperature, max_tokens, params, json_schema, attempt, structured_mode) != (
            0.0,
            None,
            None,
            None,
            0,
            "auto",
        ):
            raise TypeError("Session.complete: give the call's settings or options=, not both")
        name, model_name = split_address(model)
        configs = self._provider_configs if providers is None else providers
        provider = self.calls.providers([name], configs)[name]
        recorder = _SCOPED.get() or await self._adhoc()
        try:
            reply = await self.calls.complete(
                provider,
                model_name,
                adhoc_messages(prompt, system),
                kind=kind,
                recorder=recorder,
                options=options,
            )
        except CallStopped as exc:
            from qualspec.errors import BudgetExceededError

            raise BudgetExceededError(f"{exc}: raise max_cost or start a new session") from None
        recorder.response(adhoc_record(reply, model, kind, options))
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
            failure = await finish_run(store, run_id, recorder, None, status)
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
        from qualspec.engine._plan import check_plan

        store, calls, judge = self.store, self.calls, self.options.judge
        configs = suite.evaluation.providers
        # Validate everything first: a config error must not leave a run behind.
        check_plan(suite, plan, judge=judge and evaluators is None)
        run_configs, run = choose_evaluators(plan, evaluators, judge=judge)
        prompts = [e.prompt() for e in run]
        # Providers first: a missing key or package fails before any run is recorded.
        providers = open_providers(calls, plan, run, configs)
        warnings: list[str] = list(plan.warnings)
        n_plan = len(warnings)  # the preparations' warnings follow the plan's
        # what a resumed run's recorded evaluations are checked against (None: judging off)
        current = run if judge else None
        resumed = bool(resume)
        preparing, run_id = await self._start(suite, run, resume, warnings)
        status = "failed"
        stats = ExecuteStats()
        recorder: Sink | None = None
        executor: Executor | None = None
        try:
            bound = await bind_prompts(store, run, prompts)
            await describe_run(
                store, run_id, suite, plan, run_configs, argv, bound, resumed=resumed
            )
            recorder = await open_sink(
                self._sink,
                store,
                run_id,
                retry_window_s=self.options.store_retry_s,
                on_fatal=lambda exc: executor.on_store_failure(exc) if executor else None,
            )
            executor = await executor_for(
                calls, run_id, plan, recorder, bound, providers, configs, current, resumed, progress
            )
            try:
                stats = await alongside(executor.run(), preparing)
            except asyncio.CancelledError:
                status = "interrupted"
                raise
            status = "budget_exceeded" if stats.budget_exceeded else "finished"
            await record_settled(store, run_id, preparing, calls)
        finally:
            await preparing.cancel()  # a run that ended early: what is still running
            # group subjects are known once the answers are: a resumed run supersedes again
            settle = settle_superseded(store, run_id, plan, current) if resumed else None
            failure = await finish_run(
                store, run_id, recorder, executor, status, settle, failed=calls.failure
            )
        if failure is not None:  # the store failed, or the calls could not go on
            raise run_failure(
                failure, calls.failure, f"qualspec run {suite.path} --resume {run_id}"
            )
        record, failures, summarised = await outcome_record(store, run_id, plan, run, self.options)
        return RunOutcome(
            run_id=run_id,
            status=status,
            stats=stats,
            record=record,
            resumed=resumed,
            warnings=[*warnings[:n_plan], *preparing.warnings, *warnings[n_plan:], *failures],
            judge_failures=failures,
            summarised=summarised,
        )

    async def _start(
        self,
        suite: LoadedSuite,
        evaluators: Sequence[Evaluator],
        resume: str | bool | None,
        warnings: list[str],
    ) -> tuple[Preparations, str]:
        """The run opened (the one to resume, or a new one) and its evaluators'
        preparations (calibrations) started: they run alongside the run's own calls."""
        store = self.store
        # the run to resume before any call: an unknown or foreign run id costs nothing
        summary = await asyncio.to_thread(find_run, store, resume, suite) if resume else None
        preparing = Preparations(
            self,
            evaluators,
            suite.evaluation.providers,
            calibrate=self.options.calibrate,
            heard=self.calls.heard,
        )
        try:
            await preparing.started()  # their own runs first, as before
            run_id = await open_run(store, suite, summary, warnings)
        except BaseException:
            await preparing.cancel()
            raise
        return preparing, run_id
