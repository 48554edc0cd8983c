"""The executor: a run's staged work (answers, then the evaluations that depend on them).

Answers (candidate cells and items of other kinds, such as reference answers) are made
under per-endpoint limits. A response-scope evaluator judges each answer as soon as it
exists; a group-scope evaluator waits until every answer of its group exists; either also
waits for the answers its items depend on (``WorkItem.depends_on``). Every model call goes
through the session's :class:`CallEngine`; every result goes to the run's recorder.

The plan is streamed a batch of blocks at a time (see ``_blocks``): what the store holds
for a batch (a resumed run's work, cached answers) is one query each, at most ``window``
items are in flight, and a block is forgotten once done: memory is flat in the cells.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from qualspec.engine._blocks import Block, OpenGroups, batches, response_aspects
from qualspec.engine._cached import CachedAnswers, CacheLookup
from qualspec.engine._calls import CallEngine, CallStopped
from qualspec.engine._context import EvaluationContext
from qualspec.engine._evaluator_calls import EvaluatorCalls
from qualspec.engine._evaluators import (
    Evaluator,
    Subject,
    Verdict,
    evaluates,
    group_subject_key,
    uses_dependencies,
)
from qualspec.engine._items import WorkItem
from qualspec.engine._judgment import judgment_record
from qualspec.engine._options import ExecuteOptions, ExecuteStats, ProgressFn
from qualspec.engine._reply import answered_record
from qualspec.errors import AuthenticationError, ConfigError
from qualspec.messages import one_line as _one_line
from qualspec.providers import STRUCTURED_MODES, ChatRequest, Provider, effective_temperature
from qualspec.store import ResponseRecord, Store

if TYPE_CHECKING:
    from qualspec.engine._sink import Sink
    from qualspec.spec import ProviderConfig

__all__ = [
    "BATCH",
    "DEFAULT_WINDOW",
    "BoundEvaluator",
    "ExecuteOptions",
    "ExecuteStats",
    "Executor",
    "ProgressFn",
]

log = logging.getLogger("qualspec.engine")
DEFAULT_WINDOW = 1024
"""Items in flight at most (answered or evaluated) when the run does not say."""
BATCH = 500
"""Items read from the plan, and looked up in the store, at a time."""


@dataclass(frozen=True, slots=True)
class _Found:
    """What the store holds for a batch of items (see ``Executor._look_up_batch``)."""

    items: list[WorkItem]
    done: dict[str, ResponseRecord]
    evaluations: set[tuple[str, str, str]]
    cached: CacheLookup  # what the cache holds for the rest

    def keys(self) -> list[str]:
        """The keys of the batch's items."""
        return [item.key for item in self.items]


@dataclass(frozen=True, slots=True)
class BoundEvaluator:
    """An evaluator with the id of its prompt version in the store."""

    evaluator: Evaluator
    prompt_version: int | None = None


