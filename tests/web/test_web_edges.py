"""The web app's security edges (issue 19), each against the real app through httpx (or a
raw ASGI call where httpx cannot send the request): a public bind needs a real token; the
redirect after a login stays on this site; the Host header is parsed strictly; ``Origin:
null`` without fetch metadata cannot change anything; WebSockets never reach the app; and
what used to be a 500 is a clear 4xx (a non-ASCII path in token mode, a cookie-unsafe
token, NaN and Infinity, an unknown model in the Lab, a 100 KB id, a 200,000-character
note)."""

from __future__ import annotations

import html
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import pytest_asyncio
from helpers_web import KEY_ENV, lab_body, providers, seed_reference

from qualspec.errors import ConfigError
from qualspec.testing import FakeServer, LabScript
from qualspec.web import check_bind, create_app

pytestmark = pytest.mark.asyncio
TOKEN = "s3cret-token-0123456789"
KEY = "ck-acme-0123456789"


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeServer]:
    monkeypatch.setenv(KEY_ENV, "sk-web")
    script = LabScript(scores=[0.4, 0.9])
    with FakeServer(judge_reply=script.evaluate, answer=script.generate) as srv:
        yield srv


@pytest.fixture
def db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("QUALSPEC_USER", "carol")
    url = f"sqlite:///{tmp_path / 'web.db'}"
    seed_reference(url, KEY)
    return url


def _client(app: Any) -> httpx.AsyncClient:
    transport = httpx.ASGITransport(app=app)
    return httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1")


@pytest_asyncio.fixture
async def client(server: FakeServer, db: str) -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(db=db, providers=providers(server))
    async with _client(app) as c:
        yield c
    await app.fastapi.state.web.aclose()


@pytest_asyncio.fixture
async def token_client(server: FakeServer, db: str) -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(db=db, providers=providers(server), token=TOKEN)
    async with _client(app) as c:
        yield c
    await app.fastapi.state.web.aclose()


async def _asgi(app: Any, scope: dict[str, Any], body: bytes = b"") -> list[dict[str, Any]]:
    """One request straight into the ASGI app (what httpx refuses to send); the messages
    the app sent back."""
    sent: list[dict[str, Any]] = []
    incoming = [{"type": "http.request", "body": body, "more_body": False}]

    async def receive() -> dict[str, Any]:
        return incoming.pop(0) if incoming else {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    base = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "query_string": b"",
        "root_path": "",
        "headers": [(b"host", b"127.0.0.1:8000")],
        "client": ("127.0.0.1", 5000),
        "server": ("127.0.0.1", 8000),
    }
    await app({**base, **scope}, receive, send)
    return sent


async def test_a_public_bind_needs_a_token_of_16_characters() -> None:
    for short in ("x", " ", " " * 40, "tok-9f2c", "a" * 15 + " "):
        with pytest.raises(ConfigError) as caught:
            check_bind("0.0.0.0", short)
        message = str(caught.value)
        assert "at least 16" in message and "secrets.token_urlsafe" in message, message
        assert "\n" not in message
    check_bind("0.0.0.0", "t" * 16)
    check_bind("::", "f3a9c1d2e4b5a6978877665544332211")
    check_bind("127.0.0.1", "x")  # loopback: any token (or none) is the user's choice
    with pytest.raises(ConfigError, match="without a token"):
        check_bind("0.0.0.0", "")


@pytest.mark.parametrize(
    "url",
    [
        f"/login?token={TOKEN}&next=//evil.example",
        f"/login?token={TOKEN}&next=/%5Cevil.example",
        f"/login?token={TOKEN}&next=https://evil.example/",
        f"/login?token={TOKEN}&next=javascript:alert(1)",
        f"//evil.example?token={TOKEN}",
        f"//evil.example/runs?token={TOKEN}",
        f"/%5Cevil.example?token={TOKEN}",
    ],
)
async def test_the_redirect_after_a_login_never_leaves_the_site(
    token_client: httpx.AsyncClient, url: str
) -> None:
    response = await token_client.get(httpx.URL("http://127.0.0.1" + url))
    assert response.status_code == 303
    assert response.headers["location"] == "/runs"


