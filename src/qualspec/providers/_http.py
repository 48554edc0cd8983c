"""The HTTP layer shared by the remote providers: how a call is sent, error classes.

Kept cheap in CPU on purpose. A plain ``http://`` endpoint (a local or self-hosted server,
a replica) is called through the lean client of :mod:`qualspec.providers._wire`; anything
else (``https://``, or every endpoint with ``QUALSPEC_HTTP_CLIENT=aiohttp``) through one
``aiohttp.ClientSession`` per provider instance, created inside the running event loop on
first use, with an unlimited connection pool that reuses connections. ``json.dumps`` and
``json.loads`` apply directly to bytes. Providers never retry, sleep or time out here:
they classify failures and the engine decides.
"""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING, Any

from qualspec.errors import (
    AuthenticationError,
    BadResponseError,
    ProviderError,
    RateLimitError,
)
from qualspec.messages import one_line

if TYPE_CHECKING:
    import aiohttp

    from qualspec.providers._base import ChatRequest, ChatResponse
    from qualspec.providers._wire import WireEndpoint
    from qualspec.spec import ProviderConfig

__all__ = [
    "BaseURL",
    "HTTPClient",
    "JSONProvider",
    "bad_response",
    "body_error",
    "classify_status",
    "int_or_none",
    "parse_retry_after",
    "parse_structured",
    "split_base_url",
]

_MAX_MESSAGE = 200
# json.dumps(payload, ensure_ascii=False), with one encoder for every request
_JSON = json.JSONEncoder(ensure_ascii=False)


def parse_retry_after(value: str | None, *, now: datetime | None = None) -> float | None:
    """Parse a ``Retry-After`` header: delta seconds or an HTTP date; ``None`` if absent/bad.

    Example: ``parse_retry_after("2")`` -> ``2.0``.
    """
    if value is None:
        return None
    value = value.strip()
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        pass
    else:
        return max(seconds, 0.0) if math.isfinite(seconds) else None
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    current = now or datetime.now(UTC)
    return max((when - current).total_seconds(), 0.0)


def _masked_line(text: str, secret: str | None) -> str:
    """One line of at most ``_MAX_MESSAGE`` characters, with ``secret`` masked."""
    return one_line(text.replace(secret, "***") if secret else text, _MAX_MESSAGE)


def _server_message(body: bytes) -> str:
    """The error message a server put in its body (OpenAI and Anthropic shapes), or text."""
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return body[:1000].decode("utf-8", "replace")
    if isinstance(data, dict):
        err = data.get("error", data)
        if isinstance(err, dict):
            msg = err.get("message") or err.get("detail") or err.get("type")
            if msg is not None:
                return str(msg)
        elif isinstance(err, str):
            return err
        if "message" in data:
            return str(data["message"])
        if "detail" in data:
            return str(data["detail"])
    return body[:1000].decode("utf-8", "replace")


def classify_status(
    status: int,
    headers: Mapping[str, str],
    body: bytes,
    *,
    provider: str,
    model: str,
    key_variable: str | None,
    secret: str | None = None,
    retryable_statuses: frozenset[int] = frozenset(),
) -> ProviderError:
    """Turn a non-2xx HTTP answer into the right :class:`ProviderError` subclass.

    401/403 -> AuthenticationError (names the key variable, never the key); 429 ->
    RateLimitError with ``retry_after``; 408, 5xx and ``retryable_statuses`` -> retryable
    ProviderError; other 4xx -> non-retryable ProviderError with the server's message.
    """
    ctx: dict[str, Any] = {"provider": provider, "model": model, "status": status}
    retry_after = parse_retry_after(headers.get("Retry-After"))
    if status in (401, 403):
        if key_variable:
            hint = f"check the environment variable {key_variable}"
        else:
            hint = "set api_key_env for this provider in the suite's providers section"
        what = "rejected the API key" if status == 401 else "refused access"
        return AuthenticationError(
            f"Provider '{provider}' {what} (HTTP {status}) for model '{model}': {hint}",
            retryable=False,
            **ctx,
        )
    detail = _masked_line(_server_message(body), secret)
    if status == 429:
        wait = f"; retry after {retry_after:g}s" if retry_after is not None else ""
        return RateLimitError(
            f"Provider '{provider}' rate-limited model '{model}' (HTTP 429){wait}: {detail}",
            retry_after=retry_after,
            **ctx,
        )
    if status == 408 or status >= 500 or status in retryable_statuses:
        return ProviderError(
            f"Provider '{provider}' failed for model '{model}' (HTTP {status}): {detail}",
            retryable=True,
            retry_after=retry_after,
            **ctx,
        )
    return ProviderError(
        f"Provider '{provider}' refused the request for model '{model}' (HTTP {status}): "
        f"{detail}; fix the model name or parameters",
        retryable=False,
        **ctx,
    )


