"""Provider addresses and the ProviderPool (real entry points from the installed package)."""

from __future__ import annotations

import asyncio

import pytest

from qualspec.errors import ConfigError
from qualspec.providers import Provider, ProviderPool, available_providers, split_address
from qualspec.providers._anthropic import AnthropicProvider
from qualspec.providers._openai import OpenAIProvider
from qualspec.spec import ProviderConfig
from qualspec.testing import FakeServer


@pytest.mark.parametrize(
    ("address", "expected"),
    [
        ("local/smollm2", ("local", "smollm2")),
        ("openai/gpt-4o", ("openai", "gpt-4o")),
        ("local/models/x.gguf", ("local", "models/x.gguf")),
        ("openrouter/anthropic/claude-3.5-sonnet", ("openrouter", "anthropic/claude-3.5-sonnet")),
    ],
)
def test_split_address(address: str, expected: tuple[str, str]) -> None:
    assert split_address(address) == expected


@pytest.mark.parametrize("address", ["gpt-4o", "openai/", "/gpt-4o", ""])
def test_split_address_errors_show_an_example(address: str) -> None:
    with pytest.raises(ConfigError, match="local/smollm2"):
        split_address(address)


def test_available_providers_lists_builtins() -> None:
    names = available_providers()
    assert names == sorted(names)
    assert {"local", "openai", "openrouter", "ollama", "vllm", "anthropic"} <= set(names)


def test_pool_creates_from_entry_points_and_caches(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-x")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-y")
    pool = ProviderPool()
    openai = pool.get("openai")
    assert isinstance(openai, OpenAIProvider) and isinstance(openai, Provider)
    assert pool.get("openai") is openai
    assert isinstance(pool.get("anthropic"), AnthropicProvider)
    provider, model = pool.resolve("ollama/llama3.2")
    assert provider.name == "ollama" and model == "llama3.2"
    asyncio.run(pool.aclose())


def test_custom_named_provider_from_config(server: FakeServer) -> None:
    pool = ProviderPool({"mylab": ProviderConfig(type="openai", base_url=server.base_url)})
    assert "mylab" in pool.names()
    provider, model = pool.resolve("mylab/my-model")
    assert provider.name == "mylab"

    from qualspec.providers import ChatRequest, Message

    async def go() -> str:
        try:
            response = await provider.complete(
                ChatRequest(model=model, messages=(Message("user", "ping"),))
            )
            return response.text
        finally:
            await pool.aclose()

    assert asyncio.run(go()) == "Answer to: ping"
    assert server.request_log[0][2]["model"] == "my-model"


def test_config_under_builtin_name_configures_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-x")
    pool = ProviderPool({"openai": ProviderConfig(temperature_range=(0.0, 1.5))})
    assert pool.get("openai").temperature_range == (0.0, 1.5)


def test_unknown_provider_did_you_mean() -> None:
    pool = ProviderPool({"mylab": ProviderConfig(base_url="http://127.0.0.1:1/v1")})
    with pytest.raises(ConfigError) as info:
        pool.get("opnai")
    message = str(info.value)
    assert "did you mean 'openai'" in message
    assert "anthropic" in message and "mylab" in message
    assert "\n" not in message


def test_missing_key_surfaces_from_pool() -> None:
    from qualspec.errors import MissingAPIKeyError

    with pytest.raises(MissingAPIKeyError, match="OPENROUTER_API_KEY"):
        ProviderPool().get("openrouter")
