"""The call layer every model call goes through: limits, retries, timeouts, cache, cost, budget.

One :class:`CallEngine` per :class:`~qualspec.Session`. Limits are keyed by *endpoint* (a
provider's base URL, or the model file for local models), so two provider names pointing
at the same server share one limit; cache keys include the endpoint, so one name pointing
at two servers never shares cache entries.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from qualspec.engine._call_cache import CallCache, endpoint
from qualspec.engine._deadlines import Deadlines
from qualspec.engine._items import call_key
from qualspec.engine._options import DEFAULT_CALL, CallOptions
from qualspec.engine._replicas import ReplicaRouter
from qualspec.engine._reply import CallClock, Outcome, Reply, Spend
from qualspec.engine._scrub import Scrubber
from qualspec.engine._structured import StructuredModes, format_refusal
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

if TYPE_CHECKING:
    from qualspec.engine._options import ExecuteOptions
    from qualspec.engine._ray import RayActors
    from qualspec.engine._sink import Sink
    from qualspec.providers import PriceTable, ProviderPool
    from qualspec.spec import ProviderConfig
    from qualspec.store import Store

# Outcome, Reply (``_reply``) and Scrubber (``_scrub``) lived here: still importable from here
__all__ = ["CallEngine", "CallStopped", "Outcome", "Reply", "Scrubber"]

log = logging.getLogger("qualspec.engine")


class CallStopped(Exception):
    """No new call may start: the budget is spent or the store cannot record."""


_Route = tuple["Provider", asyncio.Semaphore, ReplicaRouter | None, float]
"""A provider, its limit, its router (None: one server) and its timeout."""


class CallEngine(CallCache, StructuredModes):
    """Providers, per-endpoint limits, retries, timeouts, cache and cost for one session.

    Its cache methods (``cache_key``, ``cache_get``, ``cache_put``, ...) are
    :class:`~qualspec.engine._call_cache.CallCache`'s; what it knows of the endpoints'
    structured output (``structured_modes``, ...) is
    :class:`~qualspec.engine._structured.StructuredModes`'.
    """

    def __init__(
        self,
        *,
        store: Store,
        options: ExecuteOptions,
        prices: PriceTable | None,
    ) -> None:
        CallCache.__init__(self)
        StructuredModes.__init__(self)
        self.store = store
        self.options = options
        self.prices = prices
        self._pools: dict[tuple[Any, ...], ProviderPool] = {}
        self._limits: dict[str, asyncio.Semaphore] = {}
        self._gates: dict[str, asyncio.Semaphore] = {}
        self._routers: dict[str, ReplicaRouter] = {}
        self._timeouts: dict[str, float] = {}
        # per provider object: (it, its limit, its router, its timeout), found once
        self._routes: dict[int, _Route] = {}
        self._deadlines = Deadlines()  # the calls' timeouts, on one timer
        self._spend = Spend(options.max_cost)
        self._stop_reason: str | None = None
        self._auth_failure: AuthenticationError | None = None
        # set once a provider has answered a call (or refused it): see ``heard``
        self.heard = asyncio.Event()
        self.scrub = Scrubber()
        self._ray: RayActors | None = None  # executor="ray": the session's actors
        self.failure: str | None = None  # why the run cannot go on (see ``fail``)

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
        if self.options.executor == "ray":  # embedded models (and asked-for ones) in actors
            if self._ray is None:
                from qualspec.engine._ray import RayActors

                self._ray = RayActors(self.options, on_lost=self.fail)
            out = {name: self._ray.wrap(name, p, configs.get(name)) for name, p in out.items()}
        for name, provider in out.items():
            self.learn_secrets(provider)
            config = configs.get(name)
            if config is not None and config.timeout:
                self._timeouts[self.endpoint(provider)] = config.timeout
                self._routes.clear()  # a route holds its endpoint's timeout
        return out

    async def aclose(self) -> None:
        """Close every provider the session created."""
        pools = list(self._pools.values())
        self._pools.clear()
        for pool in pools:
            await pool.aclose()
        if self._ray is not None:  # its actors killed, its connection closed
            ray, self._ray = self._ray, None
            await ray.aclose()

    def learn_secrets(self, provider: Provider) -> None:
        """Remember a provider's secrets (its optional ``secret_values``) to scrub them."""
        values = getattr(provider, "secret_values", None)
        if values:
            self.scrub.add(values)

    endpoint = staticmethod(endpoint)

    def _limits_for(self, provider: Provider) -> tuple[asyncio.Semaphore, asyncio.Semaphore]:
        where = self.endpoint(provider)
        limit = self._limits.get(where)
        if limit is None:
            n = max(1, self.options.max_concurrency or provider.default_concurrency)
            n *= len(getattr(provider, "replicas", None) or (provider,))  # a limit per replica
            limit = self._limits[where] = asyncio.Semaphore(n)
            self._gates[where] = asyncio.Semaphore(n)
        return limit, self._gates[where]

    def gate(self, provider: Provider) -> asyncio.Semaphore:
        """The semaphore a candidate call holds until its answer is committed."""
        return self._limits_for(provider)[1]

    def _route(self, provider: Provider) -> _Route:
        """A provider's limit, router and timeout (found once per provider object)."""
        route = self._routes.get(id(provider))
        if route is None or route[0] is not provider:
            self.learn_secrets(provider)
            timeout = self._timeouts.get(self.endpoint(provider), self.options.timeout)
            limit = self._limits_for(provider)[0]
            route = self._routes[id(provider)] = (provider, limit, self._router(provider), timeout)
        return route

    def _router(self, provider: Provider) -> ReplicaRouter | None:
        """The router of a provider with ``replicas`` (None for one server)."""
        if not getattr(provider, "replicas", None):
            return None
        where = self.endpoint(provider)
        router = self._routers.get(where)
        if router is None:  # each replica's limit is keyed by its own base URL
            limit_of = lambda replica: self._limits_for(replica)[0]  # noqa: E731
            router = self._routers[where] = ReplicaRouter(provider, limit_of)
        return router

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

    def fail(self, reason: str) -> None:
        """Refuse every new call and end the run ``failed`` (``failure``): it cannot go on
        (a Ray cluster with no actor left); what is recorded is kept, resumable."""
        if self.failure is None:
            self.failure = reason
        self.stop(reason)

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
        self._route(provider)  # its secrets learnt (see learn_secrets) once
        policy = self.options.retry
        clock = CallClock()
        attempt = 0
        while True:
            attempt += 1
            try:
                response = await self._attempt(provider, request, gate, empty_ok, clock)
            except AuthenticationError:
                raise
            except ProviderError as error:
                detail = f"HTTP {error.status}: {error}" if error.status else str(error)
                detail = self.scrub.text(detail)
                failed = Outcome(None, attempt, clock.served, detail, None, clock.queued)
                if format_refusal(error, request):
                    # not retried: ``complete`` asks again in a mode the server takes
                    failed.format_rejected = True
                    return failed
                if not policy.should_retry(error, attempt):
                    if attempt > 1 or error.retryable:
                        log.warning(
                            "%s/%s: giving up after %d attempt(s): %s",
                            provider.name,
                            request.model,
                            attempt,
                            detail,
                        )
                    return failed
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
            else:
                cost = self.cost(
                    provider.name, request.model, response.input_tokens, response.output_tokens
                )
                self._charge(cost)
                outcome = Outcome(response, attempt, clock.served, None, cost, clock.queued)
                outcome.served_by = clock.served_by
                return outcome

    async def _attempt(
        self,
        provider: Provider,
        request: ChatRequest,
        gate: asyncio.Semaphore | None,
        empty_ok: bool,
        clock: CallClock,
    ) -> ChatResponse:
        """One attempt under the endpoint's limit (and ``gate``, released on failure), its
        waiting and service time added to ``clock``; a timeout raised as
        ``ProviderTimeoutError``, a refused key stops the engine (see :meth:`call`)."""
        self._refuse_if_stopped()
        _, limit, router, timeout = self._route(provider)
        waited = time.perf_counter()
        if gate is not None:
            await gate.acquire()
        try:
            async with limit:
                began = time.perf_counter()
                clock.queued += began - waited
                self._refuse_if_stopped()  # it may have stopped while waiting
                try:
                    label = None
                    if router is None:
                        async with self._deadlines.after(timeout):
                            response = await provider.complete(request)
                    else:  # to a replica; one that fails passes the call on (no retry)
                        response, label = await router.serve(
                            request, timeout, lambda e: not format_refusal(e, request)
                        )
                    clock.served_by = response.served_by or label  # a Ray actor's node
                finally:
                    clock.served += time.perf_counter() - began
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
                raise ProviderTimeoutError(
                    f"no answer within {timeout:g}s (raise --timeout)",
                    provider=provider.name,
                    model=request.model,
                ) from None
            raise
        return response

    async def complete(
        self,
        provider: Provider,
        model: str,
        messages: Sequence[Message],
        *,
        kind: str,
        recorder: Sink | None,
        options: CallOptions = DEFAULT_CALL,
    ) -> Reply:
        """One call with the cache: a cached answer is returned without calling.

        ``options.attempt`` is part of the cache key and the default seed, so a deliberate
        re-ask gets a fresh answer. A successful answer is queued for the cache on
        ``recorder``.

        With ``options.json_schema``, ``options.structured_mode`` says how to ask for
        structured output: one of :data:`~qualspec.providers.STRUCTURED_MODES`, or
        ``"auto"``: the strongest mode the endpoint has not refused. When a server refuses
        a mode (an error that names ``response_format``), the call is asked again one mode
        lower, and the endpoint keeps the lower mode for the rest of the session (see
        :meth:`structured_modes`).

        Raises:
            CallStopped: The budget is spent or the store cannot record.
            AuthenticationError: The credentials were refused.
        """
        where = self.endpoint(provider)
        negotiate = options.json_schema is not None and options.structured_mode == "auto"
        while True:
            if negotiate:
                mode = self._modes.get(where, STRUCTURED_MODES[0])
            else:
                mode = options.structured_mode
            if mode == "auto":
                mode = STRUCTURED_MODES[0]
            reply = await self._complete_once(
                provider, model, messages, kind=kind, recorder=recorder, options=options, mode=mode
            )
            if negotiate and reply.format_rejected and mode != STRUCTURED_MODES[-1]:
                self._step_down(provider, mode, reply.error)
                continue
            return reply

    async def _complete_once(
        self,
        provider: Provider,
        model: str,
        messages: Sequence[Message],
        *,
        kind: str,
        recorder: Sink | None,
        options: CallOptions,
        mode: str,
    ) -> Reply:
        params = dict(options.params or {})
        schema = None if options.json_schema is None else dict(options.json_schema)
        key_params = {
            **params,
            "temperature": options.temperature,
            "max_tokens": options.max_tokens,
        }
        if schema is not None and mode != STRUCTURED_MODES[0]:
            key_params["structured_mode"] = mode  # another request, another answer
        call = call_key(provider.name, model, tuple(messages), key_params, options.attempt, schema)
        key = self.cache_key(call, provider)
        entry = await self.cache_get(kind, key)
        if entry is not None:
            saved = self.cost(provider.name, model, entry.input_tokens, entry.output_tokens)
            return Reply.from_cache(entry, key=key, saved_usd=saved or 0.0)
        effective = effective_temperature(provider, options.temperature)
        request = ChatRequest(
            model=model,
            messages=tuple(messages),
            temperature=effective,
            max_tokens=options.max_tokens,
            params=params,
            json_schema=schema,
            structured_mode=mode,
            seed=options.attempt,
        )
        # The slot is held until the answer is durable in the cache: a paid answer is never
        # lost to a kill or a failing store beyond the concurrency (see ``call``).
        gate = self.gate(provider)
        out = await self.call(provider, request, gate=gate, empty_ok=kind in _EVALUATOR_KINDS)
        if out.response is not None:
            entry = self.cache_entry(kind, key, provider, model, out.response, effective)
            if recorder is None or not self.cache_put(recorder, entry, on_commit=gate.release):
                gate.release()
        return out.reply(
            key=key,
            effective_temperature=effective,
            structured_mode=mode if schema is not None else None,
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
