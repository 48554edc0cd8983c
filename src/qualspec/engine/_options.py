"""A run's settings (:class:`ExecuteOptions`), one call's settings (:class:`CallOptions`),
what its executor did (:class:`ExecuteStats`) and how it reports progress: read by the call
layer, the executor and the session alike, so they live apart from all three."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from qualspec.engine._retry import RetryPolicy

__all__ = ["CallOptions", "ExecuteOptions", "ExecuteStats", "ProgressFn"]

ProgressFn = Callable[[str, int], None]
"""Called as ``progress(kind, n)`` when ``n`` units of ``kind`` finish ("candidate"/"judge");
``progress("total:judge", n)`` once a run knows how many evaluations it will record."""


@dataclass(frozen=True, slots=True, kw_only=True)
class CallOptions:
    """The settings of one model call, besides its model, messages and kind: what every
    layer (an evaluator's context, ``Session.complete``, the call layer) passes down as one
    value.

    Example: ``CallOptions(temperature=0.7, max_tokens=200, attempt=1)``.

    ``temperature`` None sends none (the provider's default). ``params`` are extra request
    parameters (``seed``, ``top_p``, ...). ``attempt`` distinguishes deliberate re-asks: it
    is part of the cache key and the default seed. With ``json_schema``,
    ``structured_mode`` says how structured output is asked for: ``auto`` (negotiated per
    endpoint) or one of :data:`~qualspec.providers.STRUCTURED_MODES`.
    """

    temperature: float | None = 0.0
    max_tokens: int | None = None
    params: Mapping[str, Any] | None = None
    json_schema: Mapping[str, Any] | None = None
    attempt: int = 0
    structured_mode: str = "auto"


DEFAULT_CALL = CallOptions()
"""The settings of a call given none (temperature 0, first attempt)."""


@dataclass(frozen=True, kw_only=True)
class ExecuteOptions:
    """How calls are made.

    Example: ``ExecuteOptions(max_concurrency=8, timeout=60, max_cost=2.5)``.

    ``max_cost`` is the budget of a whole session (every run and call in it).
    ``store_retry_s`` is how long a failing database is retried (with reconnection)
    before the run stops new calls and ends ``failed`` (resumable).
    Values ``qualspec run`` refuses as flags (a concurrency below 1, a timeout, budget or
    store retry that is not above 0, an unknown cache kind or a negative TTL) raise
    ``ConfigError`` here too.
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
    store_retry_s: float = 30.0
    refresh_kinds: tuple[str, ...] = ()
    """Kinds of answers called again (their cache entries overwritten) while the others are
    still read from the cache: ``("reference",)`` is ``--refresh-reference``."""
    clock: Callable[[], datetime] | None = None
    """What the cache takes as "now" (TTL expiry); None: the system clock. Tests pass a
    controllable one instead of sleeping."""
    calibrate: bool = True
    """Before a judged run, measure (once, then cached) each criteria judge's separation on
    known good/bad pairs, record it in the run and warn when it is not meaningful."""
    max_in_flight: int | None = None
    """Work items of a run in flight at most (being answered or evaluated): the plan is
    read as they finish, so memory stays flat at any size. None: 1024, or 4 per call slot
    (``max_concurrency``, else the widest provider's) when that is more."""
    summarise_above: int = 5_000
    """A run of more work items than this ends with its summary only in
    ``RunOutcome.record`` (``summarised``): nothing is loaded whole; ``qualspec run``
    then streams the results file from the store and prints counts."""
    replay_only: bool = False
    """Answer every call from the cache and call no model: a call the cache does not hold
    fails with an error that starts ``not recorded`` (offline replay)."""

    executor: str = "local"
    """Where model calls run: ``local`` (this process) or ``ray``: embedded models (and HTTP
    providers with a ``ray:`` option) as Ray actors spread over a cluster's nodes, while
    this process stays the one writer to the store (needs the ``ray`` extra)."""
    ray_address: str | None = None
    """The Ray cluster to join (``auto``, ``ray://host:10001``, ``host:6379``); None: the
    one ``RAY_ADDRESS`` names, else a Ray instance started on this machine for the run."""
    ray_actors: int | None = None
    """Actors per provider, overriding each provider's ``ray.actors`` (default: one per node)."""
    ray_num_cpus: float | None = None
    """CPUs each actor reserves, overriding each provider's ``ray.num_cpus`` (default 1)."""

    def __post_init__(self) -> None:
        from qualspec.engine._checks import check_options

        check_options(self)  # what ``qualspec run`` refuses as flags: ConfigError


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
    evaluations: int = 0
    # answers of work items of other kinds than candidate (reference answers, ...)
    reference_calls: int = 0
    cached_reference: int = 0
    reference_cost_usd: float = 0.0