async def test_a_login_goes_on_to_the_page_asked_for(token_client: httpx.AsyncClient) -> None:
    response = await token_client.get("/login", params={"token": TOKEN, "next": "/lab?x=1"})
    assert (response.status_code, response.headers["location"]) == (303, "/lab?x=1")
    response = await token_client.get(
        "/login", params={"token": TOKEN, "next": "/lab?x=1", "y": "2"}
    )
    assert response.headers["location"] == "/lab?x=1&y=2"
    # a non-ASCII path in token mode: percent-encoded in the redirect (a 500 before)
    url = httpx.URL(f"http://127.0.0.1/runs/r\u00e9sum\u00e9-\u65e5\u672c?token={TOKEN}&a=1")
    response = await token_client.get(url)
    assert response.status_code == 303
    assert response.headers["location"] == "/runs/r%C3%A9sum%C3%A9-%E6%97%A5%E6%9C%AC?a=1"
    page = await token_client.get(response.headers["location"], headers={"accept": "text/html"})
    assert page.status_code == 404 and "<nav" in page.text  # logged in: the app's own 404


@pytest.mark.parametrize("token", ['semi;colon space"quote', "t\u00f6k\u00e9n-\u65e5\u672c-0123"])
async def test_a_cookie_unsafe_token_still_logs_in(server: FakeServer, db: str, token: str) -> None:
    app = create_app(db=db, providers=providers(server), token=token)
    async with _client(app) as c:
        login = await c.get("/login", params={"token": token})
        assert login.status_code == 303, login.text
        cookie = login.headers["set-cookie"]
        assert cookie.isascii() and token not in cookie  # a digest, never the token
        assert (await c.get("/api/runs")).status_code == 200  # the cookie lets it in
        # the form posts it too (UTF-8, as a browser sends it)
        c.cookies.clear()
        assert (await c.get("/api/runs")).status_code == 401
        posted = await c.post("/login", data={"token": token, "next": "/references"})
        assert (posted.status_code, posted.headers["location"]) == (303, "/references")
        assert (await c.get("/api/runs")).status_code == 200
    await app.fastapi.state.web.aclose()


@pytest.mark.parametrize(
    "host",
    [
        "127.0.0.1:8000@evil.example",
        "127.0.0.1@evil.example",
        "localhost:8000@evil.example:80",
        "127.0.0.1:8000/evil.example",
        "127.0.0.1 evil.example",
        "127.0.0.1.evil.example",
        "localhost.evil.example:8000",
        "localhost:80:80",
        "localhost:port",
        "[::1]@evil.example",
        "",
    ],
)
async def test_a_host_header_that_is_not_only_a_loopback_name_is_refused(
    client: httpx.AsyncClient, host: str
) -> None:
    response = await client.get("/api/runs", headers={"host": host})
    assert response.status_code == 421, host


@pytest.mark.parametrize(
    "host", ["127.0.0.1:8000", "127.0.0.1", "localhost", "LOCALHOST:1", "[::1]:80"]
)
async def test_loopback_host_names_are_answered(client: httpx.AsyncClient, host: str) -> None:
    assert (await client.get("/api/runs", headers={"host": host})).status_code == 200


async def test_origin_null_without_fetch_metadata_changes_nothing(
    client: httpx.AsyncClient,
) -> None:
    form = {"status": "validated", "notes": "ok"}
    refused = [
        ("/references/" + KEY + "/status", {"origin": "null"}),
        ("/references/" + KEY + "/status", {"origin": "null", "sec-fetch-site": "cross-site"}),
        ("/references/" + KEY + "/status", {"origin": "null", "sec-fetch-site": "same-site"}),
    ]
    for path, headers in refused:
        response = await client.post(path, data=form, headers=headers)
        assert response.status_code == 403, headers
        assert "Sec-Fetch-Site" in response.json()["detail"]
    api = await client.post(f"/api/references/{KEY}/status", json=form, headers={"origin": "null"})
    assert api.status_code == 403
    assert (await client.get(f"/api/references/{KEY}")).json()["status"] == "unvalidated"
    # a current browser's same-origin form post under no-referrer: let through
    same = {"origin": "null", "sec-fetch-site": "same-origin"}
    response = await client.post(f"/references/{KEY}/status", data=form, headers=same)
    assert response.status_code == 303
    assert (await client.get(f"/api/references/{KEY}")).json()["status"] == "validated"


@pytest.mark.parametrize("token", [None, TOKEN])
async def test_websockets_never_reach_the_app(token: str | None) -> None:
    from qualspec.web._security import Guard

    reached: list[str] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        reached.append(scope["type"])

    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "websocket.connect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {
        "type": "websocket",
        "path": "/api/runs",
        "query_string": f"token={TOKEN}".encode(),
        "headers": [(b"host", b"127.0.0.1:8000"), (b"authorization", f"Bearer {TOKEN}".encode())],
    }
    await Guard(app, token=token)(scope, receive, send)
    assert reached == []
    assert [m["type"] for m in sent] == ["websocket.close"]
    await Guard(app, token=token)({"type": "lifespan"}, receive, send)
    assert reached == ["lifespan"]


