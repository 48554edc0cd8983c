"""What one evaluation in a run may use (:class:`EvaluationContext`, the ``EvalContext`` the
executor hands an evaluator): model calls through the run's engine, whose accounting it
adds up for the evaluation's record."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from qualspec.engine._options import CallOptions
from qualspec.store import Usage

if TYPE_CHECKING:
    from qualspec.engine import Executor, Reply
    from qualspec.providers import Message
    from qualspec.store import ReferenceReview

__all__ = ["EvaluationContext"]


class EvaluationContext:
    """What one evaluation may use; adds up the accounting of the calls it makes."""

    def __init__(self, executor: Executor, prompt_version: int | None) -> None:
        self._executor = executor
        self.run_id = executor.run_id
        self.prompt_version = prompt_version
        self.calls = 0
        self.cached_calls = 0
        self.attempts = 0
        self.latency = 0.0
        self.queue = 0.0
        self.cost = 0.0
        self.cost_known = True
        self.answered = 0
        self.input_tokens = 0
        self.output_tokens = 0
        self.last_key = ""
        self.served_by: str | None = None  # the replica that answered the last call

    def account(self, reply: Reply) -> None:
        """Add one call's reply to the evaluation's accounting."""
        self.calls += 1
        self.cached_calls += int(reply.cached)
        self.attempts += reply.attempts
        self.latency += reply.latency_s
        self.queue += reply.queue_s
        if reply.text is not None:
            self.answered += 1
            if reply.cost_usd is None:
                self.cost_known = False  # an answer whose price is unknown
        self.cost += reply.cost_usd or 0.0
        # a cached reply costs nothing, but its tokens are those of the answer it reuses
        self.input_tokens += reply.input_tokens or 0
        self.output_tokens += reply.output_tokens or 0
        self.last_key = reply.key
        if reply.served_by is not None:
            self.served_by = reply.served_by

    @property
    def cost_usd(self) -> float | None:
        """What the evaluation's calls cost: 0 when every one came from the cache, None
        when a price is unknown or no call answered."""
        if self.calls > 0 and self.calls == self.cached_calls:
            return 0.0
        if not self.cost_known or not self.answered:
            return None
        return self.cost

    def usage(self, error: str | None) -> Usage:
        """The evaluation's usage, as its record keeps it (what was not measured: None)."""
        return Usage(
            input_tokens=self.input_tokens or None,
            output_tokens=self.output_tokens or None,
            latency_s=self.latency or None,
            queue_s=self.queue or None,
            cost_usd=self.cost_usd,
            attempts=max(self.attempts, 1),
            error=error,
            cached=self.calls > 0 and self.calls == self.cached_calls,
        )

    async def reference_review(self, call_key: str) -> ReferenceReview | None:
        """The store's review of a reference answer (status, override), or None: never
        reviewed (``Store.reference_review``)."""
        return await asyncio.to_thread(self._executor.store.reference_review, call_key)

    async def complete(
        self,
        model: str,
        messages: Sequence[Message],
        *,
        temperature: float = 0.0,
        max_tokens: int | None = None,
        params: Mapping[str, Any] | None = None,
        json_schema: Mapping[str, Any] | None = None,
        attempt: int = 0,
        kind: str = "judge",
        structured_mode: str = "auto",
    ) -> Reply:
        """One call through the run's engine (``EvalContext.complete``)."""
        options = CallOptions(
            temperature=temperature,
            max_tokens=max_tokens,
            params=params,
            json_schema=json_schema,
            attempt=attempt,
            structured_mode=structured_mode,
        )
        return await self._executor.complete_for_evaluator(
            self, model, messages, kind=kind, options=options
        )
