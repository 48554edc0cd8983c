"""The calls an evaluator makes during a run: through the run's engine (limits, cache,
cost, the run's recorder) and counted in its stats."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from qualspec.engine._calls import CallEngine
    from qualspec.engine._context import EvaluationContext
    from qualspec.engine._options import CallOptions, ExecuteStats
    from qualspec.engine._reply import Reply
    from qualspec.engine._sink import Sink
    from qualspec.providers import Message, Provider
    from qualspec.spec import ProviderConfig

__all__ = ["EvaluatorCalls"]


class EvaluatorCalls:
    """What the executor offers its evaluators' calls (a base of ``Executor``)."""

    _providers: dict[str, Provider]
    _configs: dict[str, ProviderConfig]
    _calls: CallEngine
    _recorder: Sink
    stats: ExecuteStats

    def provider_for(self, address: str) -> tuple[Provider, str]:
        """The provider and model of a ``provider/model`` address (created on first use)."""
        from qualspec.providers import split_address

        name, model = split_address(address)
        provider = self._providers.get(name)
        if provider is None:
            provider = self._calls.providers([name], self._configs)[name]
            self._providers[name] = provider
        return provider, model

    async def complete_for_evaluator(
        self,
        ctx: EvaluationContext,
        model: str,
        messages: Sequence[Message],
        *,
        kind: str,
        options: CallOptions,
    ) -> Reply:
        """An evaluator's call: made through the engine, counted in the run's stats."""
        provider, model_name = self.provider_for(model)
        reply = await self._calls.complete(
            provider, model_name, messages, kind=kind, recorder=self._recorder, options=options
        )
        stats = self.stats
        if reply.cached:
            stats.cached_judge += 1
            stats.saved_usd += reply.saved_usd
        else:
            stats.judge_calls += 1
            stats.judge_cost_usd += reply.cost_usd or 0.0
        ctx.account(reply)
        return reply
