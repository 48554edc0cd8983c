"""A local call whose caller gives up (a timeout) stops generating at the next token, so
the model's only thread is free for the next call. With the real embedded model."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from qualspec.errors import ProviderError
from qualspec.providers import ChatRequest, Message, _local
from qualspec.providers._local import create

pytestmark = pytest.mark.embedded_model

LONG = ChatRequest(
    model="smollm2",
    messages=(Message("user", "Count from 1 to 2000, separated by commas."),),
    temperature=0.0,
    max_tokens=1800,  # SmolLM2 counts on and on: seconds of work on any CPU
)
SHORT = ChatRequest(model="smollm2", messages=(Message("user", "Say hi."),), max_tokens=4)


def test_a_timed_out_local_call_stops_and_the_next_call_runs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    provider = create("local", None)
    outcomes: list[Any] = []
    chat = _local._LoadedModel.chat

    def recording_chat(self: Any, *args: Any) -> Any:
        try:
            result = chat(self, *args)
        except ProviderError as exc:
            outcomes.append(exc)
            raise
        outcomes.append(result["usage"]["completion_tokens"])
        return result

    monkeypatch.setattr(_local._LoadedModel, "chat", recording_chat)

    async def main() -> str:
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(0.5):
                await provider.complete(LONG)
        # the model's one thread runs this only after the long call ended
        return (await asyncio.wait_for(provider.complete(SHORT), timeout=600)).text

    assert asyncio.run(main()).strip()
    assert len(outcomes) == 2, outcomes
    stopped, short_tokens = outcomes
    assert isinstance(stopped, ProviderError) and "cancelled" in str(stopped), stopped
    assert isinstance(short_tokens, int) and 0 < short_tokens <= 4