class HTTPClient:
    """POST JSON to one server and return the decoded JSON answer, classifying failures.

    The session lives in the event loop that first used it; when called from another
    loop (a new ``asyncio.run``), a fresh session is made for that loop.
    """

    def __init__(
        self,
        *,
        provider: str,
        headers: Mapping[str, str],
        key_variable: str | None,
        secret: str | None = None,
        retryable_statuses: frozenset[int] = frozenset(),
    ) -> None:
        self._provider = provider
        self._headers = {"Content-Type": "application/json", **headers}
        self._key_variable = key_variable
        self._secret = secret
        self._retryable = retryable_statuses
        self._session: aiohttp.ClientSession | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        # the lean client's endpoints (None: aiohttp's), by URL, for the loop ``_wire_loop``
        self._wire: dict[str, WireEndpoint | None] = {}
        self._wire_loop: asyncio.AbstractEventLoop | None = None

    def __repr__(self) -> str:
        return f"HTTPClient(provider={self._provider!r})"

    async def _get_session(self) -> aiohttp.ClientSession:
        loop = asyncio.get_running_loop()
        session = self._session
        if session is None or self._loop is not loop or session.closed:
            import aiohttp

            old, old_loop = session, self._loop
            # swapped before any await: concurrent callers all get this one session
            session = self._session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=0, ttl_dns_cache=300),
                headers=self._headers,
                timeout=aiohttp.ClientTimeout(total=None),
                json_serialize=json.dumps,
            )
            self._loop = loop
            if old is not None and not old.closed:
                await _discard(old, old_loop)
        return session

    async def post_json(self, url: str, payload: Mapping[str, Any], *, model: str) -> Any:
        """POST ``payload`` as JSON; return the parsed body or raise a ProviderError."""
        data = _JSON.encode(payload).encode()
        loop = asyncio.get_running_loop()
        if self._wire_loop is loop and url in self._wire:
            wire = self._wire[url]
        else:
            wire = self._wire_for(url, loop)
        headers: Mapping[str, str]
        try:
            if wire is not None:
                answer = await wire.post(data)
                status, headers, body = answer.status, answer.headers, answer.body
            else:
                status, headers, body = await self._post_aiohttp(url, data)
        except Exception as exc:
            if not _unreachable(exc):
                raise
            reason = _masked_line(f"{type(exc).__name__}: {exc}", self._secret)
            raise ProviderError(
                f"Could not reach provider '{self._provider}' at {url} ({reason}); "
                "check that the server is running and its base_url",
                provider=self._provider,
                model=model,
                retryable=True,
            ) from exc
        if 300 <= status < 400:  # the lean client follows no redirect (aiohttp does)
            where = _Headers(headers).get("Location")
            to = f" to {_masked_line(where, self._secret)}" if where else ""
            raise ProviderError(
                f"Provider '{self._provider}' answered HTTP {status} for model '{model}' "
                f"(a redirect{to}): set its base_url to where it points",
                retryable=False,
                provider=self._provider,
                model=model,
                status=status,
            )
        if status >= 400:
            raise classify_status(
                status,
                _Headers(headers),
                body,
                provider=self._provider,
                model=model,
                key_variable=self._key_variable,
                secret=self._secret,
                retryable_statuses=self._retryable,
            )
        try:
            return json.loads(body)
        except (ValueError, UnicodeDecodeError) as exc:
            raise bad_response(
                self._provider, model, status, f"body is not JSON: {body[:80]!r}"
            ) from exc

    def _wire_for(self, url: str, loop: asyncio.AbstractEventLoop) -> WireEndpoint | None:
        """The lean client's endpoint for ``url`` in ``loop`` (None: aiohttp's); a new
        loop starts with none (the old loop's idle connections are closed)."""
        from qualspec.providers._wire import wire_endpoint

        if self._wire_loop is not loop:
            self._close_wire()
            self._wire_loop = loop
        wire = self._wire[url] = wire_endpoint(url, self._headers)
        return wire

    def _close_wire(self) -> None:
        endpoints, self._wire = self._wire, {}
        for endpoint in endpoints.values():
            if endpoint is not None:
                endpoint.close()

    async def _post_aiohttp(self, url: str, data: bytes) -> tuple[int, Mapping[str, str], bytes]:
        session = self._session
        # the session of this loop, still open: used as it is (no coroutine to find it)
        if session is None or session.closed or self._loop is not asyncio.get_running_loop():
            session = await self._get_session()
        async with session.post(url, data=data) as resp:
            return resp.status, resp.headers, await resp.read()

    async def aclose(self) -> None:
        """Close the lean client's idle connections, and the session if it belongs to the
        running loop (else just drop it)."""
        self._close_wire()
        session, self._session = self._session, None
        if session is None or session.closed:
            return
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:  # pragma: no cover - called outside a loop
            return
        if running is self._loop:
            await session.close()
        else:
            await _discard(session, self._loop)