async def test_nan_and_infinity_are_422_without_a_call(
    client: httpx.AsyncClient, server: FakeServer
) -> None:
    for value in ("NaN", "Infinity", "-Infinity"):
        body = (
            '{"instruct": "a", "resp_format": "b", "eval_crit": "c", '
            f'"score_threshold": {value}, "model": "fake/gen"}}'
        )
        for path in ("/api/generate-answer", "/api/generate-answer/stream"):
            response = await client.post(
                path, content=body.encode(), headers={"content-type": "application/json"}
            )
            assert response.status_code == 422, (path, value, response.text)
            (problem,) = response.json()["detail"]
            assert problem["loc"] == ["body", "score_threshold"]
            assert problem["input"] == str(float(value))
    form = {k: str(v) for k, v in lab_body().items()}
    for value in ("nan", "inf", "-inf"):
        page = await client.post("/lab", data={**form, "score_threshold": value})
        assert page.status_code == 422 and "score_threshold" in page.text
    assert server.calls == 0


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ({"model": "nosuch/model"}, "model: unknown provider 'nosuch'"),
        ({"judge_model": "elsewhere/judge"}, "judge_model: unknown provider 'elsewhere'"),
        ({"model": "no-slash"}, "model: Model address 'no-slash' must be provider/model"),
    ],
)
async def test_an_unknown_lab_model_is_400_and_leaves_no_run(
    client: httpx.AsyncClient, server: FakeServer, change: dict[str, str], said: str
) -> None:
    form = {k: str(v) for k, v in lab_body(**change).items()}
    page = await client.post("/lab", data=form)
    text = html.unescape(page.text)
    assert page.status_code == 400 and f"Error: {said}" in text, text[-2000:]
    if "unknown provider" in said:
        assert "use one of anthropic, fake," in text  # the providers it knows
    for path in ("/api/generate-answer", "/api/generate-answer/stream"):
        response = await client.post(path, json=lab_body(**change))
        assert response.status_code == 400 and said in response.json()["detail"]
    runs = (await client.get("/api/runs")).json()
    assert [r["kind"] for r in runs] == ["suite"]  # only the seeded one: no Lab run
    assert server.calls == 0


async def test_a_100_kb_id_is_404(client: httpx.AsyncClient, server: FakeServer) -> None:
    app = client._transport.app  # type: ignore[attr-defined]
    long_id = "a" * 100_000
    for path in (
        "/runs/",
        "/api/runs/",
        "/rubrics/",
        "/references/",
        "/api/references/",
    ):
        sent = await _asgi(app, {"path": path + long_id, "raw_path": (path + long_id).encode()})
        assert sent[0]["status"] == 404, path
        assert len(sent[1]["body"]) < 2000  # the id is not echoed back whole
    query = f"a={long_id}&b={long_id}".encode()
    for path in ("/api/diff", "/diff"):
        sent = await _asgi(app, {"path": path, "raw_path": path.encode(), "query_string": query})
        assert sent[0]["status"] == 404, path
    # and through httpx, as long as a URL may be
    for path in ("/runs/", "/api/runs/", "/references/"):
        assert (await client.get(path + "b" * 60_000)).status_code == 404


async def test_the_status_form_caps_notes_as_the_api_does(client: httpx.AsyncClient) -> None:
    long_note = "n" * 200_000
    page = await client.post(
        f"/references/{KEY}/status", data={"status": "validated", "notes": long_note}
    )
    assert page.status_code == 422
    assert "notes: at most 10000 characters, got 200000" in page.text
    api = await client.post(
        f"/api/references/{KEY}/status", json={"status": "validated", "notes": long_note}
    )
    assert api.status_code == 422
    override = await client.post(
        f"/references/{KEY}/override",
        data={"answer": '{"name": "Acme"}', "notes": long_note},
    )
    assert override.status_code == 422 and "notes: at most 10000" in override.text
    who = await client.post(
        f"/references/{KEY}/status", data={"status": "validated", "who": "w" * 201}
    )
    assert who.status_code == 422 and "who: at most 200" in who.text
    detail = (await client.get(f"/api/references/{KEY}")).json()
    assert detail["status"] == "unvalidated" and detail["audit"] == []
    # the cap itself is allowed, as in the API
    ok = await client.post(
        f"/references/{KEY}/status", data={"status": "validated", "notes": "n" * 10_000}
    )
    assert ok.status_code == 303
    assert len((await client.get(f"/api/references/{KEY}")).json()["notes"]) == 10_000
