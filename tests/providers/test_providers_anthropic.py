"""The Anthropic provider against the real fake server (no mocks)."""

from __future__ import annotations

import asyncio
import json

import pytest

from qualspec.errors import AuthenticationError, MissingAPIKeyError, ProviderError, RateLimitError
from qualspec.providers import ChatRequest, ChatResponse, Message
from qualspec.providers._anthropic import AnthropicProvider, create
from qualspec.spec import ProviderConfig
from qualspec.testing import FakeServer

SECRET = "sk-ant-canary-987654321"
SCHEMA = {
    "type": "object",
    "properties": {"score": {"type": "integer"}, "reasoning": {"type": "string"}},
    "required": ["score", "reasoning"],
}


def _provider(server: FakeServer, monkeypatch: pytest.MonkeyPatch) -> AnthropicProvider:
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
    return create("anthropic", None)


def _request(**kwargs: object) -> ChatRequest:
    return ChatRequest(
        model="claude-3-5-haiku-latest",
        messages=(
            Message("system", "You are terse."),
            Message("user", "What is 2+2?"),
        ),
        **kwargs,  # type: ignore[arg-type]
    )


def _call(provider: AnthropicProvider, request: ChatRequest) -> ChatResponse:
    async def go() -> ChatResponse:
        try:
            return await provider.complete(request)
        finally:
            await provider.aclose()

    return asyncio.run(go())


def test_request_shape_and_answer(server: FakeServer, monkeypatch: pytest.MonkeyPatch) -> None:
    provider = _provider(server, monkeypatch)
    assert provider.temperature_range == (0.0, 1.0)
    response = _call(provider, _request(temperature=0.5, params={"top_k": 5}))
    assert response.text == "Answer to: What is 2+2?"
    assert response.finish_reason == "end_turn"
    assert response.input_tokens == len("You are terse.What is 2+2?") // 4
    assert response.output_tokens == len(response.text) // 4
    ((_, headers, body),) = server.request_log
    assert headers["x-api-key"] == SECRET
    assert headers["anthropic-version"] == "2023-06-01"
    assert "Authorization" not in headers
    assert body == {
        "model": "claude-3-5-haiku-latest",
        "system": "You are terse.",
        "messages": [{"role": "user", "content": "What is 2+2?"}],
        "max_tokens": 1024,
        "temperature": 0.5,
        "top_k": 5,
    }
    assert server.calls_by_path == {"/v1/messages": 1}


def test_explicit_max_tokens(server: FakeServer, monkeypatch: pytest.MonkeyPatch) -> None:
    _call(_provider(server, monkeypatch), _request(max_tokens=77))
    body = server.request_log[0][2]
    assert body["max_tokens"] == 77 and "temperature" not in body


def test_structured_output_uses_a_forced_tool(
    server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    response = _call(_provider(server, monkeypatch), _request(json_schema=SCHEMA))
    body = server.request_log[0][2]
    assert body["tools"] == [
        {
            "name": "respond",
            "description": "Give the answer in this structure.",
            "input_schema": SCHEMA,
        }
    ]
    assert body["tool_choice"] == {"type": "tool", "name": "respond"}
    assert response.structured == {"score": 8, "reasoning": "The answer meets the criterion."}
    assert json.loads(response.text) == response.structured
    assert response.finish_reason == "tool_use"


def test_529_overloaded_is_retryable(server: FakeServer, monkeypatch: pytest.MonkeyPatch) -> None:
    server.fail_next(1, status=529)
    with pytest.raises(ProviderError) as info:
        _call(_provider(server, monkeypatch), _request())
    assert info.value.retryable and info.value.status == 529


def test_429_retry_after(server: FakeServer, monkeypatch: pytest.MonkeyPatch) -> None:
    server.fail_next(1, status=429, retry_after="1.5")
    with pytest.raises(RateLimitError) as info:
        _call(_provider(server, monkeypatch), _request())
    assert info.value.retry_after == 1.5


def test_401_names_variable_not_key(server: FakeServer, monkeypatch: pytest.MonkeyPatch) -> None:
    server.require_key = "another-key"
    with pytest.raises(AuthenticationError) as info:
        _call(_provider(server, monkeypatch), _request())
    message = str(info.value)
    assert "ANTHROPIC_API_KEY" in message and SECRET not in message
    assert not info.value.retryable


def test_missing_key() -> None:
    with pytest.raises(MissingAPIKeyError, match="ANTHROPIC_API_KEY"):
        create("anthropic", None)


def test_custom_config_and_host_only_base_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_CLAUDE", "secret-value-xyz")
    config = ProviderConfig(
        type="anthropic", base_url="https://example.invalid", api_key_env="MY_CLAUDE"
    )
    provider = create("proxy", config)
    assert provider.base_url == "https://example.invalid/v1"
    assert "secret-value-xyz" not in repr(provider)


def test_no_temperature_is_sent_when_none_is_asked(
    server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    provider = _provider(server, monkeypatch)
    _call(provider, _request())  # temperature None: the API's default
    ((_, _headers, body),) = server.request_log
    assert "temperature" not in body
