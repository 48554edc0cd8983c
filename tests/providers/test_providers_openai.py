"""The OpenAI-compatible provider against the real fake server (no mocks)."""

from __future__ import annotations

import asyncio
import socket
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest

from qualspec.errors import (
    AuthenticationError,
    BadResponseError,
    ConfigError,
    MissingAPIKeyError,
    ProviderError,
    RateLimitError,
)
from qualspec.providers import ChatRequest, Message
from qualspec.providers._openai import (
    OpenAIProvider,
    create_ollama,
    create_openai,
    create_openrouter,
    create_vllm,
)
from qualspec.spec import ProviderConfig
from qualspec.testing import FakeServer

SECRET = "sk-test-canary-123456789"
SCHEMA = {
    "type": "object",
    "properties": {"score": {"type": "integer"}, "reasoning": {"type": "string"}},
    "required": ["score", "reasoning"],
}


def _request(text: str = "Hello there", **kwargs: object) -> ChatRequest:
    return ChatRequest(
        model="gpt-4o-mini",
        messages=(Message("system", "Be brief."), Message("user", text)),
        **kwargs,  # type: ignore[arg-type]
    )


def _provider(server: FakeServer, monkeypatch: pytest.MonkeyPatch) -> OpenAIProvider:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    return create_openai("openai", None)


def _call(provider: OpenAIProvider, request: ChatRequest) -> object:
    async def go() -> object:
        try:
            return await provider.complete(request)
        finally:
            await provider.aclose()

    return asyncio.run(go())


def _error(provider: OpenAIProvider, request: ChatRequest) -> ProviderError:
    with pytest.raises(ProviderError) as info:
        _call(provider, request)
    return info.value


def test_answer_tokens_and_request_shape(
    server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    provider = _provider(server, monkeypatch)
    request = _request(temperature=0.7, max_tokens=50, params={"top_p": 0.9, "seed": 3})
    response = _call(provider, request)
    assert response.text == "Answer to: Hello there"  # type: ignore[attr-defined]
    assert response.finish_reason == "stop"  # type: ignore[attr-defined]
    assert response.input_tokens == len("Be brief.Hello there") // 4  # type: ignore[attr-defined]
    assert response.output_tokens == len("Answer to: Hello there") // 4  # type: ignore[attr-defined]
    assert response.structured is None  # type: ignore[attr-defined]
    ((_, headers, body),) = server.request_log
    assert headers["Authorization"] == f"Bearer {SECRET}"
    assert body == {
        "model": "gpt-4o-mini",
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Hello there"},
        ],
        "temperature": 0.7,
        "max_tokens": 50,
        "top_p": 0.9,
        "seed": 3,
    }
    assert server.calls_by_path == {"/v1/chat/completions": 1}


def test_temperature_none_is_not_sent(server: FakeServer, monkeypatch: pytest.MonkeyPatch) -> None:
    _call(_provider(server, monkeypatch), _request())
    body = server.request_log[0][2]
    assert "temperature" not in body and "max_tokens" not in body


def test_structured_output_request_and_parse(
    server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    response = _call(_provider(server, monkeypatch), _request("Rate it", json_schema=SCHEMA))
    body = server.request_log[0][2]
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "response", "schema": SCHEMA, "strict": True},
    }
    assert response.structured == {  # type: ignore[attr-defined]
        "score": 8,
        "reasoning": "The answer meets the criterion.",
    }


