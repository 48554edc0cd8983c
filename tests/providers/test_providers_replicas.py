"""A provider with ``base_urls``: a ``ReplicaSet`` of one OpenAI-compatible provider per
replica, sharing the provider's name and settings, credentials kept out of what it records."""

from __future__ import annotations

import asyncio
import socket

import pytest

from qualspec.errors import ConfigError
from qualspec.providers import ChatRequest, Message, ProviderPool, ReplicaSet
from qualspec.spec import ProviderConfig
from qualspec.testing import FakeServer


def _refused_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def test_base_urls_make_a_replica_set_with_the_providers_settings(server: FakeServer) -> None:
    refused = _refused_url()
    port = server.port
    urls = [refused, f"http://user:s3cret@127.0.0.1:{port}/v1"]
    config = ProviderConfig(type="openai", base_urls=urls, max_concurrency=3, replica_cooldown=5)
    pool = ProviderPool({"llama": config})
    provider = pool.get("llama")
    assert isinstance(provider, ReplicaSet)
    assert [r.name for r in provider.replicas] == ["llama", "llama"]
    assert provider.default_concurrency == 3  # per replica
    assert provider.replica_cooldown == 5
    labels = [getattr(r, "endpoint", None) for r in provider.replicas]
    assert labels == [refused, f"http://127.0.0.1:{port}/v1"]  # no credentials
    assert "s3cret" in provider.secret_values
    assert provider.cache_endpoint == refused  # the first replica names the cache keys

    async def call() -> str:
        request = ChatRequest(model="m", messages=(Message("user", "hi"),))
        try:
            return (await provider.complete(request)).text
        finally:
            await pool.aclose()

    # called directly, the first replica that answers does: the refused one is passed
    assert asyncio.run(call()) == "Answer to: hi"
    (_, headers, _) = server.request_log[-1]
    assert headers["Authorization"].startswith("Basic ")


def test_vllm_takes_base_urls_too() -> None:
    config = ProviderConfig(base_urls=["http://127.0.0.1:8001/v1", "http://127.0.0.1:8002/v1"])
    provider = ProviderPool({"vllm": config}).get("vllm")
    assert isinstance(provider, ReplicaSet) and len(provider.replicas) == 2


def test_anthropic_refuses_base_urls() -> None:
    config = ProviderConfig(base_urls=["http://127.0.0.1:8001/v1"])
    with pytest.raises(ConfigError, match="base_urls"):
        ProviderPool({"anthropic": config}).get("anthropic")
