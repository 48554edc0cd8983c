"""Issue 19's navigation and login findings in real headless Chromium (Debian's
``chromium``, never a downloaded browser), the app served by uvicorn on 127.0.0.1: a long
note no longer makes the references table (or the review page) wider than the window;
token mode's login form logs a browser in and brings it back to the page it asked for; an
unknown run is a page with the nav bar. No page breaks its CSP or asks another site."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers_web import seed_reference, uvicorn_server

from qualspec.store import Store
from qualspec.web import create_app

pytestmark = pytest.mark.timeout(600)
KEY = "ck-acme-0123456789"
TOKEN = "s3cret-token-0123456789"
WATCH = """
window.__violations = [];
document.addEventListener('securitypolicyviolation', e => {
  window.__violations.push(e.violatedDirective + ' ' + e.blockedURI);
});
"""


@pytest.fixture
def db(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path / 'web.db'}"
    seed_reference(url, KEY)
    with Store.open(url) as store:  # what the form accepted before: a 200,000-character note
        store.set_reference_status(KEY, "disputed", "n" * 200_000, "carol")
    return url


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    foreign: list[str] = []

    def route(r: Any) -> None:
        if r.request.url.startswith("http://127.0.0.1:"):
            r.continue_()
        else:
            foreign.append(r.request.url)
            r.abort()

    context.route("**/*", route)
    opened = context.new_page()
    opened.add_init_script(WATCH)
    yield opened
    assert foreign == []
    context.close()


def _widths(page: Any) -> tuple[int, int]:
    found: list[int] = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    return found[0], found[1]


def test_a_long_note_keeps_the_reference_pages_within_the_window(db: str, page: Any) -> None:
    with uvicorn_server(create_app(db=db)) as base:
        page.goto(base + "/references", wait_until="load")
        table = page.locator("table.references").bounding_box()
        scroll, window = _widths(page)
        assert table is not None and table["width"] <= window, table
        assert scroll <= window
        page.goto(f"{base}/references/{KEY}", wait_until="load")
        scroll, window = _widths(page)
        assert scroll <= window
        assert len(page.locator("#ref-notes").inner_text()) == 200_000  # all of it, wrapped
        assert page.evaluate("window.__violations") == []


def test_the_login_form_logs_in_and_comes_back_to_the_page(db: str, page: Any) -> None:
    app = create_app(db=db, token=TOKEN)
    with uvicorn_server(app) as base:
        response = page.goto(base + "/references?status=disputed", wait_until="load")
        assert response.status == 401
        assert page.locator("h1").inner_text() == "Log in"
        assert page.locator("nav.app a[href='/runs']").count() == 1
        page.fill("input[name=token]", "not it")
        page.click("#login-form button[type=submit]")
        page.wait_for_selector("#login-error")
        assert page.locator("#login-error").inner_text() == "wrong token"
        page.fill("input[name=token]", TOKEN)
        page.click("#login-form button[type=submit]")
        page.wait_for_selector("table.references")
        assert page.url == base + "/references?status=disputed"
        assert TOKEN not in page.url
        # the cookie holds a digest, never the token; it is HttpOnly
        (cookie,) = page.context.cookies()
        assert cookie["httpOnly"] and TOKEN not in cookie["value"]
        assert page.evaluate("document.cookie") == ""
        # logged in, the review form still posts (Chromium's same-origin form post)
        page.goto(f"{base}/references/{KEY}", wait_until="load")
        page.check("#status-form input[value=validated]")
        page.click("#status-form button[type=submit]")
        page.wait_for_selector("#ref-status:text('validated')")
        assert page.evaluate("window.__violations") == []


def test_an_unknown_run_is_a_page_with_the_nav_bar(db: str, page: Any) -> None:
    with uvicorn_server(create_app(db=db)) as base:
        response = page.goto(base + "/runs/nope-nope", wait_until="load")
        assert response.status == 404
        assert "no run with id 'nope-nope'" in page.locator("#error-detail").inner_text()
        page.click("nav.app a[href='/references']")
        page.wait_for_selector("table.references")
        assert page.evaluate("window.__violations") == []
