"""The lean HTTP/1.1 client of plain ``http://`` providers, against a real TCP server on
127.0.0.1 that answers each request with bytes a test scripts: chunked and compressed
bodies, kept-alive and closed connections, an idle connection the server closes, error
statuses, an answer that is not HTTP, a cancelled call."""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import json
import socket
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import pytest

from qualspec.errors import ProviderError, RateLimitError
from qualspec.providers import ChatRequest, Message
from qualspec.providers._openai import OpenAIProvider
from qualspec.providers._wire import WireEndpoint, wire_endpoint

_ANSWER = {"choices": [{"message": {"content": "hi there"}, "finish_reason": "stop"}]}
_BODY = json.dumps(_ANSWER).encode()
OK = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (
    len(_BODY),
    _BODY,
)


@dataclass
class Scripted:
    """A TCP server: each request read whole, then answered by ``answer(n)`` (n counts
    requests from 0): the bytes to send and whether to close the connection after."""

    answer: Callable[[int], tuple[bytes, bool]]
    requests: list[bytes] = field(default_factory=list)
    connections: int = 0
    port: int = 0

    @contextlib.contextmanager
    def serve(self) -> Iterator[Scripted]:
        listener = socket.create_server(("127.0.0.1", 0))
        self.port = listener.getsockname()[1]
        stop = threading.Event()

        def accept() -> None:
            listener.settimeout(0.2)
            while not stop.is_set():
                try:
                    conn, _ = listener.accept()
                except TimeoutError:
                    continue
                self.connections += 1
                threading.Thread(target=self._talk, args=(conn,), daemon=True).start()

        thread = threading.Thread(target=accept, daemon=True)
        thread.start()
        try:
            yield self
        finally:
            stop.set()
            thread.join()
            listener.close()

    def _talk(self, conn: socket.socket) -> None:
        with conn:
            buffer = b""
            while True:
                while b"\r\n\r\n" not in buffer:
                    data = conn.recv(65536)
                    if not data:
                        return
                    buffer += data
                head, _, buffer = buffer.partition(b"\r\n\r\n")
                length = next(
                    int(line.split(b":", 1)[1])
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length:")
                )
                while len(buffer) < length:
                    buffer += conn.recv(65536)
                self.requests.append(head + b"\r\n\r\n" + buffer[:length])
                buffer = buffer[length:]
                reply, close = self.answer(len(self.requests) - 1)
                conn.sendall(reply)
                if close:
                    return

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"


@pytest.fixture()
def scripted(request: pytest.FixtureRequest) -> Iterator[Scripted]:
    with Scripted(request.param).serve() as server:
        yield server


def _ask(url: str, times: int = 1) -> list[str]:
    provider = OpenAIProvider("wire", base_url=url, api_key="sk-test")
    request = ChatRequest(model="m", messages=(Message("user", "hello"),))

    async def run() -> list[str]:
        try:
            return [(await provider.complete(request)).text for _ in range(times)]
        finally:
            await provider.aclose()

    return asyncio.run(run())


def _chunked(n: int) -> tuple[bytes, bool]:
    half = len(_BODY) // 2
    parts = [_BODY[:half], _BODY[half:]]
    body = b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in parts) + b"0\r\n\r\n"
    return b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + body, False


@pytest.mark.parametrize("scripted", [_chunked], indirect=True)
def test_chunked_answers_on_one_kept_alive_connection(scripted: Scripted) -> None:
    assert _ask(scripted.url, times=3) == ["hi there"] * 3
    assert scripted.connections == 1
    first = scripted.requests[0]
    head, _, body = first.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    assert lines[0] == b"POST /v1/chat/completions HTTP/1.1"
    assert f"Host: 127.0.0.1:{scripted.port}".encode() in lines
    assert b"Authorization: Bearer sk-test" in lines
    assert b"Content-Type: application/json" in lines
    assert any(line.startswith(b"User-Agent: qualspec/") for line in lines)
    assert json.loads(body)["messages"] == [{"role": "user", "content": "hello"}]


def _gzip_then_close(n: int) -> tuple[bytes, bool]:
    packed = gzip.compress(_BODY)
    head = b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: %d\r\n" % len(packed)
    return head + b"Connection: close\r\n\r\n" + packed, True


@pytest.mark.parametrize("scripted", [_gzip_then_close], indirect=True)
def test_a_compressed_answer_and_connection_close(scripted: Scripted) -> None:
    assert _ask(scripted.url, times=2) == ["hi there"] * 2
    assert scripted.connections == 2  # the server said close: a new connection each time


def _until_close(n: int) -> tuple[bytes, bool]:
    return b"HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n\r\n" + _BODY, True


@pytest.mark.parametrize("scripted", [_until_close], indirect=True)
def test_a_body_that_ends_with_the_connection(scripted: Scripted) -> None:
    assert _ask(scripted.url, times=2) == ["hi there"] * 2


