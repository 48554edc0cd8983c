"""The web app's guards: where it may bind, the token, the body size limit, the headers.

* It binds 127.0.0.1 by default and refuses any other address without a token.
  A public bind needs a token of at least ``MIN_TOKEN`` characters.
* With a token every route requires it: an ``Authorization: Bearer`` header, or the
  ``qualspec_token`` cookie that the login form (``/login``), ``GET /login?token=...`` (or
  ``?token=`` on any page) sets (HttpOnly, SameSite=Strict; it holds a digest of the
  token, so any token is cookie-safe). Compared in constant time. A browser without it is
  shown the login form (401); the redirect after a login only goes to a path of this site.
* Without a token it answers only requests whose Host is a loopback name, parsed strictly
  (``127.0.0.1:8000@evil.example`` is not one): a page of another site cannot reach it
  through DNS rebinding.
* A change (POST, PUT, PATCH, DELETE) from another site is refused with 403: a browser's
  ``Sec-Fetch-Site: cross-site`` (or ``same-site``), an ``Origin`` that is not this host,
  or ``Origin: null`` without ``Sec-Fetch-Site: same-origin`` (what an older browser sends
  from a sandboxed page). With a token, the SameSite=Strict cookie keeps other sites'
  requests out too.
* The app has no WebSocket: every WebSocket connection is refused before the app sees it.
* A request body over the limit is refused with 413 before the app reads it.
* Every response carries a Content-Security-Policy (no inline script, nothing from another
  origin), ``nosniff``, ``no-referrer`` and ``frame-ancestors 'none'``. No CORS headers are
  ever sent, so browsers keep other origins out.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
from collections.abc import Awaitable, Callable, MutableMapping
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import parse_qsl, quote, urlencode

from qualspec.errors import ConfigError
from qualspec.web._login import PUBLIC, wants_html

__all__ = [
    "COOKIE",
    "DEFAULT_MAX_BODY",
    "MIN_TOKEN",
    "PAGE_CSP",
    "TOKEN_ENV",
    "Guard",
    "check_bind",
]

TOKEN_ENV = "QUALSPEC_WEB_TOKEN"
COOKIE = "qualspec_token"
DEFAULT_MAX_BODY = 1_000_000  # bytes: a Lab request is a few kilobytes
MIN_TOKEN = 16  # characters a token needs to guard a public bind
LOOPBACK = ("127.0.0.1", "localhost", "::1", "[::1]")
# a loopback Host header: the name, then at most a port; nothing else (no "@", no path)
_LOOPBACK_HOST = re.compile(r"(?:127\.0\.0\.1|localhost|\[::1\])(?::[0-9]{1,5})?|::1", re.I)
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
    """Refuse to bind anything but loopback without a real token.

    Raises:
        ConfigError: ``host`` is not a loopback address and there is no token, or one
            shorter than ``MIN_TOKEN`` characters (blanks not counted).
    """
    if host in LOOPBACK:
        return
    if not token:
        raise ConfigError(
            f"refusing to serve on {host} without a token: anyone who can reach it could "
            f"read your runs and spend your API keys; pass --token T (or set {TOKEN_ENV}), "
            "or bind --host 127.0.0.1"
        )
    if len(token.strip()) < MIN_TOKEN:
        raise ConfigError(
            f"refusing to serve on {host} with a token of {len(token.strip())} character(s): "
            f"use at least {MIN_TOKEN}, e.g. --token \"$(python -c 'import secrets; "
            "print(secrets.token_urlsafe(24))')\""
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
        self.cookie = cookie_value(token) if token else ""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket":  # the app has none: nothing to guard, nothing to reach
            await _refuse_websocket(receive, send)
            return
        if scope["type"] != "http":  # lifespan
            await self.app(scope, receive, send)
            return
        headers = _headers(scope)
        if self.token is None and not _loopback_host(headers.get("host", "")):
            await _send_json(send, 421, {"detail": "this server answers 127.0.0.1 only"})
            return
        if scope["method"] in _CHANGES and _cross_site(headers):
            await _send_json(send, 403, {"detail": _CROSS_SITE})
            return
        if self.token is not None and not await self._let_in(scope, receive, send, headers):
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

    async def _let_in(
        self, scope: Scope, receive: Receive, send: Send, headers: dict[str, str]
    ) -> bool:
        """Whether a request in token mode goes on to the app (else it is answered here:
        the login form, a login, or 401)."""
        method, path = scope["method"], scope["path"]
        query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1")))
        given = query.get("token")
        if given is not None and method == "GET":
            await self._login(send, given, path, query)
            return False
        if path == "/login" and method == "POST":
            body = await self._read(receive, limit=_LOGIN_BODY)
            form = dict(parse_qsl((body or b"").decode("utf-8", "replace")))
            await self._login(send, form.get("token", ""), path, {"next": form.get("next", "")})
            return False
        if self._authorized(headers):
            return True
        if path == "/login" and method == "GET":
            await _send_form(send, 200, query.get("next", ""))
        elif path in PUBLIC:  # the login form's stylesheets and icon
            return True
        elif method == "GET" and wants_html(headers) and not path.startswith("/api/"):
            await _send_form(send, 401, _request_target(scope))
        else:
            await _send_json(send, 401, {"detail": _TOKEN_REQUIRED}, [_BEARER])
        return False

    def _authorized(self, headers: dict[str, str]) -> bool:
        expected = (self.token or "").encode()
        auth = headers.get("authorization", "")
        # a header is latin-1 text: its bytes are what the client sent (UTF-8 for a non-ASCII token)
        if auth.startswith("Bearer ") and hmac.compare_digest(auth[7:].encode("latin-1"), expected):
            return True
        cookie = SimpleCookie()
        try:
            cookie.load(headers.get("cookie", ""))
        except Exception:  # an unreadable cookie header is no token
            return False
        morsel = cookie.get(COOKIE)
        return morsel is not None and hmac.compare_digest(
            morsel.value.encode("latin-1", "replace"), self.cookie.encode()
        )

    async def _login(self, send: Send, given: str, path: str, query: dict[str, str]) -> None:
        token = self.token or ""
        wanted = query.pop("next", "") if path == "/login" else path
        if not token or not hmac.compare_digest(given.encode(), token.encode()):
            await _send_form(send, 401, wanted, error="wrong token")
            return
        query.pop("token", None)
        target = (local_path(wanted) or "/runs") if path == "/login" else local_path(path)
        if target is None:
            target = "/runs"
        elif query:
            target += ("&" if "?" in target else "?") + urlencode(query)
        cookie = f"{COOKIE}={self.cookie}; HttpOnly; SameSite=Strict; Path=/"
        await send(
            {
                "type": "http.response.start",
                "status": 303,
                "headers": _security_headers(
                    [
                        (b"location", target.encode("ascii")),
                        (b"set-cookie", cookie.encode("ascii")),
                        (b"content-length", b"0"),
                    ]
                ),
            }
        )
        await send({"type": "http.response.body", "body": b""})

    async def _read(self, receive: Receive, limit: int | None = None) -> bytes | None:
        limit = self.max_body if limit is None else limit
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                break
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
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
_LOGIN_BODY = 16_384  # bytes: a token and a path
_BEARER = (b"www-authenticate", b"Bearer")
_TOKEN_REQUIRED = (
    "a token is required: open /login (or /login?token=T) or send 'Authorization: Bearer T'"
)
_CROSS_SITE = (
    "a change from another site is refused (a browser that sends 'Origin: null' must also "
    "send 'Sec-Fetch-Site': use a current browser)"
)
# what may follow the leading "/" of a path this app redirects to, percent-encoded otherwise
_PATH_SAFE = "/?&=%:@!$'()*+,;-._~"


def cookie_value(token: str) -> str:
    """What the login cookie holds for ``token``: a digest (hex, cookie-safe for any token)."""
    return hashlib.sha256(b"qualspec-web-login\0" + token.encode()).hexdigest()


def local_path(target: str) -> str | None:
    """``target`` as a path of this site to redirect to (percent-encoded), or None when it
    could lead elsewhere: it must start with one ``/`` (no ``//``, no backslash, no control
    character, so no scheme and no other host)."""
    if not target.startswith("/") or target.startswith("//") or "\\" in target:
        return None
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in target):
        return None
    return quote(target, safe=_PATH_SAFE)


async def _send_form(send: Send, status: int, next_path: str, *, error: str | None = None) -> None:
    """Answer with the login form (200 for ``/login``, 401 for a page that needs the token)."""
    from qualspec.web._login import page

    body = page(local_path(next_path) or "", error)
    headers = [
        (b"content-type", b"text/html; charset=utf-8"),
        (b"content-length", b"%d" % len(body)),
    ]
    if status == 401:
        headers.append(_BEARER)
    await send(
        {"type": "http.response.start", "status": status, "headers": _security_headers(headers)}
    )
    await send({"type": "http.response.body", "body": body})


def _request_target(scope: Scope) -> str:
    """The path and query of the request (to come back to after the login form)."""
    query = scope.get("query_string", b"").decode("latin-1")
    path: str = scope["path"]
    return path + (f"?{query}" if query else "")


async def _refuse_websocket(receive: Receive, send: Send) -> None:
    """Close a WebSocket before accepting it (the server answers the handshake with 403)."""
    message = await receive()
    if message["type"] == "websocket.connect":
        await send({"type": "websocket.close", "code": 1008, "reason": "no WebSocket here"})


def _cross_site(headers: dict[str, str]) -> bool:
    """Whether a browser says the request comes from a page of another site (or may)."""
    fetch_site = headers.get("sec-fetch-site", "")
    if fetch_site in ("cross-site", "same-site"):
        return True
    origin = headers.get("origin", "")
    if not origin:  # not a browser's cross-origin request: curl, scripts, a typed URL
        return False
    if origin == "null":  # a form post under no-referrer, or a sandboxed page of any site
        return fetch_site not in ("same-origin", "none")
    return origin.split("://", 1)[-1].rstrip("/").lower() != headers.get("host", "").lower()


def _loopback_host(host: str) -> bool:
    """``127.0.0.1:8000``, ``localhost``, ``[::1]:8000``: a loopback name, then at most a
    port (``127.0.0.1:8000@evil.example`` is not one)."""
    return _LOOPBACK_HOST.fullmatch(host) is not None


def _replay(body: bytes, receive: Receive) -> Receive:
    sent = False

    async def replayed() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replayed
