"""A provider used from one event loop after another (two ``asyncio.run``) closes what the
old loop held, with no 'Unclosed' warning or error log: aiohttp's session through its public
API, and the lean client's idle connections (plain sockets, closed without a loop)."""

from __future__ import annotations

import asyncio
import gc
import logging
import warnings

import pytest

from qualspec.providers import ChatRequest, Message
from qualspec.providers._openai import OpenAIProvider
from qualspec.testing import FakeServer


async def _once_more(provider: OpenAIProvider, request: ChatRequest) -> str:
    """The call made again from a second loop, then the provider closed."""
    try:
        return (await provider.complete(request)).text
    finally:
        await provider.aclose()


def test_a_session_of_a_finished_loop_is_closed_quietly(
    server: FakeServer, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("QUALSPEC_HTTP_CLIENT", "aiohttp")  # aiohttp for http:// too
    provider = OpenAIProvider("fake", base_url=server.base_url, api_key=None)
    request = ChatRequest(model="m", messages=(Message("user", "hi"),))
    with warnings.catch_warnings(record=True) as caught, caplog.at_level(logging.DEBUG):
        warnings.simplefilter("always")
        first = asyncio.run(provider.complete(request))
        old = provider._http._session  # noqa: SLF001 - the session of the finished loop

        assert asyncio.run(_once_more(provider, request)) == first.text == "Answer to: hi"
        assert old is not None and old.closed
        del old
        gc.collect()
    messages = [str(w.message) for w in caught] + [r.getMessage() for r in caplog.records]
    assert not [m for m in messages if "Unclosed" in m or "close()" in m], messages
    assert server.calls == 2


def test_the_lean_clients_connections_of_a_finished_loop_are_closed_quietly(
    server: FakeServer, caplog: pytest.LogCaptureFixture
) -> None:
    provider = OpenAIProvider("fake", base_url=server.base_url, api_key=None)
    request = ChatRequest(model="m", messages=(Message("user", "hi"),))
    with warnings.catch_warnings(record=True) as caught, caplog.at_level(logging.DEBUG):
        warnings.simplefilter("always")
        first = asyncio.run(provider.complete(request))
        assert provider._http._session is None  # noqa: SLF001 - http:// is the lean client's
        (old,) = provider._http._wire.values()  # noqa: SLF001 - the finished loop's endpoint
        assert old is not None
        (conn,) = old._idle  # noqa: SLF001 - its kept-alive connection
        sock = conn.sock
        assert sock.fileno() != -1

        assert asyncio.run(_once_more(provider, request)) == first.text == "Answer to: hi"
        assert sock.fileno() == -1, "the old loop's connection was closed"
        assert not provider._http._wire  # noqa: SLF001 - closed by aclose
        del old, conn, sock
        gc.collect()
    messages = [str(w.message) for w in caught] + [r.getMessage() for r in caplog.records]
    assert not [m for m in messages if "nclosed" in m or "close()" in m], messages
    assert server.calls == 2
