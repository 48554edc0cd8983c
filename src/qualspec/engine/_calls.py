"""The call layer every model call goes through: limits, retries, timeouts, cache, cost, budget.

One :class:`CallEngine` per :class:`~qualspec.Session`. Limits are keyed by *endpoint* (a
provider's base URL, or the model file for local models), so two provider names pointing
at the same server share one limit; cache keys include the endpoint, so one name pointing
at two servers never shares cache entries.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import logging
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from qualspec.engine._items import call_key
from qualspec.errors import (
    AuthenticationError,
    BadResponseError,
    ProviderError,
    ProviderTimeoutError,
)
from qualspec.providers import (
    STRUCTURED_MODES,
    ChatRequest,
    ChatResponse,
    Message,
    Provider,
    effective_temperature,
)
from qualspec.store import CacheEntry

if TYPE_CHECKING:
    from qualspec.engine._options import ExecuteOptions
    from qualspec.engine._sink import Sink
    from qualspec.providers import PriceTable, ProviderPool
    from qualspec.spec import ProviderConfig
    from qualspec.store import Store

__all__ = ["CallEngine", "CallStopped", "Outcome", "Reply", "Scrubber"]

log = logging.getLogger("qualspec.engine")


class CallStopped(Exception):
    """No new call may start: the budget is spent or the store cannot record."""


@dataclass(slots=True)
class Outcome:
    """One logical call (all its attempts): the response, or the error that ended it."""

    response: ChatResponse | None
    attempts: int
    latency: float
    """Service time: seconds the provider took, over all attempts."""
    error: str | None
    cost: float | None
    queue: float = 0.0
    """Seconds spent waiting for a concurrency slot (not part of ``latency``)."""
    format_rejected: bool = False
    """The server refused the requested structured-output mode (see ``complete``)."""


@dataclass(slots=True)
class Reply:
    """The result of one call made through the engine (see ``Session.complete``).

    ``text`` is None when the call failed (``error`` says why). ``key`` is the cache key.
    ``cost_usd`` is None when the price is unknown (and 0 for a cached reply).
    """

    text: str | None
    structured: Any = None
    error: str | None = None
    finish_reason: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost_usd: float | None = None
    latency_s: float = 0.0
    attempts: int = 0
    cached: bool = False
    key: str = ""
    saved_usd: float = 0.0
    effective_temperature: float | None = None
    queue_s: float = 0.0
    structured_mode: str | None = None
    """How structured output was asked for (None: it was not)."""
    format_rejected: bool = False

    @property
    def ok(self) -> bool:
        """True when the call produced an answer."""
        return self.error is None and self.text is not None


class Scrubber:
    """Replaces every configured secret value by ``***`` in what qualspec records or prints.

    The engine learns the secrets of the providers it calls (their optional
    ``secret_values``: API keys, credentials in a base URL) and scrubs answers (text and
    structured) and error texts before anything is recorded, cached, logged or printed.
    Values shorter than :attr:`MIN_LENGTH` are ignored: replacing them would mangle text.
    """

    MIN_LENGTH = 4
    MASK = "***"

    def __init__(self) -> None:
        self._known: frozenset[str] = frozenset()
        self._values: tuple[str, ...] = ()
        self._seen: set[str] = set()  # every value given to ``add`` (short ones too)

    def __bool__(self) -> bool:
        return bool(self._values)

    def add(self, values: Iterable[str]) -> None:
        """Learn secret values (their URL-encoded and decoded forms too)."""
        # called before every call: values already seen cost one set lookup each
        fresh = [v for v in values if isinstance(v, str) and v not in self._seen]
        if not fresh:
            return
        self._seen.update(fresh)
        from urllib.parse import quote, unquote

        new: set[str] = set()
        for value in fresh:
            if value in self._known:
                continue
            new.update({value, quote(value, safe=""), unquote(value)})
        new = {v for v in new if len(v) >= self.MIN_LENGTH} - self._known
        if not new:
            return
        self._known = self._known | new
        # the longest first, so a value that contains another is masked whole
        self._values = tuple(sorted(self._known, key=len, reverse=True))

    def text(self, text: str) -> str:
        """``text`` with every known secret replaced by ``***``."""
        for value in self._values:
            if value in text:
                text = text.replace(value, self.MASK)
        return text

    def value(self, value: Any) -> Any:
        """Strings inside JSON-like data (dicts, lists, tuples) scrubbed."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.value(k): self.value(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return type(value)(self.value(v) for v in value)
        return value

    def response(self, response: ChatResponse) -> ChatResponse:
        """A response with its text and structured answer scrubbed."""
        if not self._values:
            return response
        text = self.text(response.text) if isinstance(response.text, str) else response.text
        structured = self.value(response.structured)
        if text == response.text and structured == response.structured:
            return response
        return dataclasses.replace(response, text=text, structured=structured)


