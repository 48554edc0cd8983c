"""What a call made through the engine gives back: a :class:`Reply` (the answer and its
:class:`~qualspec.store.Usage`), built from the call layer's :class:`Outcome` or from a
cache entry."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from qualspec.providers import ChatResponse, TokenLogprob
from qualspec.store import CacheEntry, ResponseRecord, Usage

if TYPE_CHECKING:
    from qualspec.engine._items import WorkItem

__all__ = ["NO_CALL", "Outcome", "Reply", "Usage", "answered_record", "cached_structured"]

_WITH_LOGPROBS = "__qualspec_logprobs__"
"""The cache keeps an answer's token log-probabilities beside its structured output, in
the same JSON column: ``{_WITH_LOGPROBS: [[token, logprob, [[alt, logprob], ...]], ...],
"structured": ...}`` (only for calls that asked for them, whose keys say so)."""


def cached_structured(response: ChatResponse) -> Any:
    """What the cache stores as ``structured`` for ``response`` (with its logprobs)."""
    if response.logprobs is None:
        return response.structured
    tokens = [[t.token, t.logprob, [list(alt) for alt in t.top]] for t in response.logprobs]
    return {_WITH_LOGPROBS: tokens, "structured": response.structured}


def _from_cached(value: Any) -> tuple[Any, tuple[TokenLogprob, ...] | None]:
    """The structured output and logprobs a cache entry's ``structured`` holds."""
    if not isinstance(value, dict) or set(value) != {_WITH_LOGPROBS, "structured"}:
        return value, None
    tokens = tuple(
        TokenLogprob(str(token), float(logprob), tuple((str(a), float(p)) for a, p in top))
        for token, logprob, top in value[_WITH_LOGPROBS]
    )
    return value["structured"], tokens


NO_CALL = Usage(attempts=0, latency_s=0.0, queue_s=0.0)
"""The usage of a reply no call was made for (the default of :class:`Reply`)."""


@dataclass(slots=True)
class Reply:
    """The result of one call made through the engine (see ``Session.complete``).

    ``text`` is None when the call failed (``error`` says why). ``key`` is the cache key.
    ``usage`` holds the call's accounting; its fields read as the reply's own too
    (``reply.cost_usd``: None when the price is unknown, 0 for a cached reply).
    """

    text: str | None
    structured: Any = None
    finish_reason: str | None = None
    usage: Usage = NO_CALL
    key: str = ""
    saved_usd: float = 0.0
    effective_temperature: float | None = None
    structured_mode: str | None = None
    """How structured output was asked for (None: it was not)."""
    format_rejected: bool = False
    served_by: str | None = None
    """Where it was served: the replica's base URL (a provider with ``base_urls``) or the
    Ray node (``ray:<node id>``, the Ray executor); None for one server, or a cached answer."""
    logprobs: tuple[TokenLogprob, ...] | None = None
    """The answer's tokens with their log-probabilities, when the call asked for them
    (``params`` ``logprobs``/``top_logprobs``) and the server sent them."""

    @property
    def ok(self) -> bool:
        """True when the call produced an answer."""
        return self.usage.error is None and self.text is not None

    @property
    def error(self) -> str | None:
        """Why the call failed (None: it answered)."""
        return self.usage.error

    @property
    def input_tokens(self) -> int | None:
        """Prompt tokens (None: not reported)."""
        return self.usage.input_tokens

    @property
    def output_tokens(self) -> int | None:
        """Answer tokens (None: not reported)."""
        return self.usage.output_tokens

    @property
    def cost_usd(self) -> float | None:
        """What the call cost (None: the price is unknown; 0 when cached)."""
        return self.usage.cost_usd

    @property
    def latency_s(self) -> float:
        """Seconds the provider took, over every attempt."""
        return self.usage.latency_s or 0.0

    @property
    def queue_s(self) -> float:
        """Seconds spent waiting for a concurrency slot."""
        return self.usage.queue_s or 0.0

    @property
    def attempts(self) -> int:
        """Attempts made (0: answered from the cache, or not called)."""
        return self.usage.attempts

    @property
    def cached(self) -> bool:
        """Whether the answer came from the cache."""
        return self.usage.cached

    @classmethod
    def from_cache(
        cls,
        entry: CacheEntry,
        *,
        key: str = "",
        saved_usd: float = 0.0,
        queue_s: float | None = 0.0,
    ) -> Reply:
        """A cached answer: nothing paid, no attempt, its tokens those it reuses."""
        usage = Usage(
            input_tokens=entry.input_tokens,
            output_tokens=entry.output_tokens,
            latency_s=0.0,
            queue_s=queue_s,
            cost_usd=0.0,
            attempts=0,
            cached=True,
        )
        structured, logprobs = _from_cached(entry.structured)
        return cls(
            text=entry.text,
            structured=structured,
            logprobs=logprobs,
            finish_reason=entry.finish_reason,
            usage=usage,
            key=key,
            saved_usd=saved_usd,
            effective_temperature=entry.effective_temperature,
        )


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
    served_by: str | None = None
    """The replica (a provider with ``base_urls``) or Ray node that answered."""

    def reply(
        self,
        *,
        key: str,
        effective_temperature: float | None,
        structured_mode: str | None = None,
    ) -> Reply:
        """The reply of this call (``key``: its cache key)."""
        resp = self.response
        usage = Usage(
            input_tokens=None if resp is None else resp.input_tokens,
            output_tokens=None if resp is None else resp.output_tokens,
            latency_s=self.latency,
            queue_s=self.queue,
            cost_usd=self.cost,
            attempts=self.attempts,
            error=self.error,
        )
        return Reply(
            text=None if resp is None else resp.text,
            structured=None if resp is None else resp.structured,
            finish_reason=None if resp is None else resp.finish_reason,
            usage=usage,
            key=key,
            effective_temperature=effective_temperature,
            structured_mode=structured_mode,
            format_rejected=self.format_rejected,
            served_by=self.served_by,
            logprobs=None if resp is None else resp.logprobs,
        )


class Spend:
    """The session's spending against its budget."""

    def __init__(self, limit: float | None) -> None:
        self.limit = limit
        self.total = 0.0
        self.exceeded = False


class CallClock:
    """The seconds one logical call waited for a slot and was served, over its attempts."""

    __slots__ = ("queued", "served", "served_by")

    def __init__(self) -> None:
        self.queued = 0.0
        self.served = 0.0
        self.served_by: str | None = None  # the replica (or Ray node) that answered


def answered_record(
    out: Outcome,
    item: WorkItem,
    key: str,
    effective_temperature: float | None,
    prompt_versions: dict[str, int],
) -> ResponseRecord:
    """The record of a call made for ``item``: what ``ResponseRecord.from_reply`` makes of
    ``out.reply(key=key, ...)`` under the item's identity (created now), made straight
    from ``out``: the answered call's path skips the Reply and Usage between them."""
    return ResponseRecord.from_call(
        out.response,
        out,
        effective_temperature=effective_temperature,
        served_by=out.served_by,
        identity=item,
        call_key=key,
        prompt_versions=prompt_versions,
        created_at=datetime.now(UTC),
    )
