"""A lean HTTP/1.1 client for the plain ``http://`` endpoints of the remote providers.

A model server on the local network (llama.cpp's server, vLLM, a replica, the fake server
of the benchmarks) can answer in a millisecond; aiohttp then spends more CPU on a call than
the rest of a cell's work together (``benchmarks/http_client.py`` prints both clients' CPU
a call, same server, same run). A call here is one ``send`` of a request whose head is
built once per endpoint; the answer is read as it arrives (``loop.add_reader``, registered
once per connection) and fed to httptools (llhttp, the parser Node.js and aiohttp use)
until it is complete: Content-Length, chunked and until-close bodies, gzip and deflate.

Connections are kept alive and reused, the last used first. One idle for longer than
:data:`IDLE_S` (under the keep-alive timeout of common servers) is closed instead of
reused; one that failed, was cancelled, or that the server closed or asked to close is
closed. A failure is an ``OSError`` (:class:`NotHTTPError` for an answer that is not
HTTP) for the caller to classify; the one call sent again here is one whose kept-alive
connection the server had closed before answering a byte. ``https``, other schemes and
``QUALSPEC_HTTP_CLIENT=aiohttp`` go through aiohttp (:mod:`qualspec.providers._http`).
"""

from __future__ import annotations

import asyncio
import os
import socket
import time
import zlib
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote, urlsplit

import httptools

from qualspec.version import __version__

__all__ = ["IDLE_S", "Answer", "NotHTTPError", "WireEndpoint", "wire_endpoint"]

IDLE_S = 4.0
"""Seconds a kept-alive connection may sit idle and still be reused (uvicorn closes them
after 5 s, llama.cpp's server and vLLM later)."""
_RECV = 65_536
_SAFE_PATH = "/%:@!$&'()*+,;=-._~"


class Answer:
    """An HTTP answer: its status, its headers (names in lower case, last one wins) and
    its body (decoded when the server compressed it)."""

    __slots__ = ("body", "headers", "status")

    def __init__(self, status: int, headers: dict[str, str], body: bytes) -> None:
        self.status = status
        self.headers = headers
        self.body = body


class NotHTTPError(ConnectionError):
    """The server's answer is not HTTP/1.1 (httptools could not parse it)."""


class _ClosedIdle(ConnectionError):
    """A reused connection ended before any byte of the answer."""


class _Reader:
    """httptools' callbacks for one answer."""

    __slots__ = ("body", "complete", "head_done", "headers", "keep_alive", "parser", "status")

    def __init__(self) -> None:
        self.body: list[bytes] = []
        self.headers: dict[str, str] = {}
        self.complete = False
        self.head_done = False
        self.keep_alive = False
        self.status = 0
        self.parser: Any = None  # its httptools parser, while it reads

    def on_header(self, name: bytes, value: bytes) -> None:
        self.headers[name.decode("latin-1").lower()] = value.decode("latin-1")

    def on_headers_complete(self) -> None:
        self.head_done = True
        # asked here: once the answer is complete, llhttp has reset and says False
        if self.parser is not None:
            self.keep_alive = self.parser.should_keep_alive()
            self.status = self.parser.get_status_code()

    def on_body(self, body: bytes) -> None:
        self.body.append(body)

    def on_message_complete(self) -> None:
        self.complete = True

    def until_close(self) -> bool:
        """The body is delimited by the end of the connection (no length, not chunked)."""
        return (
            self.head_done
            and "content-length" not in self.headers
            and "chunked" not in self.headers.get("transfer-encoding", "").lower()
        )


def _field(text: str, what: str) -> bytes:
    """A header name or value as bytes; ValueError for what would break the request."""
    if any(c in text for c in "\r\n\0"):
        raise ValueError(f"the HTTP header {what} holds a line break or NUL")
    return text.encode("latin-1")