def _ok_then_close(n: int) -> tuple[bytes, bool]:
    return OK, True  # kept alive by its headers, yet closed by the server when idle


@pytest.mark.parametrize("scripted", [_ok_then_close], indirect=True)
def test_an_idle_connection_the_server_closed_is_not_a_failure(scripted: Scripted) -> None:
    assert _ask(scripted.url, times=3) == ["hi there"] * 3
    assert len(scripted.requests) == 3 and scripted.connections == 3


def test_a_reused_connection_closed_before_any_answer_is_sent_again() -> None:
    """The race the peek cannot see: the server closes as the call is written."""
    answers = iter([(OK, False), (b"", True), (OK, False)])
    server = Scripted(lambda n: next(answers))
    with server.serve() as running:
        assert _ask(running.url, times=2) == ["hi there"] * 2
        assert len(running.requests) == 3 and running.connections == 2


def _rate_limited(n: int) -> tuple[bytes, bool]:
    body = b'{"error": {"message": "slow down"}}'
    head = b"HTTP/1.1 429 Too Many Requests\r\nretry-after: 7\r\nContent-Length: %d\r\n\r\n"
    return head % len(body) + body, False


@pytest.mark.parametrize("scripted", [_rate_limited], indirect=True)
def test_an_error_status_keeps_its_headers(scripted: Scripted) -> None:
    with pytest.raises(RateLimitError, match="slow down") as caught:
        _ask(scripted.url)
    assert caught.value.retry_after == 7.0


def _redirect(n: int) -> tuple[bytes, bool]:
    return b"HTTP/1.1 308 Permanent Redirect\r\nLocation: https://h/v1\r\n\r\n", True


@pytest.mark.parametrize("scripted", [_redirect], indirect=True)
def test_a_redirect_says_where_to_point_base_url(scripted: Scripted) -> None:
    with pytest.raises(ProviderError, match="HTTP 308 .*redirect to https://h/v1") as caught:
        _ask(scripted.url)
    assert not caught.value.retryable and caught.value.status == 308


def _not_http(n: int) -> tuple[bytes, bool]:
    return b"SSH-2.0-OpenSSH_9.6\r\n\r\n", False  # kept open: the parser must say it


@pytest.mark.parametrize("scripted", [_not_http], indirect=True)
def test_an_answer_that_is_not_http(scripted: Scripted) -> None:
    with pytest.raises(ProviderError, match="Could not reach provider 'wire'") as caught:
        _ask(scripted.url)
    assert caught.value.retryable and "NotHTTPError" in str(caught.value)


def test_a_refused_connection() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(ProviderError, match="Could not reach provider 'wire'") as caught:
        _ask(f"http://127.0.0.1:{port}/v1")
    assert caught.value.retryable and "ConnectionRefusedError" in str(caught.value)


def test_a_cancelled_call_does_not_leave_its_connection_for_the_next() -> None:
    release = threading.Event()

    def answer(n: int) -> tuple[bytes, bool]:
        if n == 0:
            release.wait(10)  # the first call is cancelled meanwhile
            return b"HTTP/1.1 200 OK\r\nContent-Length: 7\r\n\r\nlate!!!", False
        return OK, False

    server = Scripted(answer)
    with server.serve() as running:
        endpoint = WireEndpoint(running.url + "/chat/completions", {})

        async def run() -> bytes:
            first = asyncio.ensure_future(endpoint.post(b"{}"))
            for _ in range(3000):  # cancelled once the server holds its request
                if running.requests:
                    break
                await asyncio.sleep(0.01)
            assert running.requests, "the server never got the first call"
            first.cancel()
            with pytest.raises(asyncio.CancelledError):
                await first
            release.set()
            return (await endpoint.post(b"{}")).body

        assert asyncio.run(run()) == _BODY  # not the first call's late answer
        assert running.connections == 2
        endpoint.close()


def test_what_the_lean_client_does_not_take() -> None:
    assert wire_endpoint("https://api.example.com/v1/x", {}) is None
    assert wire_endpoint("http://u:p@h/v1/x", {}) is None
    with pytest.raises(ValueError, match="line break"):
        WireEndpoint("http://h/v1/x", {"X-Bad": "a\r\nInjected: 1"})
    assert wire_endpoint("http://h/v1/x", {"X-Bad": "a\r\nInjected: 1"}) is None


@pytest.mark.parametrize("scripted", [_chunked], indirect=True)
def test_qualspec_http_client_aiohttp_sends_plain_http_through_aiohttp(
    scripted: Scripted, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("QUALSPEC_HTTP_CLIENT", "aiohttp")
    assert _ask(scripted.url, times=2) == ["hi there"] * 2
    assert b"aiohttp" in scripted.requests[0]  # aiohttp's User-Agent
