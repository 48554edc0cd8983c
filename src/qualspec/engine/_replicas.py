"""Calls over a provider's replicas (``base_urls``): least in flight first, a limit per
replica, a cool-down for a replica that fails, and failover within one attempt.

A failover is not a retry: a call that a replica failed (connection refused, 5xx, a
timeout) moves at once to another replica in service, within the same attempt of the
call. Only when every replica in service failed it (or none is in service) does the attempt
fail, and the engine's retry policy takes over as for a single server.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from qualspec.errors import ProviderError, ProviderTimeoutError
from qualspec.providers import moves_to_another_replica, replica_label

if TYPE_CHECKING:
    from qualspec.providers import ChatRequest, ChatResponse, Provider

__all__ = ["DEFAULT_COOLDOWN", "ReplicaRouter"]

log = logging.getLogger("qualspec.engine")

DEFAULT_COOLDOWN = 30.0
"""Seconds a failed replica is left out when its provider does not say."""

_IN_SERVICE = float("-inf")


class ReplicaRouter:
    """Where the calls of one replica set go, and which replicas are in service.

    ``limit_of(replica)`` is the concurrency limit of one replica (the engine's, keyed by
    the replica's base URL). A call goes to the replica in service with the fewest calls in
    flight (waiting for its limit included), ties to the one sent fewest calls so far; a
    replica that fails is out of service for the provider's ``replica_cooldown`` seconds
    (an answer brings it back at once). When none is in service, the call goes to the one
    whose cool-down ends first: a probe, so that a recovered set is found.
    """

    def __init__(
        self,
        provider: Provider,
        limit_of: Callable[[Provider], asyncio.Semaphore],
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._name = provider.name
        self._replicas: tuple[Provider, ...] = tuple(getattr(provider, "replicas", ()))
        self._labels = [replica_label(r) for r in self._replicas]
        self._limits = [limit_of(r) for r in self._replicas]
        self._cooldown = float(getattr(provider, "replica_cooldown", None) or DEFAULT_COOLDOWN)
        self._clock = clock
        n = len(self._replicas)
        self._in_flight = [0] * n
        self._sent = [0] * n
        self._out_until = [_IN_SERVICE] * n

    def in_flight(self) -> dict[str, int]:
        """Calls in flight per replica (by its label), waiting for its limit included."""
        return dict(zip(self._labels, self._in_flight, strict=True))

    def _pick(self, tried: set[int]) -> int | None:
        now = self._clock()
        free = [i for i in range(len(self._replicas)) if i not in tried]
        ready = [i for i in free if self._out_until[i] <= now]
        if ready:
            return min(ready, key=lambda i: (self._in_flight[i], self._sent[i], i))
        if tried:  # every replica in service failed this call: the attempt fails
            return None
        return min(free, key=lambda i: (self._out_until[i], i))

    async def serve(
        self,
        request: ChatRequest,
        timeout: float | None,
        fails_over: Callable[[ProviderError], bool],
    ) -> tuple[ChatResponse, str]:
        """One attempt of a call: its answer and the label of the replica that gave it.

        A replica failure (see :func:`~qualspec.providers.moves_to_another_replica`, and
        ``fails_over``) takes that replica out and moves the call to the next one; the
        last failure is raised when no replica in service is left to try. Any other error
        is raised at once.
        """
        tried: set[int] = set()
        index = self._pick(tried)
        while index is not None:
            tried.add(index)
            try:
                return await self._send(index, request, timeout), self._labels[index]
            except ProviderError as exc:
                if not (moves_to_another_replica(exc) and fails_over(exc)):
                    raise
                self._take_out(index, exc)
                index = self._pick(tried)
                if index is None:  # no replica in service left to try: the attempt fails
                    raise
        raise ProviderError(  # pragma: no cover - a replica set has at least one replica
            f"Provider '{self._name}' has no replica", provider=self._name, retryable=False
        )

    async def _send(self, index: int, request: ChatRequest, timeout: float | None) -> ChatResponse:
        self._in_flight[index] += 1
        self._sent[index] += 1
        try:
            async with self._limits[index]:
                try:
                    async with asyncio.timeout(timeout):
                        response = await self._replicas[index].complete(request)
                except TimeoutError:
                    raise ProviderTimeoutError(
                        f"no answer from replica {self._labels[index]} within {timeout:g}s "
                        "(raise --timeout)",
                        provider=self._name,
                        model=request.model,
                    ) from None
        finally:
            self._in_flight[index] -= 1
        self._out_until[index] = _IN_SERVICE  # it answers: in service
        return response

    def _take_out(self, index: int, error: ProviderError) -> None:
        now = self._clock()
        was_in_service = self._out_until[index] <= now
        self._out_until[index] = now + self._cooldown
        if was_in_service:
            log.warning(
                "%s: replica %s failed (%s); out of service for %gs, its calls move to "
                "the other replicas",
                self._name,
                self._labels[index],
                error,
                self._cooldown,
            )