class Executor(CachedAnswers, EvaluatorCalls):
    """Runs the work of a plan that the store does not yet hold."""

    def __init__(
        self,
        items: Iterable[WorkItem],
        *,
        calls: CallEngine,
        providers: Mapping[str, Provider],
        recorder: Sink,
        run_id: str,
        evaluators: Sequence[BoundEvaluator] = (),
        provider_configs: Mapping[str, ProviderConfig] | None = None,
        done_responses: Mapping[str, ResponseRecord] | None = None,
        done_evaluations: set[tuple[str, str, str]] | None = None,
        prompt_versions: Mapping[str, Mapping[str, int]] | None = None,
        progress: ProgressFn | None = None,
        look_up_done: bool = False,
        window: int | None = None,
    ) -> None:
        self._items = items
        self._by_key: dict[str, WorkItem] = {}
        # a resumed run: what is done is looked up in the store a batch at a time
        self._look_up = look_up_done
        self.window = max(1, window or DEFAULT_WINDOW)
        self.max_in_flight = 0  # the most items in flight at once (tests, benchmarks)
        self._in_flight = 0
        self._judge_total = self._judge_shown = 0
        self._backlog = 0  # records given to the recorder, not yet written
        self._cached_backlog = 0  # cached answers given together, not yet written
        self._copy_backlog = 0  # cached cells the store copies, not yet written
        self._drained = asyncio.Event()
        self._calls = calls
        self._providers = dict(providers)
        self._configs = dict(provider_configs or {})
        self._recorder = recorder
        self.run_id = run_id
        self._opt = calls.options
        self._response_evals = [b for b in evaluators if b.evaluator.scope == "response"]
        self._group_evals = [b for b in evaluators if b.evaluator.scope == "group"]
        if not self._opt.judge:  # --no-judge: only evaluators that call no model (checks)
            self._response_evals = [b for b in self._response_evals if b.evaluator.model is None]
            self._group_evals = [b for b in self._group_evals if b.evaluator.model is None]
        self._open_groups = OpenGroups([b.evaluator for b in self._group_evals])
        self._done = dict(done_responses or {})
        self._done_e = set(done_evaluations or ())
        self._versions = prompt_versions or {}
        self._progress = progress or (lambda kind, n: None)
        self._answers: dict[str, asyncio.Future[ResponseRecord | None]] = {}
        self.store_failure: BaseException | None = None
        self.stats = ExecuteStats()

    # ---------------------------------------------------------------- public

    def on_store_failure(self, exc: BaseException) -> None:
        """The recorder gave up writing: start no new call (answers in flight are at risk)."""
        if self.store_failure is None:
            self.store_failure = exc
            self._calls.stop(f"the results database cannot record: {_one_line(exc)}")

    async def run(self) -> ExecuteStats:
        """Execute; raise AuthenticationError (after cancelling the rest) if credentials fail."""
        gate = asyncio.Semaphore(self.window)
        try:
            # structured: the first failure (a refused key) cancels every other task, and
            # the run waits for them before it raises
            async with asyncio.TaskGroup() as tasks:
                ahead: tuple[list[Block], asyncio.Task[_Found]] | None = None
                for batch in batches(self._items, BATCH):
                    # the next batch's store lookups run while this one is started
                    found = tasks.create_task(self._look_up_batch(batch))
                    if ahead is not None:
                        await self._wait_for_writes()
                        await self._schedule(*ahead, tasks, gate)
                    ahead = (batch, found)
                if ahead is not None:
                    await self._wait_for_writes()
                    await self._schedule(*ahead, tasks, gate)
                self._start_groups(self._open_groups.rest(), tasks)
                self._count_evaluations([], [], final=True)
        except BaseExceptionGroup as failed:
            raise failed.exceptions[0] from None  # what ended the run, as itself
        stats = self.stats
        stats.budget_exceeded = self._calls.budget_exceeded and stats.skipped_for_budget > 0
        stats.cost_usd = stats.candidate_cost_usd + stats.judge_cost_usd + stats.reference_cost_usd
        if stats.cached_candidate or stats.cached_judge:
            log.info(
                "cache hits: %d candidate, %d judge", stats.cached_candidate, stats.cached_judge
            )
        return stats

    async def _look_up_batch(self, batch: list[Block]) -> _Found:
        """What the store holds for a batch: a resumed run's done answers and evaluations,
        and the cache entries of the rest (one query each, in a worker thread)."""
        items = [item for block in batch for item in block.items]
        done: dict[str, ResponseRecord] = {}
        evaluations: set[tuple[str, str, str]] = set()
        if self._look_up:
            keys = [item.key for item in items]
            done = await asyncio.to_thread(self.store.done_responses, self.run_id, keys)
            evaluations = await asyncio.to_thread(self.store.done_evaluations, self.run_id, keys)
        return _Found(items, done, evaluations, await self._look_up_cache(batch, items, done))

    async def _schedule(
        self,
        batch: list[Block],
        found: asyncio.Task[_Found],
        tasks: asyncio.TaskGroup,
        gate: asyncio.Semaphore,
    ) -> None:
        """Start a batch of blocks once what the store holds for it is known: one task per
        item to answer or evaluate (at most ``window`` in flight) and per group; an answer
        the store holds with nothing to evaluate is done here, without a task."""
        loop = asyncio.get_running_loop()
        looked = await found
        done = {k: self._done[k] for k in looked.keys() if k in self._done}
        done.update(looked.done)
        for block in batch:  # forgotten with the block
            self._done_e |= block.hold(looked.evaluations)
        cached, copied = self._cached_records(looked.items, looked.cached)
        answered = 0
        for block in batch:
            futures = bool(self._group_evals) or any(i.depends_on for i in block.items)
            closed = self._open_groups.add(block)
            self._count_evaluations(block.items, [])
            for item in block.items:
                self._by_key[item.key] = item
                if futures:
                    self._answers[item.key] = loop.create_future()
            for item in block.items:
                existing = done.get(item.key) or cached.get(item.key)
                if item.key in copied:  # recorded by the store itself: nothing waits on it
                    answered += 1
                    continue
                if existing is not None and not self._response_evals:
                    future = self._answers.get(item.key)
                    if future is not None:
                        future.set_result(existing)
                    answered += 1
                    continue
                await gate.acquire()
                self._in_flight += 1
                self.max_in_flight = max(self.max_in_flight, self._in_flight)
                block.pending += 1
                task = tasks.create_task(self._cell(item, existing))
                task.add_done_callback(functools.partial(self._finished, block, gate))
            self._start_groups(closed, tasks)
            block.closed = True
            self._forget_if_done(block)
        if answered:
            self._progress("candidate", answered)

    def _start_groups(
        self, closed: list[tuple[int, str, list[WorkItem], list[Block]]], tasks: asyncio.TaskGroup
    ) -> None:
        """Start the evaluation of each closed group; the blocks it holds are released
        when it is done."""
        for index, group_id, members, held in closed:
            bound = self._group_evals[index]
            self._count_evaluations([], [(bound, group_id, members)])
            task = tasks.create_task(self._group(bound, group_id, members))
            for block in held:
                task.add_done_callback(functools.partial(self._finished, block, None))

    def _finished(self, block: Block, gate: asyncio.Semaphore | None, _: object = None) -> None:
        if gate is not None:
            self._in_flight -= 1
            gate.release()
        block.pending -= 1
        self._forget_if_done(block)

    def _forget_if_done(self, block: Block) -> None:
        """A block whose tasks are all done: its answers and items are not needed again."""
        if not block.closed or block.pending:
            return
        for key in block.keys():
            self._answers.pop(key, None)
            self._by_key.pop(key, None)
            self._done.pop(key, None)
        self._done_e -= block.evaluations

    def _count_evaluations(
        self,
        items: list[WorkItem],
        groups: list[tuple[BoundEvaluator, str, list[WorkItem]]],
        *,
        final: bool = False,
    ) -> None:
        """Add a block's evaluations to the progress total (it grows as blocks start,
        reported every 1% of growth, and once the whole plan has started)."""
        total = sum(len(b.evaluator.aspects(members)) for b, _, members in groups)
        total += sum(response_aspects(b.evaluator, items) for b in self._response_evals)
        self._judge_total += total
        shown = self._judge_shown
        if self._judge_total != shown and (final or self._judge_total > shown + shown // 100):
            self._judge_shown = self._judge_total
            self._progress("total:judge", self._judge_total)

    # ---------------------------------------------------------------- stages

    async def _cell(self, item: WorkItem, existing: ResponseRecord | None) -> None:
        record: ResponseRecord | None = None
        try:
            record = existing if existing is not None else await self._answer(item)
        except CallStopped:
            self.stats.skipped_for_budget += 1
            return
        finally:
            future = self._answers.get(item.key)
            if future is not None and not future.done():
                future.set_result(record)  # None: never answered (calls stopped)
        if existing is not None:
            self._progress("candidate", 1)
        if record is None or record.error is not None or not self._response_evals:
            return
        subject = Subject(key=item.key, items=(item,), responses=(record,))
        for bound in self._response_evals:
            if evaluates(bound.evaluator, item) and not await self._evaluate_all(
                bound, subject, (item,)
            ):
                return

    async def _group(self, bound: BoundEvaluator, group_id: str, members: list[WorkItem]) -> None:
        results = await asyncio.gather(*(self._answers[item.key] for item in members))
        answered = [(i, r) for i, r in zip(members, results, strict=True) if r is not None and r.ok]
        if not answered:
            return
        items = tuple(i for i, _ in answered)
        subject = Subject(
            key=group_subject_key(bound.evaluator.name, [i.key for i in items]),
            items=items,
            responses=tuple(r for _, r in answered),
            group=group_id,
        )
        found: set[tuple[str, str, str]] = set()
        if self._look_up:  # a group's subject is known once its answers are
            found = await asyncio.to_thread(self.store.done_evaluations, self.run_id, [subject.key])
            found -= self._done_e
            self._done_e |= found
        try:
            await self._evaluate_all(bound, subject, tuple(members))
        finally:
            self._done_e -= found

    async def _evaluate_all(
        self, bound: BoundEvaluator, subject: Subject, members: tuple[WorkItem, ...]
    ) -> bool:
        """Every aspect of ``subject`` not yet recorded; False once calls are stopped.

        With dependencies (and an evaluator that uses them) it first waits for their
        answers; a failed one makes every aspect an error record (resume does both again).
        """
        name = bound.evaluator.name
        aspects = bound.evaluator.aspects(members)
        todo = [a for a in aspects if (name, subject.key, a) not in self._done_e]
        self._progress("judge", len(aspects) - len(todo))
        blocked: str | None = None
        if todo and uses_dependencies(bound.evaluator):
            wanted = dict.fromkeys(k for item in members for k in item.depends_on)
            if wanted:
                answers = await asyncio.gather(*(self._answers[k] for k in wanted))
                if any(a is None for a in answers):  # calls were stopped before it was asked
                    self.stats.skipped_for_budget += len(todo)
                    return False
                deps = {a.key: a for a in answers if a is not None}
                failed = next((a for a in deps.values() if a.error is not None), None)
                if failed is not None:
                    blocked = f"{failed.kind} answer failed: {failed.error}"
                subject = dataclasses.replace(
                    subject,
                    dependencies=deps,
                    dependency_items={k: self._by_key[k] for k in deps if k in self._by_key},
                    dependency_call_keys={
                        k: self._calls.cache_key(i.call_key, self._providers[i.provider])
                        for k in deps
                        if (i := self._by_key.get(k)) is not None and i.provider in self._providers
                    },
                )
        for aspect in todo:
            try:
                await self._evaluate(bound, subject, aspect, blocked)
            except CallStopped:
                self.stats.skipped_for_budget += len(todo)
                return False
        return True

    async def _evaluate(
        self, bound: BoundEvaluator, subject: Subject, aspect: str, blocked: str | None = None
    ) -> None:
        """Evaluate and record one aspect; ``blocked``: a dependency failed (an error
        record, nothing called)."""
        evaluator = bound.evaluator
        ctx = EvaluationContext(self, bound.prompt_version)
        try:
            if blocked is not None:
                verdict = Verdict(error=blocked)
            else:
                verdict = await evaluator.evaluate(subject, aspect, ctx)
        except (CallStopped, AuthenticationError, asyncio.CancelledError):
            raise
        except ConfigError as exc:
            verdict = Verdict(error=str(exc))
        except Exception as exc:  # noqa: BLE001 - a plugin's bug is recorded, not fatal
            log.exception("evaluator %r raised on %s", evaluator.name, subject.key)
            verdict = Verdict(error=f"evaluator {evaluator.name!r} raised {type(exc).__name__}")
        error = verdict.error
        self._recorder.judgment(
            judgment_record(
                evaluator,
                subject,
                aspect,
                verdict,
                blocked=blocked,
                judge_key=ctx.last_key,
                prompt_version=bound.prompt_version,
                usage=ctx.usage(error).as_fields(),
                served_by=ctx.served_by,
            ),
            on_commit=self._unwritten(),
        )
        self.stats.evaluations += 1
        if error is not None:
            self.stats.errors += 1
        self._progress("judge", 1)

    async def _answer(self, item: WorkItem) -> ResponseRecord:
        provider = self._providers[item.provider]
        effective = effective_temperature(provider, item.temperature)
        params = dict(item.params)
        max_tokens = params.pop("max_tokens", None)
        request = ChatRequest(
            model=item.model,
            messages=item.messages,
            temperature=effective,
            max_tokens=max_tokens,
            params=params,
            seed=item.run_index,
            json_schema=dict(item.json_schema) if item.json_schema is not None else None,
        )
        if request.json_schema is not None:  # as the endpoint settled (see CallEngine)
            request.structured_mode = self._calls.structured_mode_for(provider)
        gate = self._calls.gate(provider)
        out = await self._calls.call(provider, request, gate=gate)
        while out.format_rejected and request.structured_mode != STRUCTURED_MODES[-1]:
            # the server refused the format: ask more plainly (and so from now on)
            refused = request.structured_mode
            request.structured_mode = self._calls.format_refused(provider, refused, out.error)
            out = await self._calls.call(provider, request, gate=gate)
        candidate = item.kind == "candidate"
        if candidate:
            self.stats.candidate_calls += 1
        else:
            self.stats.reference_calls += 1
        key = self._calls.cache_key(item.call_key, provider)
        record = answered_record(out, item, key, effective, self._part_versions(item))
        if out.cost and candidate:
            self.stats.candidate_cost_usd += out.cost
        elif out.cost:
            self.stats.reference_cost_usd += out.cost
        resp = out.response
        if resp is not None:
            # call() returned still holding the gate: released once the answer is durable
            entry = self._calls.cache_entry(item.kind, key, provider, item.model, resp, effective)
            self._calls.record_answer(self._recorder, record, entry, on_commit=gate.release)
        else:
            self._recorder.response(record)
            self.stats.errors += 1
        self._progress("candidate", 1)
        return record

    # ---------------------------------------------------------------- helpers

    @property
    def store(self) -> Store:
        """The store the run records into."""
        return self._calls.store
