"""A lean HTTP/1.1 client for the plain ``http://`` endpoints of the remote providers.

A model server on the local network (llama.cpp's server, vLLM, a replica, the fake server
of the benchmarks) can answer in a millisecond; aiohttp then spends more CPU on a call than
the rest of a cell's work together (about 130 us of CPU a call on a 2-core machine against
60 us here: ``benchmarks/engine_throughput.py``). A call here is one ``sock_sendall`` of a
request whose head is built once per endpoint, then ``sock_recv`` until httptools (llhttp,
the parser Node.js and aiohttp use) says the answer is complete: Content-Length, chunked
and until-close bodies, gzip and deflate.

Connections are kept alive and reused, the last used first. One idle for longer than
:data:`IDLE_S` (under the keep-alive timeout of common servers) is closed instead of
reused, and one that failed, was cancelled or that the server asked to close is closed.
There is no retry here: a failure is an ``OSError`` (or ``httptools.HttpParserError``) for
the caller to classify. ``https``, other schemes and ``QUALSPEC_HTTP_CLIENT=aiohttp`` go
through aiohttp (:mod:`qualspec.providers._http`).
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

__all__ = ["IDLE_S", "Answer", "WireEndpoint", "wire_endpoint"]

IDLE_S = 4.0
"""Seconds a kept-alive connection may sit idle and still be reused (uvicorn closes them
after 5 s, llama.cpp's server and vLLM later)."""
_RECV = 262_144
_SAFE_PATH = "/%:@!$&'()*+,;=-._~"


class Answer:
    """An HTTP answer: its status, its headers (names in lower case, last one wins) and
    its body (decoded when the server compressed it)."""

    __slots__ = ("body", "headers", "status")

    def __init__(self, status: int, headers: dict[str, str], body: bytes) -> None:
        self.status = status
        self.headers = headers
        self.body = body


class _ClosedIdle(ConnectionError):
    """A reused connection ended before any byte of the answer."""


class _Reader:
    """httptools' callbacks for one answer."""

    __slots__ = ("body", "complete", "head_done", "headers", "keep_alive", "parser")

    def __init__(self) -> None:
        self.body: list[bytes] = []
        self.headers: dict[str, str] = {}
        self.complete = False
        self.head_done = False
        self.keep_alive = False
        self.parser: Any = None  # its httptools parser, while it reads

    def on_header(self, name: bytes, value: bytes) -> None:
        self.headers[name.decode("latin-1").lower()] = value.decode("latin-1")

    def on_headers_complete(self) -> None:
        self.head_done = True
        # asked here: once the answer is complete, llhttp has reset and says False
        self.keep_alive = self.parser is not None and self.parser.should_keep_alive()

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


class WireEndpoint:
    """One server of one event loop: the request head for its URL, and its idle
    connections. ``close`` needs no event loop (the sockets are plain sockets)."""

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
        if "accept" not in {n.lower() for n in headers}:
            lines.append(b"Accept: application/json")
        self._head = b"\r\n".join(lines) + b"\r\nContent-Length: "
        self._idle: list[tuple[socket.socket, float]] = []

    def __repr__(self) -> str:
        return f"WireEndpoint({self._host}:{self._port}, {len(self._idle)} idle)"

    async def post(self, body: bytes) -> Answer:
        """POST ``body``; the answer. Raises OSError (refused, reset, closed early) or
        ``httptools.HttpParserError`` (not HTTP).

        A kept-alive connection the server closed just as it was reused (its end, or a
        reset, before any byte of an answer) is no answer: the call is sent once more, on a
        new connection."""
        loop = asyncio.get_running_loop()
        sock = self._take()
        if sock is not None:
            try:
                return await self._exchange(loop, sock, body, reused=True)
            except _ClosedIdle:
                pass
        return await self._exchange(loop, await self._open(loop), body, reused=False)

    async def _exchange(
        self, loop: asyncio.AbstractEventLoop, sock: socket.socket, body: bytes, *, reused: bool
    ) -> Answer:
        import httptools

        reader = _Reader()
        parser = reader.parser = httptools.HttpResponseParser(reader)
        got = 0
        try:
            try:
                await loop.sock_sendall(sock, b"%s%d\r\n\r\n%s" % (self._head, len(body), body))
                while not reader.complete:
                    data = await loop.sock_recv(sock, _RECV)
                    if not data:
                        if reader.until_close():
                            break
                        raise ConnectionResetError("the server closed the connection mid-answer")
                    got += len(data)
                    parser.feed_data(data)
            except (ConnectionResetError, BrokenPipeError) as exc:
                if reused and not got:
                    raise _ClosedIdle from exc
                raise
            status = parser.get_status_code()
            keep = reader.complete and reader.keep_alive
            reader.parser = None  # no cycle left for the garbage collector
        except BaseException:
            sock.close()
            raise
        if keep:
            self._idle.append((sock, time.monotonic()))
        else:
            sock.close()
        return Answer(status, reader.headers, _decoded(b"".join(reader.body), reader.headers))

    def close(self) -> None:
        """Close the idle connections (those in use close when their call ends)."""
        idle, self._idle = self._idle, []
        for sock, _ in idle:
            sock.close()

    def _take(self) -> socket.socket | None:
        """The most recently used idle connection still fit to reuse, if any: not idle
        for too long, and not closed by the server meanwhile (nothing to read: a peek at
        it would block)."""
        idle = self._idle
        while idle:
            sock, since = idle.pop()
            if time.monotonic() - since < IDLE_S:
                try:
                    sock.recv(1, socket.MSG_PEEK)  # b"": closed; a byte: not an answer of ours
                except BlockingIOError:
                    return sock
                except OSError:
                    pass
            sock.close()
        return None

    async def _open(self, loop: asyncio.AbstractEventLoop) -> socket.socket:
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
            return sock
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