def test_structured_output_that_does_not_parse_is_none(
    server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    server.judge_reply = "Score: 7/10, good"
    try:
        response = _call(_provider(server, monkeypatch), _request("x", json_schema=SCHEMA))
    finally:
        server.judge_reply = '{"score": 8, "reasoning": "The answer meets the criterion."}'
    assert response.text == "Score: 7/10, good"  # type: ignore[attr-defined]
    assert response.structured is None  # type: ignore[attr-defined]


def test_500_is_retryable(server: FakeServer, monkeypatch: pytest.MonkeyPatch) -> None:
    server.fail_next(1, status=500)
    error = _error(_provider(server, monkeypatch), _request())
    assert type(error) is ProviderError
    assert error.retryable and error.status == 500 and error.retry_after is None
    assert error.provider == "openai" and error.model == "gpt-4o-mini"
    assert "\n" not in str(error)


def test_503_carries_retry_after(server: FakeServer, monkeypatch: pytest.MonkeyPatch) -> None:
    server.fail_next(1, status=503, retry_after=2)
    error = _error(_provider(server, monkeypatch), _request())
    assert error.retryable and error.retry_after == 2.0


def test_408_is_retryable(server: FakeServer, monkeypatch: pytest.MonkeyPatch) -> None:
    server.fail_next(1, status=408)
    assert _error(_provider(server, monkeypatch), _request()).retryable


def test_429_with_retry_after_seconds(server: FakeServer, monkeypatch: pytest.MonkeyPatch) -> None:
    server.fail_next(1, status=429, retry_after=3)
    error = _error(_provider(server, monkeypatch), _request())
    assert isinstance(error, RateLimitError)
    assert error.retryable and error.status == 429 and error.retry_after == 3.0


def test_429_with_retry_after_http_date(
    server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    when = datetime.now(UTC) + timedelta(seconds=30)
    server.fail_next(1, status=429, retry_after=format_datetime(when, usegmt=True))
    error = _error(_provider(server, monkeypatch), _request())
    assert isinstance(error, RateLimitError)
    assert error.retry_after is not None and 25 <= error.retry_after <= 31


def test_429_without_retry_after(server: FakeServer, monkeypatch: pytest.MonkeyPatch) -> None:
    server.fail_next(1, status=429)
    error = _error(_provider(server, monkeypatch), _request())
    assert isinstance(error, RateLimitError) and error.retry_after is None


def test_401_names_the_variable_never_the_key(
    server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    server.require_key = "the-right-key"
    provider = _provider(server, monkeypatch)
    error = _error(provider, _request())
    assert isinstance(error, AuthenticationError)
    assert not error.retryable and error.status == 401
    assert "OPENAI_API_KEY" in str(error)
    assert SECRET not in str(error) and SECRET not in repr(error)
    assert SECRET not in repr(provider)
    assert "\n" not in str(error)


def test_right_key_is_accepted(server: FakeServer, monkeypatch: pytest.MonkeyPatch) -> None:
    server.require_key = SECRET
    response = _call(_provider(server, monkeypatch), _request())
    assert response.text.startswith("Answer to:")  # type: ignore[attr-defined]


def test_403_is_authentication_error(server: FakeServer, monkeypatch: pytest.MonkeyPatch) -> None:
    server.fail_next(1, status=403)
    error = _error(_provider(server, monkeypatch), _request())
    assert isinstance(error, AuthenticationError) and not error.retryable


def test_400_is_not_retryable_and_quotes_server(
    server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    server.fail_next(1, status=400)
    error = _error(_provider(server, monkeypatch), _request())
    assert type(error) is ProviderError
    assert not error.retryable and error.status == 400
    assert "unsupported parameter" in str(error)


def test_malformed_body_is_bad_response(
    server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    server.malformed_next(1)
    error = _error(_provider(server, monkeypatch), _request())
    assert isinstance(error, BadResponseError) and error.retryable and error.status == 200


def test_connection_refused_is_retryable(monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    config = ProviderConfig(type="openai", base_url=f"http://127.0.0.1:{port}/v1")
    provider = create_openai("mylab", config)
    error = _error(provider, _request())
    assert type(error) is ProviderError and error.retryable and error.status is None
    assert "mylab" in str(error)


def test_missing_key_raised_at_creation() -> None:
    with pytest.raises(MissingAPIKeyError) as info:
        create_openai("openai", None)
    assert info.value.variable == "OPENAI_API_KEY"
    assert "OPENAI_API_KEY" in str(info.value)
    with pytest.raises(MissingAPIKeyError, match="OPENROUTER_API_KEY"):
        create_openrouter("openrouter", None)


def test_custom_key_variable_required(monkeypatch: pytest.MonkeyPatch) -> None:
    config = ProviderConfig(type="openai", base_url="http://127.0.0.1:1/v1", api_key_env="LAB_KEY")
    monkeypatch.delenv("LAB_KEY", raising=False)
    with pytest.raises(MissingAPIKeyError, match="LAB_KEY"):
        create_openai("mylab", config)


def test_defaults_for_ollama_vllm_need_no_key() -> None:
    ollama = create_ollama("ollama", None)
    vllm = create_vllm("vllm", None)
    assert ollama.base_url == "http://localhost:11434/v1"
    assert vllm.base_url == "http://localhost:8000/v1"
    assert ollama.temperature_range == (0.0, 2.0)


def test_config_overrides(server: FakeServer) -> None:
    config = ProviderConfig(
        type="openai", base_url=server.base_url, temperature_range=(0.0, 1.0), max_concurrency=7
    )
    provider = create_openai("mylab", config)
    assert provider.temperature_range == (0.0, 1.0)
    assert provider.default_concurrency == 7
    response = _call(provider, _request())
    assert response.text == "Answer to: Hello there"  # type: ignore[attr-defined]
    assert "Authorization" not in server.request_log[0][1]


def test_bad_base_url_is_config_error() -> None:
    with pytest.raises(ConfigError, match="http://"):
        create_openai("mylab", ProviderConfig(type="openai", base_url="localhost:8000"))


def test_many_concurrent_calls_share_one_session(
    server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    server.latency = 0.05
    provider = _provider(server, monkeypatch)

    async def go() -> list[str]:
        try:
            responses = await asyncio.gather(
                *(provider.complete(_request(f"q{i}")) for i in range(100))
            )
            return [r.text for r in responses]
        finally:
            await provider.aclose()

    texts = asyncio.run(go())
    assert texts == [f"Answer to: q{i}" for i in range(100)]
    assert server.calls == 100


def test_provider_survives_a_new_event_loop(
    server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    provider = _provider(server, monkeypatch)
    assert asyncio.run(provider.complete(_request("one"))).text == "Answer to: one"
    assert asyncio.run(provider.complete(_request("two"))).text == "Answer to: two"
    asyncio.run(provider.aclose())


def test_missing_choices_is_bad_response() -> None:
    provider = OpenAIProvider("x", base_url="http://127.0.0.1:1/v1", api_key=None)
    for body in ({}, {"choices": []}, {"choices": [{"message": "oops"}]}, [1]):
        with pytest.raises(BadResponseError):
            provider.parse_response(body, _request())


def test_parse_retry_after_forms() -> None:
    from qualspec.providers._http import parse_retry_after

    now = datetime(2025, 1, 1, tzinfo=UTC)
    assert parse_retry_after("7") == 7.0
    assert parse_retry_after("0.5") == 0.5
    assert parse_retry_after("-3") == 0.0
    assert parse_retry_after(None) is None
    assert parse_retry_after("soon") is None
    assert parse_retry_after("Wed, 01 Jan 2025 00:00:10 GMT", now=now) == 10.0
    assert parse_retry_after("Tue, 31 Dec 2024 23:00:00 GMT", now=now) == 0.0


def test_no_temperature_is_sent_when_none_is_asked(
    server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    provider = _provider(server, monkeypatch)
    _call(provider, _request())  # temperature None: the server's default
    _call(_provider(server, monkeypatch), _request(temperature=0.0))
    (_, _, default), (_, _, zero) = server.request_log
    assert "temperature" not in default
    assert zero["temperature"] == 0.0