def _unreachable(exc: Exception) -> bool:
    """A failure to reach the server or read its answer (not one of qualspec's own)."""
    if isinstance(exc, OSError) and not isinstance(exc, TimeoutError):
        return True  # refused, reset, closed early, no such host, not HTTP (the lean client)
    import aiohttp  # only when a call failed: not imported once per call

    return isinstance(exc, aiohttp.ClientError)


class _Headers(Mapping[str, str]):
    """Headers looked up by any case (the lean client's are in lower case already)."""

    def __init__(self, headers: Mapping[str, str]) -> None:
        self._headers = headers

    def __getitem__(self, name: str) -> str:
        try:
            return self._headers[name]
        except KeyError:
            return self._headers[name.lower()]

    def __iter__(self) -> Any:
        return iter(self._headers)

    def __len__(self) -> int:
        return len(self._headers)


async def _discard(session: aiohttp.ClientSession, loop: asyncio.AbstractEventLoop | None) -> None:
    """Close a session made in another event loop, without an 'Unclosed' warning.

    When that loop is closed (an ``asyncio.run`` that ended), closing does no I/O: it only
    marks the session and its connector closed, so it may be awaited here. When it still
    runs (in another thread), the session is closed there. A loop neither running nor
    closed keeps its connections (they cannot be closed from this one).
    """
    if loop is None or loop.is_closed():
        await session.close()
    elif loop.is_running():
        asyncio.run_coroutine_threadsafe(session.close(), loop)
    else:
        session.detach()


class JSONProvider:
    """What the remote providers share: a call is one POST of a JSON body, its decoded
    answer read into a :class:`~qualspec.providers.ChatResponse`.

    A subclass sets ``_http`` (its :class:`HTTPClient`) and ``_url``, and writes
    ``build_payload`` and ``parse_response`` for its API.
    """

    _http: HTTPClient
    _url: str

    def build_payload(self, request: ChatRequest) -> dict[str, Any]:
        """The JSON body sent for ``request``."""
        raise NotImplementedError

    def parse_response(self, data: Any, request: ChatRequest) -> ChatResponse:
        """Turn a decoded answer body into a :class:`~qualspec.providers.ChatResponse`."""
        raise NotImplementedError

    async def complete(self, request: ChatRequest) -> ChatResponse:
        """Make one call; failures raise classified ProviderErrors."""
        data = await self._http.post_json(
            self._url, self.build_payload(request), model=request.model
        )
        return self.parse_response(data, request)

    async def aclose(self) -> None:
        """Close the HTTP session."""
        await self._http.aclose()


