"""Fixtures for provider tests: a fake server shared per module, a clean environment."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from qualspec.testing import FakeServer

KEY_VARIABLES = (
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "OPENROUTER_API_KEY",
    "OPENROUTER_BASE_URL",
    "OLLAMA_BASE_URL",
    "VLLM_API_KEY",
    "VLLM_BASE_URL",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
)


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """The root conftest isolates QUALSPEC_HOME; also drop every provider variable."""
    for name in KEY_VARIABLES:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="module")
def _module_server() -> Iterator[FakeServer]:
    with FakeServer() as server:
        yield server


@pytest.fixture()
def server(_module_server: FakeServer) -> Iterator[FakeServer]:
    """A running fake server with no faults, no latency and empty counters."""
    _module_server.reset()
    _module_server.latency = 0.0
    _module_server.require_key = None
    yield _module_server
    _module_server.reset()
