"""Issue 17, item 24: the web app answers ``/favicon.ico`` (an SVG icon, its content type
right, the security headers kept) instead of 404, and every page links it."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from qualspec.web import create_app

pytestmark = pytest.mark.asyncio


async def test_the_favicon_is_served_with_the_security_headers(tmp_path: Path) -> None:
    app = create_app(db=f"sqlite:///{tmp_path / 'web.db'}")
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as c:
        icon = await c.get("/favicon.ico")
        page = await c.get("/runs")
    await app.fastapi.state.web.aclose()  # type: ignore[attr-defined]
    assert icon.status_code == 200
    assert icon.headers["content-type"].startswith("image/svg+xml")
    assert icon.content.startswith(b"<svg") and b"<script" not in icon.content
    assert "default-src 'none'" in icon.headers["content-security-policy"]
    assert icon.headers["x-content-type-options"] == "nosniff"
    # the pages name it as their icon (an SVG served from this origin: CSP img-src 'self')
    assert '<link rel="icon" href="/static/favicon.svg" type="image/svg+xml">' in page.text
    assert "img-src 'self'" in page.headers["content-security-policy"]
