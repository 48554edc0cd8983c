"""Replicas: one provider served by several servers of the same model (``base_urls``).

A :class:`ReplicaSet` holds one provider per replica (each with its own base URL). The
engine routes each call to a replica (the one with the fewest calls in flight), keeps a
concurrency limit per replica and takes a failing replica out for ``cooldown`` seconds
(see ``qualspec.engine``); the providers' rule holds here too: a replica set classifies,
it does not retry or wait.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from qualspec.errors import (
    AuthenticationError,
    BadResponseError,
    ConfigError,
    ProviderError,
    ProviderTimeoutError,
)

if TYPE_CHECKING:
    from qualspec.providers._base import ChatRequest, ChatResponse, Provider

__all__ = ["DEFAULT_COOLDOWN", "ReplicaSet", "moves_to_another_replica", "replica_label"]

DEFAULT_COOLDOWN = 30.0
"""Seconds a failed replica is left out, unless its provider sets ``replica_cooldown``."""


def replica_label(provider: Provider) -> str:
    """What a response served by ``provider`` records as ``served_by``: its base URL
    (without credentials), else its name."""
    value = getattr(provider, "endpoint", None)
    return str(value) if value else provider.name


def moves_to_another_replica(error: ProviderError) -> bool:
    """Whether ``error`` says the replica itself failed (so the call moves to another one):
    it could not be reached (connection refused or reset: no HTTP status), it answered 5xx,
    or it ran past the timeout. A 4xx, a rate limit, a refused key or an unreadable 2xx
    answer are the call's own business: they go through the retry policy unchanged.
    """
    if isinstance(error, ProviderTimeoutError):
        return True
    if isinstance(error, AuthenticationError | BadResponseError):
        return False
    if error.status is None:
        return error.retryable
    return error.status >= 500


class ReplicaSet:
    """A provider whose calls go to one of several replicas of the same model.

    The replicas share the provider's name, settings and model; cache entries are keyed by
    the first replica's endpoint (``cache_endpoint``), not by the replica that answered, so
    adding replicas keeps what is cached. Called directly (outside a ``Session``), a call
    goes to the first replica that answers; in a session the engine routes it.

    Example::

        replicas = [OpenAIProvider("llama", base_url=u, api_key=None) for u in urls]
        provider = ReplicaSet("llama", replicas, cooldown=30)
    """

    def __init__(
        self, name: str, replicas: Sequence[Provider], *, cooldown: float = DEFAULT_COOLDOWN
    ) -> None:
        if not replicas:
            raise ConfigError(f"Provider '{name}': base_urls lists no replica")
        self.name = name
        self.replicas: tuple[Provider, ...] = tuple(replicas)
        """One provider per replica, in the order listed."""
        first = self.replicas[0]
        self.temperature_range = first.temperature_range
        self.default_concurrency = first.default_concurrency
        """Calls at once to each replica (the engine's limit is this per replica)."""
        self.replica_cooldown = cooldown
        labels = [replica_label(r) for r in self.replicas]
        # where calls go (the engine's key for the set's timeout and structured-output mode)
        self.endpoint = "replicas:" + " ".join(labels)
        self.cache_endpoint = labels[0]
        """What cache keys name: the first replica, as if it were the only server."""
        secrets: list[str] = []
        for replica in self.replicas:
            secrets.extend(getattr(replica, "secret_values", None) or ())
        self.secret_values: tuple[str, ...] = tuple(dict.fromkeys(secrets))
        default = getattr(first, "default_temperature", None)
        if default is not None:
            self.default_temperature = default

    def __repr__(self) -> str:
        return f"ReplicaSet(name={self.name!r}, replicas={len(self.replicas)})"

    async def complete(self, request: ChatRequest) -> ChatResponse:
        """Ask each replica in turn until one answers (a replica failure moves the call on)."""
        error: ProviderError | None = None
        for replica in self.replicas:
            try:
                return await replica.complete(request)
            except ProviderError as exc:
                if not moves_to_another_replica(exc):
                    raise
                error = exc
        if error is None:  # pragma: no cover - a set has at least one replica
            raise ConfigError(f"Provider '{self.name}': base_urls lists no replica")
        raise error

    async def aclose(self) -> None:
        """Close every replica's connections."""
        for replica in self.replicas:
            await replica.aclose()