class _Conn:
    """One kept-alive connection: a plain non-blocking socket whose reads arrive through
    ``loop.add_reader`` for as long as it is open (no change to the selector per call, and
    an idle connection the server closes is closed here at once)."""

    __slots__ = ("_loop", "closed", "got", "idle_since", "reader", "sock", "waiter")

    def __init__(self, loop: asyncio.AbstractEventLoop, sock: socket.socket) -> None:
        self._loop = loop
        self.sock = sock
        self.closed = False
        self.got = 0
        self.idle_since = 0.0
        self.reader: _Reader | None = None
        self.waiter: asyncio.Future[None] | None = None
        loop.add_reader(sock.fileno(), self._readable)

    async def exchange(self, request: bytes, *, reused: bool) -> _Reader:
        """Send ``request``; its answer, read whole."""
        reader = self.reader = _Reader()
        reader.parser = httptools.HttpResponseParser(reader)
        self.got = 0
        self.waiter = self._loop.create_future()
        try:
            try:
                sent = self.sock.send(request)
            except BlockingIOError:
                sent = 0
            if sent < len(request):
                await self._loop.sock_sendall(self.sock, memoryview(request)[sent:])
            await self.waiter
        except (ConnectionResetError, BrokenPipeError) as exc:
            self.close()
            if reused and not self.got:
                raise _ClosedIdle from exc
            raise
        except BaseException:
            self.close()
            raise
        finally:
            self.waiter = None
            reader.parser = None  # no cycle left for the garbage collector
        return reader

    def _readable(self) -> None:
        try:
            data = self.sock.recv(_RECV)
        except (BlockingIOError, InterruptedError):
            return
        except OSError as exc:
            self._fail(exc)
            return
        waiter, reader = self.waiter, self.reader
        if waiter is None or waiter.done() or reader is None:
            self.close()  # idle: the server closed it, or sent what nobody asked for
            return
        if not data:
            if reader.until_close():
                reader.complete = True
                waiter.set_result(None)
            else:
                self._fail(ConnectionResetError("the server closed the connection mid-answer"))
            self.close()
            return
        self.got += len(data)
        try:
            reader.parser.feed_data(data)
        except Exception as exc:  # noqa: BLE001 - httptools.HttpParserError and its kinds
            self._fail(NotHTTPError(f"the answer is not HTTP/1.1 ({exc})"))
            return
        if reader.complete:
            waiter.set_result(None)

    def _fail(self, exc: BaseException) -> None:
        waiter = self.waiter
        if waiter is not None and not waiter.done():
            waiter.set_exception(exc)
        self.close()

    def close(self) -> None:
        """Close the socket (and stop watching it, in its loop's own thread)."""
        if self.closed:
            return
        loop = self._loop
        if not loop.is_closed():
            try:
                running = asyncio.get_running_loop()
            except RuntimeError:
                running = None
            if loop.is_running() and loop is not running:  # used from another thread
                try:
                    loop.call_soon_threadsafe(self.close)
                    return
                except RuntimeError:  # it closed meanwhile: nothing to tell it
                    pass
            else:
                loop.remove_reader(self.sock.fileno())
        self.closed = True
        self.sock.close()


