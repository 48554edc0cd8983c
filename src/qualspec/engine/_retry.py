"""Retry policy: bounded attempts, exponential backoff with full jitter, Retry-After honoured."""

from __future__ import annotations

import random
from dataclasses import dataclass

from qualspec.errors import AuthenticationError, ProviderError

__all__ = ["RetryPolicy"]


@dataclass(frozen=True, kw_only=True)
class RetryPolicy:
    """How often and how long to wait between attempts of one call.

    Example: ``RetryPolicy(max_attempts=4, base_delay=0.5, max_delay=20)``.

    A server's ``Retry-After`` wins over the computed backoff (capped at
    ``max_retry_after``). 4xx errors other than 408/429 are not retried; an
    authentication failure is never retried.
    """

    max_attempts: int = 4
    base_delay: float = 1.0
    max_delay: float = 30.0
    max_retry_after: float = 120.0

    def should_retry(self, error: ProviderError, attempt: int) -> bool:
        """True when ``error`` on attempt number ``attempt`` (1-based) deserves another try."""
        if isinstance(error, AuthenticationError) or attempt >= self.max_attempts:
            return False
        return error.retryable

    def delay(self, error: ProviderError, attempt: int) -> float:
        """Seconds to wait before attempt ``attempt + 1``."""
        if error.retry_after is not None:
            return min(max(error.retry_after, 0.0), self.max_retry_after)
        ceiling = min(self.max_delay, self.base_delay * (2 ** (attempt - 1)))
        # "full jitter": spreads retries of many concurrent calls apart.
        return random.uniform(ceiling / 2, ceiling)
