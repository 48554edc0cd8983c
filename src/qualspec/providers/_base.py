"""The provider protocol: one chat call in, one response out. Providers only classify errors."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

__all__ = [
    "STRUCTURED_MODES",
    "ChatRequest",
    "ChatResponse",
    "Message",
    "Provider",
    "TokenLogprob",
    "clamp_temperature",
    "effective_temperature",
]

STRUCTURED_MODES = ("json_schema", "json_object", "none")
"""How structured output is asked for, strongest first: a JSON Schema the server enforces,
JSON mode (with the schema where the server takes one), or plain instructions only."""


@dataclass(frozen=True, slots=True)
class Message:
    """One chat message."""

    role: str  # "system" | "user" | "assistant"
    content: str


@dataclass(slots=True)
class ChatRequest:
    """What a provider is asked to do.

    ``temperature`` is the *effective* temperature (already clamped by the engine with
    :func:`clamp_temperature`); ``None`` means the provider's default.
    ``json_schema``: when set, ask for structured output following this JSON Schema
    (llama.cpp grammar, OpenAI ``response_format``, Anthropic tool use).
    """

    model: str
    messages: tuple[Message, ...]
    temperature: float | None = None
    max_tokens: int | None = None
    params: dict[str, Any] = field(default_factory=dict)
    json_schema: dict[str, Any] | None = None
    structured_mode: str = "json_schema"
    """With ``json_schema``: how to ask for it, one of :data:`STRUCTURED_MODES`. Providers
    that have a single mechanism (Anthropic tool use, llama.cpp grammars) use it for both
    ``json_schema`` and ``json_object``; ``none`` sends no format constraint."""
    seed: int | None = None
    """A default sampling seed (the run index) for providers that honour one (local);
    an explicit ``params["seed"]`` wins. HTTP providers ignore it."""


@dataclass(frozen=True, slots=True)
class TokenLogprob:
    """One answer token with its log-probability and the most likely alternatives there.

    ``top`` holds ``(token, logprob)`` pairs, most likely first, as the server sent them
    (the token itself may be among them).

    Example: ``TokenLogprob("7", -0.1, (("7", -0.1), ("8", -2.4)))``.
    """

    token: str
    logprob: float
    top: tuple[tuple[str, float], ...] = ()


@dataclass(slots=True)
class ChatResponse:
    """A provider's answer. ``structured`` holds parsed JSON when json_schema was used.

    ``logprobs``: the answer's tokens with their log-probabilities, when the request asked
    for them (``params`` ``logprobs: true``, ``top_logprobs: N``) and the server sent them;
    None otherwise (a server that ignores the request, Anthropic).
    """

    text: str
    finish_reason: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    structured: Any = None
    logprobs: tuple[TokenLogprob, ...] | None = None
    served_by: str | None = None
    """Where the call was served, when the provider knows it better than its endpoint (a
    Ray actor's node, ``ray:<node id>``): recorded as the response's ``served_by``."""


@runtime_checkable
class Provider(Protocol):
    """A model backend. Implementations raise :class:`qualspec.errors.ProviderError`
    subclasses (classified as retryable or not, with ``retry_after``) and never retry
    themselves: the engine owns retries, timeouts and concurrency.
    """

    name: str
    temperature_range: tuple[float, float]
    default_concurrency: int
    # Optional: ``endpoint`` (a base URL) says where calls go. Providers with one endpoint
    # share one concurrency limit, and cache entries never cross endpoints. Without it the
    # provider's name stands in.
    # Optional: ``replicas`` (a tuple of providers, one per server of the same model) and
    # ``replica_cooldown`` (seconds): the engine routes each call to one replica (see
    # ``ReplicaSet``); ``cache_endpoint``: what cache keys name instead of ``endpoint``.
    # Optional: ``embedded`` (True): the model runs in the calling process (the local
    # GGUF provider); the Ray executor runs such providers in actors.
    # Optional: ``default_temperature``, the temperature a request without one is run at,
    # when the provider knows it (the local provider: llama-cpp-python's 0.2); without it
    # (remote APIs) it is the server's own default, unknown.

    async def complete(self, request: ChatRequest) -> ChatResponse:
        """Make one call."""
        ...

    async def aclose(self) -> None:
        """Release connections, threads and models."""
        ...


def clamp_temperature(value: float, bounds: tuple[float, float]) -> float:
    """Clamp a requested temperature into a provider's supported range."""
    low, high = bounds
    return min(max(value, low), high)


def effective_temperature(provider: Provider, requested: float | None) -> float | None:
    """The temperature a call to ``provider`` runs at: ``requested`` clamped to its range.

    ``None`` (no temperature sent) gives the provider's ``default_temperature`` when it
    has one, else None (the server's own default, unknown).
    """
    if requested is None:
        default = getattr(provider, "default_temperature", None)
        return float(default) if isinstance(default, int | float) else None
    return clamp_temperature(requested, provider.temperature_range)
