"""The web app's guards: where it may bind, the token, the body size limit, the headers.

* It binds 127.0.0.1 by default and refuses any other address without a token.
* With a token every route requires it: an ``Authorization: Bearer`` header, or the
  ``qualspec_token`` cookie that ``GET /login?token=...`` (or ``?token=`` on any page) sets
  (HttpOnly, SameSite=Strict). Compared in constant time.
* Without a token it answers only requests addressed to a loopback host name (a page of
  another site cannot reach it through DNS rebinding).
* A change (POST, PUT, PATCH, DELETE) from another site is refused with 403: a browser's
  ``Sec-Fetch-Site: cross-site`` (or ``same-site``), or an ``Origin`` that is not this
  host. With a token, the SameSite=Strict cookie keeps other sites' requests out too.
* A request body over the limit is refused with 413 before the app reads it.
* Every response carries a Content-Security-Policy (no inline script, nothing from another
  origin), ``nosniff``, ``no-referrer`` and ``frame-ancestors 'none'``. No CORS headers are
  ever sent, so browsers keep other origins out.
"""

from __future__ import annotations

import hmac
import json
from collections.abc import Awaitable, Callable, MutableMapping
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import parse_qsl, urlencode

from qualspec.errors import ConfigError

__all__ = [
    "COOKIE",
    "DEFAULT_MAX_BODY",
    "PAGE_CSP",
    "TOKEN_ENV",
    "Guard",
    "check_bind",
]

TOKEN_ENV = "QUALSPEC_WEB_TOKEN"
COOKIE = "qualspec_token"
DEFAULT_MAX_BODY = 1_000_000  # bytes: a Lab request is a few kilobytes
LOOPBACK = ("127.0.0.1", "localhost", "::1", "[::1]")
PAGE_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    "img-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


def check_bind(host: str, token: str | None) -> None:
    """Refuse to bind anything but loopback without a token.

    Raises:
        ConfigError: ``host`` is not a loopback address and there is no token.
    """
    if host not in LOOPBACK and not token:
        raise ConfigError(
            f"refusing to serve on {host} without a token: anyone who can reach it could "
            f"read your runs and spend your API keys; pass --token T (or set {TOKEN_ENV}), "
            "or bind --host 127.0.0.1"
        )


def _headers(scope: Scope) -> dict[str, str]:
    return {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}


def _security_headers(extra: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    have = {k.lower() for k, _ in extra}
    out = list(extra)
    defaults = {
        b"content-security-policy": PAGE_CSP,
        b"x-content-type-options": "nosniff",
        b"referrer-policy": "no-referrer",
        b"x-frame-options": "DENY",
        b"cache-control": "no-store",
    }
    for name, value in defaults.items():
        if name not in have:
            out.append((name, value.encode("latin-1")))
    return out


async def _send_json(send: Send, status: int, body: Any, extra: list[Any] | None = None) -> None:
    data = json.dumps(body).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(data))]
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": _security_headers(headers + (extra or [])),
        }
    )
    await send({"type": "http.response.body", "body": data})


class Guard:
    """ASGI middleware: token, loopback host names, body limit, security headers."""

    def __init__(
        self, app: ASGIApp, *, token: str | None, max_body: int = DEFAULT_MAX_BODY
    ) -> None:
        self.app = app
        self.token = token or None
        self.max_body = max_body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = _headers(scope)
        if self.token is None and not _loopback_host(headers.get("host", "")):
            await _send_json(send, 421, {"detail": "this server answers 127.0.0.1 only"})
            return
        if self.token is not None:
            query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1")))
            given = query.get("token")
            if given is not None and scope["method"] == "GET":
                await self._login(scope, send, given, query)
                return
            if not self._authorized(headers):
                await _send_json(
                    send,
                    401,
                    {
                        "detail": "a token is required: open /login?token=T or send "
                        "'Authorization: Bearer T'"
                    },
                    [(b"www-authenticate", b"Bearer")],
                )
                return
        if scope["method"] in _CHANGES and _cross_site(headers):
            await _send_json(send, 403, {"detail": "a change from another site is refused"})
            return
        length = headers.get("content-length")
        if length is not None and (not length.isdigit() or int(length) > self.max_body):
            await self._too_large(send)
            return
        if scope["method"] in ("POST", "PUT", "PATCH"):
            body = await self._read(receive)
            if body is None:
                await self._too_large(send)
                return
            receive = _replay(body, receive)

        async def guarded_send(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = _security_headers(list(message.get("headers", [])))
            await send(message)

        await self.app(scope, receive, guarded_send)

    def _authorized(self, headers: dict[str, str]) -> bool:
        expected = (self.token or "").encode()
        auth = headers.get("authorization", "")
        if auth.startswith("Bearer ") and hmac.compare_digest(auth[7:].encode(), expected):
            return True
        cookie = SimpleCookie()
        try:
            cookie.load(headers.get("cookie", ""))
        except Exception:  # an unreadable cookie header is no token
            return False
        morsel = cookie.get(COOKIE)
        return morsel is not None and hmac.compare_digest(morsel.value.encode(), expected)

    async def _login(self, scope: Scope, send: Send, given: str, query: dict[str, str]) -> None:
        token = self.token or ""
        if not token or not hmac.compare_digest(given.encode(), token.encode()):
            await _send_json(send, 401, {"detail": "wrong token"})
            return
        query.pop("token", None)
        path = scope["path"]
        target = "/runs" if path == "/login" else path
        if query:
            target += "?" + urlencode(query)
        cookie = f"{COOKIE}={token}; HttpOnly; SameSite=Strict; Path=/"
        await send(
            {
                "type": "http.response.start",
                "status": 303,
                "headers": _security_headers(
                    [
                        (b"location", target.encode("latin-1")),
                        (b"set-cookie", cookie.encode("latin-1")),
                        (b"content-length", b"0"),
                    ]
                ),
            }
        )
        await send({"type": "http.response.body", "body": b""})

    async def _read(self, receive: Receive) -> bytes | None:
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                break
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_body:
                return None
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        return b"".join(chunks)

    async def _too_large(self, send: Send) -> None:
        detail = [
            {
                "loc": ["body"],
                "msg": f"request body over the limit of {self.max_body} bytes",
                "type": "body_too_large",
            }
        ]
        await _send_json(send, 413, {"detail": detail})


_CHANGES = ("POST", "PUT", "PATCH", "DELETE")


def _cross_site(headers: dict[str, str]) -> bool:
    """Whether a browser says the request comes from a page of another site."""
    if headers.get("sec-fetch-site", "") in ("cross-site", "same-site"):
        return True
    origin = headers.get("origin", "")
    if not origin or origin == "null":  # a form post under no-referrer sends "null"
        return False
    return origin.split("://", 1)[-1].rstrip("/").lower() != headers.get("host", "").lower()


def _loopback_host(host: str) -> bool:
    """``127.0.0.1:8000``, ``localhost``, ``[::1]:8000``: a loopback name (port or not)."""
    if host.startswith("["):
        name = host[: host.find("]") + 1]
    else:
        name = host.split(":")[0] if host.count(":") <= 1 else host
    return name in LOOPBACK


def _replay(body: bytes, receive: Receive) -> Receive:
    sent = False

    async def replayed() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replayed
