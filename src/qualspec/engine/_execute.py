"""The executor: every model call of a run, async, with limits, retries, timeouts, cache, cost."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from qualspec.engine._items import WorkItem, call_key
from qualspec.engine._retry import RetryPolicy
from qualspec.errors import AuthenticationError, ProviderError, ProviderTimeoutError
from qualspec.providers._base import ChatRequest, ChatResponse, Message, Provider, clamp_temperature
from qualspec.store._records import CacheEntry, JudgmentRecord, ResponseRecord

if TYPE_CHECKING:
    from qualspec.engine._recorder import Recorder
    from qualspec.providers._prices import PriceTable
    from qualspec.store._store import Store

__all__ = ["ExecuteOptions", "ExecuteStats", "Executor", "JudgeSettings", "ProgressFn"]

ProgressFn = Callable[[str, int], None]
"""Called as ``progress(kind, n)`` when ``n`` units of ``kind`` finish ("candidate"/"judge")."""


@dataclass(frozen=True, kw_only=True)
class ExecuteOptions:
    """How calls are made.

    Example: ``ExecuteOptions(max_concurrency=8, timeout=60, max_cost=2.5)``.
    """

    max_concurrency: int | None = None
    timeout: float = 120.0
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    use_cache: bool = True
    refresh: bool = False
    cache_ttl: Mapping[str, float | None] = field(
        default_factory=lambda: {"candidate": None, "judge": None, "reference": 86400.0}
    )
    max_cost: float | None = None
    judge: bool = True
    judge_parse_retries: int = 2
    max_response_chars: int = 4000


@dataclass(frozen=True, kw_only=True)
class JudgeSettings:
    """The judge model for a run."""

    provider: str
    model: str
    threshold: float
    params: Mapping[str, Any]
    prompt_version: int | None = None


@dataclass
class ExecuteStats:
    """What the executor did."""

    candidate_calls: int = 0
    judge_calls: int = 0
    cached_candidate: int = 0
    cached_judge: int = 0
    errors: int = 0
    cost_usd: float = 0.0
    candidate_cost_usd: float = 0.0
    judge_cost_usd: float = 0.0
    saved_usd: float = 0.0
    skipped_for_budget: int = 0
    budget_exceeded: bool = False


class _BudgetStop(Exception):
    """Raised inside a cell when the budget stops new calls."""


@dataclass(slots=True)
class _Outcome:
    response: ChatResponse | None
    attempts: int
    latency: float
    error: str | None
    cost: float | None


class Executor:
    """Runs the work items of a plan that the store does not yet hold."""

    def __init__(
        self,
        items: Iterable[WorkItem],
        *,
        providers: Mapping[str, Provider],
        store: Store,
        recorder: Recorder,
        judge: JudgeSettings | None,
        prices: PriceTable | None,
        options: ExecuteOptions,
        done_responses: Mapping[str, ResponseRecord] | None = None,
        done_judgments: set[tuple[str, str]] | None = None,
        prompt_versions: Mapping[str, Mapping[str, int]] | None = None,
        progress: ProgressFn | None = None,
        timeouts: Mapping[str, float] | None = None,
    ) -> None:
        self._items = list(items)
        self._timeouts = dict(timeouts or {})
        self._providers = providers
        self._store = store
        self._recorder = recorder
        self._judge = judge
        self._prices = prices
        self._opt = options
        self._done = dict(done_responses or {})
        self._done_j = set(done_judgments or ())
        self._versions = prompt_versions or {}
        self._progress = progress or (lambda kind, n: None)
        self._limits: dict[str, asyncio.Semaphore] = {}
        self._gates: dict[str, asyncio.Semaphore] = {}
        self._judge_cache: dict[str, CacheEntry] = {}
        self._stop_new = False
        self.stats = ExecuteStats()

    # ---------------------------------------------------------------- public

    async def run(self) -> ExecuteStats:
        """Execute; raise AuthenticationError (after cancelling the rest) if credentials fail."""
        for name, provider in self._providers.items():
            limit = self._opt.max_concurrency or provider.default_concurrency
            self._limits[name] = asyncio.Semaphore(max(1, limit))
            self._gates[name] = asyncio.Semaphore(max(1, limit))
        self._recorder.bind_loop(asyncio.get_running_loop())
        cached = self._prefetch_cache()
        tasks = [
            asyncio.create_task(self._cell(item, self._done.get(item.key) or cached.get(item.key)))
            for item in self._items
        ]
        try:
            await asyncio.gather(*tasks)
        except BaseException:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            raise
        return self.stats

    # ---------------------------------------------------------------- cells

    async def _cell(self, item: WorkItem, existing: ResponseRecord | None) -> None:
        try:
            record = existing if existing is not None else await self._answer(item)
        except _BudgetStop:
            self.stats.skipped_for_budget += 1
            return
        if existing is not None:
            self._progress("candidate", 1)
        if record.error is not None or self._judge is None or not self._opt.judge:
            return
        todo = [c for c in item.criteria if (item.key, c) not in self._done_j]
        self._progress("judge", len(item.criteria) - len(todo))
        for criterion in todo:
            try:
                await self._judge_one(item, record, criterion)
            except _BudgetStop:
                self.stats.skipped_for_budget += 1

    async def _answer(self, item: WorkItem) -> ResponseRecord:
        provider = self._providers[item.provider]
        effective = clamp_temperature(item.temperature, provider.temperature_range)
        params = dict(item.params)
        max_tokens = params.pop("max_tokens", None)
        request = ChatRequest(
            model=item.model,
            messages=item.messages,
            temperature=effective,
            max_tokens=max_tokens,
            params=params,
            seed=item.run_index,
        )
        gate = self._gates[item.provider]
        out = await self._call(item.provider, request, gate=gate)
        self.stats.candidate_calls += 1
        resp = out.response
        record = ResponseRecord(
            key=item.key,
            candidate=item.candidate,
            role=item.role,
            scenario=item.scenario,
            input_id=item.input_id,
            temperature=item.temperature,
            effective_temperature=effective,
            run_index=item.run_index,
            provider=item.provider,
            model=item.model,
            text=resp.text if resp else None,
            finish_reason=resp.finish_reason if resp else None,
            input_tokens=resp.input_tokens if resp else None,
            output_tokens=resp.output_tokens if resp else None,
            latency_s=out.latency,
            cost_usd=out.cost,
            attempts=out.attempts,
            error=out.error,
            cached=False,
            prompt_versions=self._part_versions(item),
            created_at=_now(),
        )
        if out.cost:
            self.stats.candidate_cost_usd += out.cost
        # on success _call returned still holding the gate: released once the answer is durable
        self._recorder.response(record, on_commit=gate.release if resp is not None else None)
        if resp is not None:
            self._recorder.cache(
                self._cache_entry(
                    "candidate", item.call_key, item.provider, item.model, resp, effective
                )
            )
        else:
            self.stats.errors += 1
        self._progress("candidate", 1)
        return record

    async def _judge_one(self, item: WorkItem, record: ResponseRecord, criterion: str) -> None:
        from qualspec.judges import JUDGE_SCHEMA, build_judge_messages, parse_judgment

        judge = self._judge
        assert judge is not None and record.text is not None
        params = dict(judge.params)
        temperature = float(params.pop("temperature", 0.0))
        max_tokens = int(params.pop("max_tokens", 256))
        key_params = {**params, "temperature": temperature, "max_tokens": max_tokens}
        retry_note: str | None = None
        attempts = 0
        latency = 0.0
        cost = 0.0
        cached_all = True
        text: str | None = None
        error: str | None = None
        parsed = None
        key = ""
        usage = [0, 0]
        for parse_try in range(self._opt.judge_parse_retries + 1):
            messages = build_judge_messages(
                criterion=criterion,
                prompt=_user_prompt(item.messages),
                response=record.text,
                context=item.context,
                max_response_chars=self._opt.max_response_chars,
                retry_note=retry_note,
            )
            key = call_key(
                judge.provider, judge.model, messages, key_params, parse_try, JUDGE_SCHEMA
            )
            entry = self._judge_cache_get(key)
            if entry is not None:
                text, structured = entry.text, entry.structured
                self.stats.cached_judge += 1
                self.stats.saved_usd += (
                    self._cost(judge.provider, judge.model, entry.input_tokens, entry.output_tokens)
                    or 0.0
                )
            else:
                cached_all = False
                request = ChatRequest(
                    model=judge.model,
                    messages=messages,
                    temperature=temperature,
                    max_tokens=max_tokens,
                    params=params,
                    json_schema=JUDGE_SCHEMA,
                    seed=parse_try,
                )
                out = await self._call(judge.provider, request)
                self.stats.judge_calls += 1
                attempts += out.attempts
                latency += out.latency
                if out.cost:
                    cost += out.cost
                    self.stats.judge_cost_usd += out.cost
                if out.response is None:
                    error = out.error
                    break
                text, structured = out.response.text, out.response.structured
                usage[0] += out.response.input_tokens or 0
                usage[1] += out.response.output_tokens or 0
                self._recorder.cache(
                    self._cache_entry("judge", key, judge.provider, judge.model, out.response, None)
                )
            parsed = parse_judgment(text or "", structured)
            if parsed.score is not None:
                break
            retry_note = (
                f"Your previous answer could not be read ({parsed.unscored_reason}). "
                'Answer only with the JSON object {"score": <0-10>, "reasoning": "..."}.'
            )
        score = parsed.score if parsed is not None and error is None else None
        unscored = None
        if error is not None:
            unscored = f"judge call failed: {error}"
        elif score is None and parsed is not None:
            unscored = parsed.unscored_reason
        self._recorder.judgment(
            JudgmentRecord(
                response_key=item.key,
                criterion=criterion,
                judge_key=key,
                judge_model=f"{judge.provider}/{judge.model}",
                threshold=judge.threshold,
                score=score,
                passed=None if score is None else score >= judge.threshold,
                reasoning=parsed.reasoning if parsed is not None else None,
                unscored_reason=unscored,
                raw_text=text,
                input_tokens=usage[0] or None,
                output_tokens=usage[1] or None,
                latency_s=latency or None,
                cost_usd=cost or None,
                attempts=max(attempts, 1),
                error=error,
                cached=cached_all,
                prompt_version=judge.prompt_version,
                created_at=_now(),
            )
        )
        if error is not None:
            self.stats.errors += 1
        self._progress("judge", 1)

    # ---------------------------------------------------------------- calls

    async def _call(
        self, provider_name: str, request: ChatRequest, *, gate: asyncio.Semaphore | None = None
    ) -> _Outcome:
        """One logical call: bounded attempts under the provider's limiter.

        ``gate`` (candidate calls) is acquired for each attempt and, when the call succeeds,
        returned still held: the caller releases it once the answer is committed. So calls in
        flight plus answers not yet durable never exceed the provider's concurrency, and a
        kill wastes at most that many calls.
        """
        provider = self._providers[provider_name]
        limit = self._limits[provider_name]
        policy = self._opt.retry
        timeout = self._timeouts.get(provider_name, self._opt.timeout)
        attempt = 0
        start = time.perf_counter()
        while True:
            if self._stop_new:
                raise _BudgetStop
            attempt += 1
            if gate is not None:
                await gate.acquire()
            try:
                async with limit:
                    if self._stop_new:  # the budget may have run out while waiting
                        raise _BudgetStop
                    async with asyncio.timeout(timeout):
                        response = await provider.complete(request)
            except BaseException as exc:
                if gate is not None:
                    gate.release()
                if isinstance(exc, TimeoutError):
                    error: ProviderError = ProviderTimeoutError(
                        f"no answer within {timeout:g}s (raise --timeout)",
                        provider=provider_name,
                        model=request.model,
                    )
                elif isinstance(exc, ProviderError) and not isinstance(exc, AuthenticationError):
                    error = exc
                else:
                    raise
            else:
                cost = self._cost(
                    provider_name, request.model, response.input_tokens, response.output_tokens
                )
                self._spend(cost)
                return _Outcome(response, attempt, time.perf_counter() - start, None, cost)
            if not policy.should_retry(error, attempt):
                detail = f"HTTP {error.status}: {error}" if error.status else str(error)
                return _Outcome(None, attempt, time.perf_counter() - start, detail, None)
            await asyncio.sleep(policy.delay(error, attempt))

    # ---------------------------------------------------------------- cache, cost

    def _prefetch_cache(self) -> dict[str, ResponseRecord]:
        """Bulk-read cached candidate answers for the work not yet done in this run."""
        if not self._opt.use_cache or self._opt.refresh:
            return {}
        todo = [item for item in self._items if item.key not in self._done]
        if not todo:
            return {}
        entries = self._store.cache_get_many({item.call_key for item in todo})
        out: dict[str, ResponseRecord] = {}
        for item in todo:
            entry = entries.get(item.call_key)
            if entry is None:
                continue
            saved = self._cost(item.provider, item.model, entry.input_tokens, entry.output_tokens)
            self.stats.cached_candidate += 1
            self.stats.saved_usd += saved or 0.0
            record = ResponseRecord(
                key=item.key,
                candidate=item.candidate,
                role=item.role,
                scenario=item.scenario,
                input_id=item.input_id,
                temperature=item.temperature,
                effective_temperature=entry.effective_temperature,
                run_index=item.run_index,
                provider=item.provider,
                model=item.model,
                text=entry.text,
                finish_reason=entry.finish_reason,
                input_tokens=entry.input_tokens,
                output_tokens=entry.output_tokens,
                latency_s=0.0,
                cost_usd=0.0,
                attempts=0,
                cached=True,
                prompt_versions=self._part_versions(item),
                created_at=_now(),
            )
            self._recorder.response(record)
            out[item.key] = record
        return out

    def _judge_cache_get(self, key: str) -> CacheEntry | None:
        if not self._opt.use_cache or self._opt.refresh:
            return None
        return self._store.cache_get_many([key]).get(key)

    def _cache_entry(
        self,
        kind: str,
        key: str,
        provider: str,
        model: str,
        response: ChatResponse,
        effective: float | None,
    ) -> CacheEntry:
        now = _now()
        ttl = self._opt.cache_ttl.get(kind)
        return CacheEntry(
            key=key,
            kind=kind,
            provider=provider,
            model=model,
            text=response.text,
            finish_reason=response.finish_reason,
            input_tokens=response.input_tokens,
            output_tokens=response.output_tokens,
            effective_temperature=effective,
            structured=response.structured,
            created_at=now,
            expires_at=None if ttl is None else now + timedelta(seconds=ttl),
        )

    def _cost(
        self, provider: str, model: str, input_tokens: int | None, output_tokens: int | None
    ) -> float | None:
        if self._prices is None:
            return None
        return self._prices.cost(provider, model, input_tokens, output_tokens)

    def _spend(self, cost: float | None) -> None:
        if not cost:
            return
        self.stats.cost_usd += cost
        limit = self._opt.max_cost
        if limit is not None and self.stats.cost_usd >= limit:
            self._stop_new = True
            self.stats.budget_exceeded = True

    def _part_versions(self, item: WorkItem) -> dict[str, int]:
        out: dict[str, int] = {}
        for name, text in item.prompt_parts.items():
            version = self._versions.get(name, {}).get(text)
            if version is not None:
                out[name] = version
        return out


def _user_prompt(messages: tuple[Message, ...]) -> str:
    for message in reversed(messages):
        if message.role == "user":
            return message.content
    return ""


def _now() -> datetime:
    return datetime.now(UTC)