class _Spend:
    """The session's spending against its budget."""

    def __init__(self, limit: float | None) -> None:
        self.limit = limit
        self.total = 0.0
        self.exceeded = False


class CallEngine:
    """Providers, per-endpoint limits, retries, timeouts, cache and cost for one session."""

    def __init__(
        self,
        *,
        store: Store,
        options: ExecuteOptions,
        prices: PriceTable | None,
    ) -> None:
        self.store = store
        self.options = options
        self.prices = prices
        self._pools: dict[tuple[Any, ...], ProviderPool] = {}
        self._limits: dict[str, asyncio.Semaphore] = {}
        self._gates: dict[str, asyncio.Semaphore] = {}
        self._timeouts: dict[str, float] = {}
        self._spend = _Spend(options.max_cost)
        self._stop_reason: str | None = None
        self._auth_failure: AuthenticationError | None = None
        # set once a provider has answered a call (or refused it): see ``heard``
        self.heard = asyncio.Event()
        self._memory: dict[str, CacheEntry] = {}
        self._modes: dict[str, str] = {}  # endpoint -> structured mode after a refusal
        self._endpoint_names: dict[str, str] = {}
        self._kinds_in_store: set[str] | None = None
        self._kinds_lock: asyncio.Lock | None = None
        self.scrub = Scrubber()

    # ------------------------------------------------------------ providers

    def providers(
        self, names: Sequence[str], configs: Mapping[str, ProviderConfig] | None = None
    ) -> dict[str, Provider]:
        """The providers called ``names`` under a suite's ``providers:`` configs.

        Providers are created once per (name, configuration) for the whole session.
        """
        from qualspec.providers import ProviderPool

        configs = dict(configs or {})
        pool_key = tuple(sorted((n, c.model_dump_json()) for n, c in configs.items()))
        pool = self._pools.get(pool_key)
        if pool is None:
            pool = self._pools[pool_key] = ProviderPool(configs)
        out = {name: pool.get(name) for name in names}
        for name, provider in out.items():
            self.learn_secrets(provider)
            config = configs.get(name)
            if config is not None and config.timeout:
                self._timeouts[self.endpoint(provider)] = config.timeout
        return out

    async def aclose(self) -> None:
        """Close every provider the session created."""
        pools = list(self._pools.values())
        self._pools.clear()
        for pool in pools:
            await pool.aclose()

    def learn_secrets(self, provider: Provider) -> None:
        """Remember a provider's secrets (its optional ``secret_values``) to scrub them."""
        values = getattr(provider, "secret_values", None)
        if values:
            self.scrub.add(values)

    @staticmethod
    def endpoint(provider: Provider) -> str:
        """Where a provider's calls go (its ``endpoint``, else its name)."""
        value = getattr(provider, "endpoint", None)
        return str(value) if value else f"name:{provider.name}"

    def _limits_for(self, provider: Provider) -> tuple[asyncio.Semaphore, asyncio.Semaphore]:
        where = self.endpoint(provider)
        limit = self._limits.get(where)
        if limit is None:
            n = max(1, self.options.max_concurrency or provider.default_concurrency)
            limit = self._limits[where] = asyncio.Semaphore(n)
            self._gates[where] = asyncio.Semaphore(n)
        return limit, self._gates[where]

    def gate(self, provider: Provider) -> asyncio.Semaphore:
        """The semaphore a candidate call holds until its answer is committed."""
        return self._limits_for(provider)[1]

    # ------------------------------------------------------------ stopping

    @property
    def stop_reason(self) -> str | None:
        """Why new calls are refused (None while they are allowed)."""
        return self._stop_reason

    @property
    def budget_exceeded(self) -> bool:
        """True once the session's spending reached ``max_cost``."""
        return self._spend.exceeded

    @property
    def spent_usd(self) -> float:
        """What the session's calls cost so far (known prices only)."""
        return self._spend.total

    def stop(self, reason: str) -> None:
        """Refuse every new call from now on (calls in flight finish)."""
        if self._stop_reason is None:
            self._stop_reason = reason
            log.warning("no new calls: %s", reason)

    def _refuse_if_stopped(self) -> None:
        """Raise if no new call may start: the credentials were refused, or ``stop``."""
        if self._stop_reason is None:
            return
        failure = self._auth_failure
        if failure is not None:
            raise AuthenticationError(
                str(failure),
                provider=failure.provider,
                model=failure.model,
                status=failure.status,
                retryable=False,
            )
        raise CallStopped(self._stop_reason)

    # ------------------------------------------------------------ calls

    async def call(
        self,
        provider: Provider,
        request: ChatRequest,
        *,
        gate: asyncio.Semaphore | None = None,
        empty_ok: bool = False,
    ) -> Outcome:
        """One logical call: bounded attempts under the endpoint's limiter.

        ``gate`` (candidate calls) is acquired for each attempt and, when the call succeeds,
        returned still held: the caller releases it once the answer is committed. So calls in
        flight plus answers not yet durable never exceed the concurrency, and a kill wastes
        at most that many calls.

        Answers and error texts come back with every configured secret scrubbed. An empty
        answer (no text, no structured output) is a retryable error, not an answer, unless
        ``empty_ok`` (a judge's call: its evaluator reads an empty verdict as unscored and
        re-asks within its own bound).

        Raises:
            CallStopped: The budget is spent or the store cannot record.
            AuthenticationError: The credentials were refused. From then on no call of this
                engine starts (each raises AuthenticationError).
        """
        if self.options.replay_only:  # offline replay: a call not in the cache is an error
            return Outcome(
                response=None,
                attempts=0,
                latency=0.0,
                error=f"not recorded: no cached answer of {provider.name}/{request.model} for "
                "this call, and the session replays only (record it first)",
                cost=None,
            )
        self.learn_secrets(provider)
        limit, _ = self._limits_for(provider)
        policy = self.options.retry
        timeout = self._timeouts.get(self.endpoint(provider), self.options.timeout)
        attempt = 0
        queued = served = 0.0
        while True:
            self._refuse_if_stopped()
            attempt += 1
            waited = time.perf_counter()
            if gate is not None:
                await gate.acquire()
            try:
                async with limit:
                    began = time.perf_counter()
                    queued += began - waited
                    self._refuse_if_stopped()  # it may have stopped while waiting
                    try:
                        async with asyncio.timeout(timeout):
                            response = await provider.complete(request)
                    finally:
                        served += time.perf_counter() - began
                        self.heard.set()  # a provider answered (or refused): see ``heard``
                    response = self.scrub.response(response)
                    if not empty_ok and not _has_answer(response):
                        raise BadResponseError(
                            f"Provider '{provider.name}' sent an empty answer for model "
                            f"'{request.model}'",
                            provider=provider.name,
                            model=request.model,
                            status=200,
                        )
            except BaseException as exc:
                if gate is not None:
                    gate.release()
                if isinstance(exc, AuthenticationError) and self._auth_failure is None:
                    # the first refusal stops every call that has not started yet
                    self._auth_failure = exc
                    self.stop(f"authentication failed: {self.scrub.text(str(exc))}")
                if isinstance(exc, TimeoutError):
                    error: ProviderError = ProviderTimeoutError(
                        f"no answer within {timeout:g}s (raise --timeout)",
                        provider=provider.name,
                        model=request.model,
                    )
                elif isinstance(exc, ProviderError) and not isinstance(exc, AuthenticationError):
                    error = exc
                else:
                    raise
            else:
                cost = self.cost(
                    provider.name, request.model, response.input_tokens, response.output_tokens
                )
                self._charge(cost)
                return Outcome(response, attempt, served, None, cost, queued)
            detail = f"HTTP {error.status}: {error}" if error.status else str(error)
            detail = self.scrub.text(detail)
            if request.json_schema is not None and _rejects_format(error, request):
                # not retried: ``complete`` asks again in a mode the server takes
                return Outcome(None, attempt, served, detail, None, queued, format_rejected=True)
            if not policy.should_retry(error, attempt):
                if attempt > 1 or error.retryable:
                    log.warning(
                        "%s/%s: giving up after %d attempt(s): %s",
                        provider.name,
                        request.model,
                        attempt,
                        detail,
                    )
                return Outcome(None, attempt, served, detail, None, queued)
            delay = policy.delay(error, attempt)
            log.info(
                "%s/%s: attempt %d failed (%s); retrying in %.2fs",
                provider.name,
                request.model,
                attempt,
                detail,
                delay,
            )
            await asyncio.sleep(delay)

    async def complete(
        self,
        provider: Provider,
        model: str,
        messages: Sequence[Message],
        *,
        kind: str,
        recorder: Sink | None,
        temperature: float | None = 0.0,
        max_tokens: int | None = None,
        params: Mapping[str, Any] | None = None,
        json_schema: Mapping[str, Any] | None = None,
        attempt: int = 0,
        structured_mode: str = "auto",
    ) -> Reply:
        """One call with the cache: a cached answer is returned without calling.

        ``attempt`` is part of the cache key and the default seed, so a deliberate re-ask
        gets a fresh answer. A successful answer is queued for the cache on ``recorder``.

        With ``json_schema``, ``structured_mode`` says how to ask for structured output:
        one of :data:`~qualspec.providers.STRUCTURED_MODES`, or ``"auto"``: the strongest
        mode the endpoint has not refused. When a server refuses a mode (an error that names
        ``response_format``), the call is asked again one mode lower, and the endpoint keeps
        the lower mode for the rest of the session (see :meth:`structured_modes`).

        Raises:
            CallStopped: The budget is spent or the store cannot record.
            AuthenticationError: The credentials were refused.
        """
        params = dict(params or {})
        schema = dict(json_schema) if json_schema is not None else None
        where = self.endpoint(provider)
        negotiate = schema is not None and structured_mode == "auto"
        while True:
            mode = self._modes.get(where, STRUCTURED_MODES[0]) if negotiate else structured_mode
            if mode == "auto":
                mode = STRUCTURED_MODES[0]
            reply = await self._complete_once(
                provider,
                model,
                messages,
                kind=kind,
                recorder=recorder,
                temperature=temperature,
                max_tokens=max_tokens,
                params=params,
                schema=schema,
                attempt=attempt,
                mode=mode,
            )
            if negotiate and reply.format_rejected and mode != STRUCTURED_MODES[-1]:
                self._step_down(provider, mode, reply.error)
                continue
            return reply

    def structured_modes(self) -> dict[str, str]:
        """The structured-output mode each provider settled on, where one was stepped down.

        Example: ``{"llama_server": "json_object"}`` after the server refused JSON Schema.
        """
        return {self._endpoint_names[w]: m for w, m in sorted(self._modes.items())}

    def structured_mode_for(self, provider: Provider) -> str:
        """The structured-output mode calls to ``provider``'s endpoint ask with now."""
        return self._modes.get(self.endpoint(provider), STRUCTURED_MODES[0])

    def format_refused(self, provider: Provider, refused: str, error: str | None) -> str:
        """Note that ``provider`` refused structured output as ``refused``; the mode to ask
        with next (the endpoint keeps it for the rest of the session)."""
        self._step_down(provider, refused, error)
        lower = STRUCTURED_MODES[
            min(STRUCTURED_MODES.index(refused) + 1, len(STRUCTURED_MODES) - 1)
        ]
        now = self.structured_mode_for(provider)
        return max(lower, now, key=STRUCTURED_MODES.index)

    def _step_down(self, provider: Provider, refused: str, error: str | None) -> None:
        where = self.endpoint(provider)
        lower = STRUCTURED_MODES[STRUCTURED_MODES.index(refused) + 1]
        current = self._modes.get(where, STRUCTURED_MODES[0])
        # calls in flight may all be refused at once: step down once per refused mode
        if STRUCTURED_MODES.index(lower) > STRUCTURED_MODES.index(current):
            self._modes[where] = lower
            self._endpoint_names[where] = provider.name
            log.warning(
                "%s refused structured output as %s (%s); using %s from now on",
                provider.name,
                refused,
                (error or "")[:200],
                lower,
            )

    async def _complete_once(
        self,
        provider: Provider,
        model: str,
        messages: Sequence[Message],
        *,
        kind: str,
        recorder: Sink | None,
        temperature: float | None,
        max_tokens: int | None,
        params: dict[str, Any],
        schema: dict[str, Any] | None,
        attempt: int,
        mode: str,
    ) -> Reply:
        effective = effective_temperature(provider, temperature)
        key_params = {**params, "temperature": temperature, "max_tokens": max_tokens}
        if schema is not None and mode != STRUCTURED_MODES[0]:
            key_params["structured_mode"] = mode  # another request, another answer
        key = self.cache_key(
            call_key(provider.name, model, tuple(messages), key_params, attempt, schema), provider
        )
        entry = await self.cache_get(kind, key)
        if entry is not None:
            saved = self.cost(provider.name, model, entry.input_tokens, entry.output_tokens)
            return Reply(
                text=entry.text,
                structured=entry.structured,
                finish_reason=entry.finish_reason,
                input_tokens=entry.input_tokens,
                output_tokens=entry.output_tokens,
                cost_usd=0.0,
                cached=True,
                key=key,
                saved_usd=saved or 0.0,
                effective_temperature=entry.effective_temperature,
            )
        request = ChatRequest(
            model=model,
            messages=tuple(messages),
            temperature=effective,
            max_tokens=max_tokens,
            params=params,
            json_schema=schema,
            structured_mode=mode,
            seed=attempt,
        )
        # The slot is held until the answer is durable in the cache: a paid answer is never
        # lost to a kill or a failing store beyond the concurrency (see ``call``).
        gate = self.gate(provider)
        out = await self.call(provider, request, gate=gate, empty_ok=kind in _EVALUATOR_KINDS)
        resp = out.response
        if resp is None:
            return Reply(
                text=None,
                error=out.error,
                latency_s=out.latency,
                queue_s=out.queue,
                attempts=out.attempts,
                key=key,
                effective_temperature=effective,
                structured_mode=mode if schema is not None else None,
                format_rejected=out.format_rejected,
            )
        entry = self.cache_entry(kind, key, provider, model, resp, effective)
        if recorder is None or not self.cache_put(recorder, entry, on_commit=gate.release):
            gate.release()
        return Reply(
            text=resp.text,
            structured=resp.structured,
            finish_reason=resp.finish_reason,
            input_tokens=resp.input_tokens,
            output_tokens=resp.output_tokens,
            cost_usd=out.cost,
            latency_s=out.latency,
            queue_s=out.queue,
            attempts=out.attempts,
            key=key,
            effective_temperature=effective,
            structured_mode=mode if schema is not None else None,
        )

    # ------------------------------------------------------------ cache

    def cache_key(self, call: str, provider: Provider) -> str:
        """The cache key of a call: its call key plus the endpoint it goes to."""
        text = f"{call}@{self.endpoint(provider)}"
        return hashlib.sha256(text.encode()).hexdigest()[:32]

    def _reads_enabled(self, kind: str | None = None) -> bool:
        if kind is not None and kind in self.options.refresh_kinds:
            return False
        return self.options.use_cache and not self.options.refresh

    def now(self) -> datetime:
        """The cache's "now" (``ExecuteOptions.clock``, else the system clock)."""
        clock = self.options.clock
        return clock() if clock is not None else datetime.now(UTC)

    def cache_get_many(self, keys: set[str]) -> dict[str, CacheEntry]:
        """Bulk read of cache entries (one query)."""
        if not self._reads_enabled() or not keys:
            return {}
        # the lifetime asked for now judges each entry by its age (not the one it was
        # written with)
        return self.store.cache_get_many(keys, self.now(), self.options.cache_ttl)

    async def cache_get(self, kind: str, key: str) -> CacheEntry | None:
        """A cache entry, from this session's memory or the store.

        The store is asked only when it held entries of ``kind`` when the session first
        looked: a fresh store costs no query per call. Store reads run in a worker thread,
        never on the event loop (on PostgreSQL each is a network round trip).
        """
        if not self._reads_enabled(kind):
            return None
        entry = self._memory.get(key)
        if entry is not None:
            return entry
        if self._kinds_in_store is None:
            if self._kinds_lock is None:
                self._kinds_lock = asyncio.Lock()
            async with self._kinds_lock:  # one query, however many calls ask at once
                if self._kinds_in_store is None:
                    self._kinds_in_store = await asyncio.to_thread(self.store.cache_kinds)
        if kind not in self._kinds_in_store:
            return None
        found = (
            await asyncio.to_thread(
                self.store.cache_get_many, [key], self.now(), self.options.cache_ttl
            )
        ).get(key)
        if found is not None:
            log.debug("cache hit (%s)", kind)
        return found

    def cache_put(
        self,
        recorder: Sink,
        entry: CacheEntry,
        on_commit: Callable[[], object] | None = None,
    ) -> bool:
        """Queue a cache entry for the store and remember it for this session.

        ``on_commit`` runs once the entry is durable. False (and nothing queued) when the
        cache is off.
        """
        if not self.options.use_cache and not self.options.refresh:
            return False
        if entry.kind != "candidate":  # candidate answers are read in bulk, never one by one
            self._memory[entry.key] = entry
        recorder.cache(entry, on_commit=on_commit)
        return True

    def cache_entry(
        self,
        kind: str,
        key: str,
        provider: Provider,
        model: str,
        response: ChatResponse,
        effective: float | None,
    ) -> CacheEntry:
        """The cache entry for a successful answer, with the kind's TTL."""
        now = self.now()
        ttl = self.options.cache_ttl.get(kind)
        return CacheEntry(
            key=key,
            kind=kind,
            provider=provider.name,
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

    # ------------------------------------------------------------ cost

    def cost(
        self, provider: str, model: str, input_tokens: int | None, output_tokens: int | None
    ) -> float | None:
        """The price of a call, or None when unknown."""
        if self.prices is None:
            return None
        return self.prices.cost(provider, model, input_tokens, output_tokens)

    def _charge(self, cost: float | None) -> None:
        if not cost:
            return
        spend = self._spend
        spend.total += cost
        if spend.limit is not None and spend.total >= spend.limit and not spend.exceeded:
            spend.exceeded = True
            self.stop(f"the budget of ${spend.limit:.2f} is spent (${spend.total:.4f})")


# The kinds of calls whose empty answer is data for their evaluator, not a failed call: a
# judge's empty verdict is kept as unscored with its raw text (issue 17).
_EVALUATOR_KINDS = frozenset({"judge", "calibration"})


def _has_answer(response: ChatResponse) -> bool:
    """False for an empty answer: no text (``""`` or null) and no structured output."""
    text = response.text
    return (isinstance(text, str) and bool(text.strip())) or response.structured is not None


def _rejects_format(error: ProviderError, request: ChatRequest) -> bool:
    """Whether a server refused the structured-output mode itself (not the call).

    llama.cpp's server answers 500 "response_format.type: Input should be 'text' or
    'json_object'"; OpenAI 400 "'response_format' of type 'json_schema' is not supported".
    """
    if request.structured_mode == "none" or error.status not in (400, 422, 500):
        return False
    text = str(error).lower()
    return "response_format" in text or "json_schema" in text
