"""One call object (issue 18): the settings of a call travel down every layer as one
frozen ``CallOptions``; the public keyword forms build one at the top."""

from __future__ import annotations

import dataclasses
import inspect
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import qualspec
from qualspec import CallOptions, ProviderConfig, Session
from qualspec.engine import CallEngine, Executor
from qualspec.judges import SessionContext
from qualspec.providers import Message
from qualspec.testing import FakeServer

KEY = "sk-call-options-3c1d"
SETTINGS = {"temperature", "max_tokens", "params", "json_schema", "attempt", "structured_mode"}


def _echo(body: dict[str, Any]) -> str:
    """The fake server's answer: the settings it was sent (the attempt, the default seed,
    is not sent over HTTP: the cache key tells it)."""
    return json.dumps({k: body.get(k) for k in ("temperature", "max_tokens")})


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeServer]:
    monkeypatch.setenv("FAKE_KEY", KEY)
    with FakeServer(require_key=KEY, answer=_echo) as srv:
        yield srv


def _session(server: FakeServer, tmp_path: Path) -> Session:
    config = ProviderConfig(type="openai", base_url=server.base_url, api_key_env="FAKE_KEY")
    return Session(db=f"sqlite:///{tmp_path / 'q.db'}", providers={"fake": config})


def test_call_options_is_one_frozen_public_value() -> None:
    assert qualspec.CallOptions is CallOptions is qualspec.engine.CallOptions
    options = CallOptions(temperature=0.3, max_tokens=7, attempt=2)
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.max_tokens = 8  # type: ignore[misc]
    assert CallOptions() == CallOptions(temperature=0.0, attempt=0, structured_mode="auto")


@pytest.mark.parametrize(
    "layer",
    [CallEngine.complete, Executor.complete_for_evaluator, SessionContext.call],
    ids=["CallEngine.complete", "Executor.complete_for_evaluator", "SessionContext.call"],
)
def test_the_layers_below_the_public_forms_take_one_options(layer: Any) -> None:
    params = set(inspect.signature(layer).parameters)
    assert "options" in params
    assert not params & SETTINGS, f"{layer.__qualname__} restates {sorted(params & SETTINGS)}"


@pytest.mark.asyncio
async def test_session_complete_takes_the_keywords_or_one_options(
    server: FakeServer, tmp_path: Path
) -> None:
    async with _session(server, tmp_path) as session:
        by_keywords = await session.complete(
            "fake/m", "hi", temperature=0.3, max_tokens=7, attempt=2
        )
        sent = json.loads(by_keywords.text or "")
        assert sent == {"temperature": 0.3, "max_tokens": 7}
        calls = server.calls
        by_options = await session.complete(
            "fake/m", "hi", options=CallOptions(temperature=0.3, max_tokens=7, attempt=2)
        )
        # the same call: the same cache key, answered from the cache
        assert by_options.key == by_keywords.key and by_options.cached
        assert server.calls == calls
        with pytest.raises(TypeError, match="not both"):
            await session.complete("fake/m", "hi", max_tokens=5, options=CallOptions())


@pytest.mark.asyncio
async def test_an_evaluator_context_passes_its_settings_down_as_one_options(
    server: FakeServer, tmp_path: Path
) -> None:
    """The judges' context over a session: its keywords (and its attempt offset) arrive
    as one CallOptions, the same call as ``Session.complete(options=...)``."""
    async with _session(server, tmp_path) as session:
        ctx = SessionContext(session, attempt_offset=3)
        reply = await ctx.complete("fake/m", [Message("user", "rate")], max_tokens=4)
        assert json.loads(reply.text or "") == {"temperature": 0.0, "max_tokens": 4}
        same = await session.complete(
            "fake/m", "rate", kind="judge", options=CallOptions(max_tokens=4, attempt=3)
        )
        assert same.key == reply.key and same.cached
