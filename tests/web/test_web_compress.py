"""The web app's gzip wrapper and its cache of rendered pages (``qualspec.web._compress``)."""

from __future__ import annotations

import gzip
from typing import Any

import httpx
import pytest

pytestmark = pytest.mark.asyncio


async def test_server_sent_events_and_small_responses_are_not_compressed() -> None:
    from qualspec.web._compress import with_gzip

    async def app(scope: Any, receive: Any, send: Any) -> None:
        size = 10 if scope["path"] == "/small" else 5000
        kind = b"text/event-stream" if scope["path"].endswith("/stream") else b"text/html"
        await send(
            {"type": "http.response.start", "status": 200, "headers": [(b"content-type", kind)]}
        )
        await send({"type": "http.response.body", "body": b"data: x\n\n" * size})

    transport = httpx.ASGITransport(app=with_gzip(app))
    headers = {"Accept-Encoding": "gzip"}
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
        page, stream, small = [
            await client.get(path, headers=headers) for path in ("/page", "/lab/stream", "/small")
        ]
    assert page.headers["content-encoding"] == "gzip" and page.text.startswith("data: x")
    assert "content-encoding" not in stream.headers
    assert "content-encoding" not in small.headers


async def test_the_page_cache_drops_the_least_recently_viewed_first() -> None:
    import os

    from qualspec.web._compress import PageCache

    pages = PageCache(max_bytes=5000)
    noise = {k: os.urandom(1500).hex() for k in "abc"}  # incompressible: ~3 KB each
    pages.put("a", noise["a"], {})
    pages.put("b", noise["b"], {})
    assert pages.get("a") is not None  # a viewed: b is now the least recent
    pages.put("c", noise["c"], {})
    assert pages.get("b") is None
    found = pages.get("a")
    assert found is not None and gzip.decompress(found[0]).decode() == noise["a"]
    assert pages.get("c") is not None