class WireEndpoint:
    """One server of one event loop: the request head for its URL, and its idle
    connections. ``close`` works from any thread, its loop running or closed."""

    def __init__(self, url: str, headers: Mapping[str, str]) -> None:
        parts = urlsplit(url)
        if parts.scheme != "http" or not parts.hostname or "@" in parts.netloc:
            raise ValueError(f"not a plain http:// URL: {url!r}")
        self._host = parts.hostname
        self._port = parts.port or 80
        target = quote(parts.path or "/", safe=_SAFE_PATH)
        if parts.query:
            target += "?" + quote(parts.query, safe=_SAFE_PATH + "?")
        lines = [b"POST " + target.encode("ascii") + b" HTTP/1.1"]
        lines.append(b"Host: " + _field(parts.netloc, "Host"))
        names = {"host", "content-length", "connection", "transfer-encoding"}
        for name, value in headers.items():
            if name.lower() not in names:
                lines.append(_field(name, "name") + b": " + _field(str(value), f"{name!r}"))
        given = {n.lower() for n in headers}
        if "accept" not in given:
            lines.append(b"Accept: application/json")
        if "user-agent" not in given:
            lines.append(b"User-Agent: qualspec/" + __version__.encode("ascii"))
        self._head = b"\r\n".join(lines) + b"\r\nContent-Length: "
        self._idle: list[_Conn] = []

    def __repr__(self) -> str:
        return f"WireEndpoint({self._host}:{self._port}, {len(self._idle)} idle)"

    async def post(self, body: bytes) -> Answer:
        """POST ``body``; the answer. Raises OSError (refused, reset, closed early, or
        :class:`NotHTTPError`).

        A kept-alive connection the server closed just as it was reused (its end, or a
        reset, before any byte of an answer) is no answer: the call is sent once more, on a
        new connection."""
        request = b"%s%d\r\n\r\n%s" % (self._head, len(body), body)
        conn = self._take()
        if conn is not None:
            try:
                return self._answered(conn, await conn.exchange(request, reused=True))
            except _ClosedIdle:
                pass
        conn = await self._open(asyncio.get_running_loop())
        return self._answered(conn, await conn.exchange(request, reused=False))

    def _answered(self, conn: _Conn, reader: _Reader) -> Answer:
        if reader.keep_alive and not conn.closed:
            conn.idle_since = time.monotonic()
            self._idle.append(conn)
        else:
            conn.close()
        body = _decoded(b"".join(reader.body), reader.headers)
        return Answer(reader.status, reader.headers, body)

    def close(self) -> None:
        """Close the idle connections (those in use close when their call ends)."""
        idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()

    def _take(self) -> _Conn | None:
        """The most recently used idle connection still fit to reuse, if any."""
        idle = self._idle
        while idle:
            conn = idle.pop()
            if not conn.closed and time.monotonic() - conn.idle_since < IDLE_S:
                return conn
            conn.close()
        return None

    async def _open(self, loop: asyncio.AbstractEventLoop) -> _Conn:
        infos = await loop.getaddrinfo(self._host, self._port, type=socket.SOCK_STREAM)
        failure: OSError = OSError(f"no address for {self._host}")
        for family, kind, proto, _, address in infos:
            sock = socket.socket(family, kind, proto)
            try:
                sock.setblocking(False)
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                await loop.sock_connect(sock, address)
            except BaseException as exc:
                sock.close()
                if not isinstance(exc, OSError):
                    raise
                failure = exc
                continue
            return _Conn(loop, sock)
        raise failure


def _decoded(body: bytes, headers: dict[str, str]) -> bytes:
    """``body`` as sent before the server compressed it (gzip or deflate; as it came when
    it does not decompress: the caller then finds it is not JSON)."""
    coding = headers.get("content-encoding", "").strip().lower()
    if coding not in ("gzip", "x-gzip", "deflate"):
        return body
    for wbits in (zlib.MAX_WBITS | 32, -zlib.MAX_WBITS):  # gzip or zlib, then raw deflate
        try:
            return zlib.decompressobj(wbits).decompress(body)
        except zlib.error:
            continue
    return body


def wire_endpoint(url: str, headers: Mapping[str, str]) -> WireEndpoint | None:
    """The lean client's endpoint for ``url``; None where aiohttp serves it (not plain
    ``http://``, or ``QUALSPEC_HTTP_CLIENT=aiohttp`` set)."""
    if os.environ.get("QUALSPEC_HTTP_CLIENT", "").strip().lower() == "aiohttp":
        return None
    if not url.lower().startswith("http://"):
        return None
    try:
        return WireEndpoint(url, headers)
    except ValueError:
        return None