def int_or_none(value: Any) -> int | None:
    """``value`` when it is an int (a bool is not), else None: a token count as sent."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def body_error(data: Any) -> str | None:
    """The provider's own message when a decoded 200 body is an error (``{"error": ...}``)."""
    if not isinstance(data, dict) or not data.get("error") or data.get("choices"):
        return None
    err = data["error"]
    if isinstance(err, dict):
        msg = err.get("message") or err.get("detail") or err.get("type")
        return str(msg) if msg else json.dumps(err)[:1000]
    return str(err)


def bad_response(provider: str, model: str, status: int | None, why: str) -> BadResponseError:
    """A BadResponseError with the usual context and a one-line message."""
    return BadResponseError(
        f"Provider '{provider}' sent an answer qualspec cannot read for model '{model}': "
        f"{_masked_line(why, None)}",
        provider=provider,
        model=model,
        status=status,
    )


def parse_structured(text: str) -> Any:
    """Parse the JSON a model returned for structured output; ``None`` if it does not parse.

    A surrounding Markdown code fence is tolerated.
    """
    candidate = text.strip()
    if candidate.startswith("```"):
        candidate = candidate.strip("`").strip()
        if candidate[:4].lower() == "json":
            candidate = candidate[4:]
    try:
        return json.loads(candidate)
    except ValueError:
        return None


DEFAULT_REMOTE_CONCURRENCY = 32


def connection_limits(
    config: ProviderConfig | None, default_range: tuple[float, float]
) -> tuple[tuple[float, float], int]:
    """The temperature range and default concurrency of a provider, from its suite config."""
    temperature_range, concurrency = default_range, DEFAULT_REMOTE_CONCURRENCY
    if config is not None:
        temperature_range = config.temperature_range or temperature_range
        concurrency = config.max_concurrency or concurrency
    return temperature_range, concurrency


_SECRET_PARAM = ("key", "token", "secret", "pass", "sig", "auth", "cred")


@dataclass(frozen=True, slots=True)
class BaseURL:
    """A base URL split into where calls go and the credentials it carries.

    ``url`` has no ``user:password@``; ``query`` is the query string to append to every
    request URL (without ``?``); ``basic_auth`` is the ``Authorization`` header value for
    the URL's credentials (None without them); ``secrets`` are the values to scrub from
    everything recorded or printed (the password, a lone user name used as a token, and
    query parameters named like a key, token, secret, password or signature).
    """

    url: str
    query: str = ""
    basic_auth: str | None = None
    secrets: tuple[str, ...] = ()

    def request_url(self, path: str) -> str:
        """The URL of ``path`` under this base, with the base's query string."""
        url = f"{self.url}/{path.lstrip('/')}"
        return f"{url}?{self.query}" if self.query else url


def split_base_url(base_url: str) -> BaseURL:
    """Split credentials (``user:password@``, secret query parameters) off a base URL.

    Example: ``split_base_url("http://u:pw@h/v1?api-key=k")`` -> url ``http://h/v1``,
    query ``api-key=k``, a Basic auth header, secrets ``("pw", "k")``.
    """
    import base64
    from urllib.parse import parse_qsl, unquote, urlsplit, urlunsplit

    parts = urlsplit(base_url.strip())
    secrets: list[str] = []
    basic_auth = None
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, _, netloc = netloc.rpartition("@")
        user, has_password, password = userinfo.partition(":")
        user, password = unquote(user), unquote(password)
        secrets.append(password if has_password and password else user)
        token = base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
        basic_auth = f"Basic {token}"
    for name, value in parse_qsl(parts.query, keep_blank_values=True):
        if value and any(word in name.lower() for word in _SECRET_PARAM):
            secrets.append(value)
    url = urlunsplit((parts.scheme, netloc, parts.path, "", "")).rstrip("/")
    return BaseURL(
        url=url,
        query=parts.query,
        basic_auth=basic_auth,
        secrets=tuple(s for s in secrets if s),
    )
