"""A fake OpenAI- and Anthropic-compatible HTTP server for tests and benchmarks.

It is a real aiohttp server on 127.0.0.1 in a background thread, with switchable faults
(HTTP errors with ``Retry-After``, hangs, malformed bodies), latency and call counters.
Answers are deterministic: ``"Answer to: <last user message>"`` (or what ``answer``, also
named ``answer_reply``, returns for the request body), or the judge reply
(``{"score": 8, ...}``) when structured output is requested or the prompt mentions a
score or a judge. By default an all-criteria judge gets 8 for every criterion, and a
comparison 8 for the first answer shown (the winner) and 6 for the others.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING, Any

from qualspec.testing._fake_replies import (
    DEFAULT_JUDGE_REPLY,
    JudgeReply,
    LogprobsReply,
    _error_body,
    _last_user_text,
    judge_text,
    refused_format,
    reply_payload,
)

if TYPE_CHECKING:
    from aiohttp import web

__all__ = ["DEFAULT_JUDGE_REPLY", "FakeServer"]

HANG_SECONDS = 3600.0
MALFORMED_BODY = b'{"id": "chatcmpl-fake", "choices": [{"message": {"content": "trunc'


@dataclass(frozen=True, slots=True)
class _Fault:
    kind: str  # "fail" | "hang" | "malformed"
    status: int = 500
    retry_after: float | str | None = None


class FakeServer:
    """A real local HTTP server speaking ``/v1/chat/completions`` and ``/v1/messages``.

    Example::

        with FakeServer(latency=0.05) as server:
            server.fail_next(2, status=429, retry_after=1)
            # answers by model: FakeServer(answer=lambda body: f"I am {body['model']}")
            ... # point a provider at server.base_url
            assert server.calls == 3

    Settings and faults may be changed from any thread while it runs.
    """

    def __init__(
        self,
        *,
        latency: float = 0.0,
        require_key: str | None = None,
        judge_reply: JudgeReply = DEFAULT_JUDGE_REPLY,
        host: str = "127.0.0.1",
        port: int = 0,
        log_requests: bool = True,
        response_formats: tuple[str, ...] | None = None,
        answer: Callable[[dict[str, Any]], str] | None = None,
        answer_reply: Callable[[dict[str, Any]], str] | None = None,
        logprobs: LogprobsReply | None = None,
        refuse_logprobs: bool = False,
    ) -> None:
        self.latency = latency
        # the answer to a call that is not a judge's, from its request body (temperature,
        # messages, ...); None: "Answer to: <last user message>". Two branches of issue 9
        # named it differently: ``answer_reply`` is the same setting.
        self.answer = answer if answer is not None else answer_reply
        # the response_format types accepted (None: any); others get llama.cpp's 500
        self.response_formats = response_formats
        # choices[0].logprobs of an OpenAI answer to a request with logprobs: true, from
        # (body, text); None: none are sent (an endpoint that ignores the parameter)
        self.logprobs = logprobs
        # a request with logprobs/top_logprobs gets HTTP 400 (as OpenAI's o1 models answer)
        self.refuse_logprobs = refuse_logprobs
        self.require_key = require_key
        self.judge_reply: JudgeReply = judge_reply
        self.log_requests = log_requests
        self.hang_seconds = HANG_SECONDS
        self._host = host
        self._port = port
        self._lock = threading.Lock()
        self._faults: deque[_Fault] = deque()
        self._mode: _Fault | None = None
        self._calls = 0
        self._in_flight = 0
        self._max_in_flight = 0
        self._by_path: Counter[str] = Counter()
        self._log: list[tuple[float, dict[str, str], Any]] = []
        self._exchanges: list[list[Any]] = []  # [arrived, status, sent]
        self._hold_until = 0
        self.hold_timeout = 60.0
        self._hang_after: int | None = None
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: web.AppRunner | None = None

    # ---- lifecycle -------------------------------------------------------------------

    @property
    def port(self) -> int:
        """The bound TCP port (after :meth:`start`)."""
        if self._thread is None:
            raise RuntimeError("FakeServer is not running: call start() or use it as `with`")
        return self._port

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1``: the base URL to give a provider."""
        return f"http://{self._host}:{self.port}/v1"

    def start(self) -> FakeServer:
        """Start serving in a background thread; returns self."""
        if self._thread is not None:
            return self
        ready = threading.Event()
        errors: list[BaseException] = []
        self._thread = threading.Thread(
            target=self._serve, args=(ready, errors), name="qualspec-fakeserver", daemon=True
        )
        self._thread.start()
        ready.wait()
        if errors:
            self._thread.join()
            self._thread = None
            raise errors[0]
        return self

    def stop(self) -> None:
        """Stop the server and its thread (hung requests are cancelled)."""
        thread, loop = self._thread, self._loop
        if thread is None or loop is None:
            return
        asyncio.run_coroutine_threadsafe(self._shutdown(), loop).result(timeout=30)
        thread.join(timeout=30)
        self._thread = None
        self._loop = None

    def __enter__(self) -> FakeServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def _serve(self, ready: threading.Event, errors: list[BaseException]) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        try:
            loop.run_until_complete(self._startup())
        except BaseException as exc:  # reported to start()
            errors.append(exc)
            ready.set()
            loop.close()
            return
        ready.set()
        try:
            loop.run_forever()
        finally:
            loop.close()

    async def _startup(self) -> None:
        from aiohttp import web

        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_post("/v1/chat/completions", self._route)
        app.router.add_post("/v1/messages", self._route)
        app.router.add_get("/_stats", self._stats)
        app.router.add_post("/_control", self._control)
        runner = web.AppRunner(
            app, access_log=None, handler_cancellation=True, shutdown_timeout=0.5
        )
        await runner.setup()
        site = web.TCPSite(runner, self._host, self._port, backlog=1024, reuse_address=True)
        await site.start()
        self._runner = runner
        self._port = int(runner.addresses[0][1])

    async def _shutdown(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        asyncio.get_running_loop().call_soon(asyncio.get_running_loop().stop)

    # ---- faults and counters -------------------------------------------------------------

    def fail_next(
        self, n: int = 1, status: int = 500, retry_after: float | str | None = None
    ) -> None:
        """Answer the next ``n`` requests with HTTP ``status`` (and ``Retry-After``)."""
        self._queue(n, _Fault("fail", status, retry_after))

    def hang_next(self, n: int = 1) -> None:
        """Let the next ``n`` requests hang (``hang_seconds``, far past any timeout)."""
        self._queue(n, _Fault("hang"))

    def malformed_next(self, n: int = 1) -> None:
        """Answer the next ``n`` requests with 200 and a truncated JSON body."""
        self._queue(n, _Fault("malformed"))

    def set_fault_mode(
        self,
        kind: str | None,
        *,
        status: int = 500,
        retry_after: float | str | None = None,
    ) -> None:
        """Apply a fault to every call: ``"fail"``, ``"hang"``, ``"malformed"``, or ``None``."""
        if kind not in (None, "fail", "hang", "malformed"):
            raise ValueError(f"unknown fault kind {kind!r}: use fail, hang, malformed or None")
        with self._lock:
            self._mode = None if kind is None else _Fault(kind, status, retry_after)

    def clear_faults(self) -> None:
        """Drop queued faults and the fault mode."""
        with self._lock:
            self._faults.clear()
            self._mode = None

    def reset(self) -> None:
        """Clear faults, counters and the request log."""
        with self._lock:
            self._faults.clear()
            self._mode = None
            self._calls = 0
            self._max_in_flight = 0
            self._by_path.clear()
            self._log.clear()
            self._exchanges.clear()
            self._hold_until = 0
            self._hang_after = None

    def _queue(self, n: int, fault: _Fault) -> None:
        with self._lock:
            self._faults.extend([fault] * n)

    @property
    def calls(self) -> int:
        """Requests received on the model endpoints (faulted ones included)."""
        with self._lock:
            return self._calls

    @property
    def max_in_flight(self) -> int:
        """The most requests the server was answering at one moment."""
        with self._lock:
            return self._max_in_flight

    @property
    def calls_by_path(self) -> dict[str, int]:
        """Requests received per path, e.g. ``{"/v1/chat/completions": 3}``."""
        with self._lock:
            return dict(self._by_path)

    @property
    def request_log(self) -> list[tuple[float, dict[str, str], Any]]:
        """``(time.time(), headers, json body)`` for each request, oldest first."""
        with self._lock:
            return list(self._log)

    @property
    def exchanges(self) -> list[tuple[float, int | None, float | None]]:
        """``(arrived, status, sent)`` for each model request, in the order they arrived.

        Times are the server's own ``time.monotonic()``: ``arrived`` when the request
        reached the server, ``sent`` when its response was handed to the connection (so a
        request a client starts after reading that response arrives later than ``sent``).
        ``status`` and ``sent`` are None while unanswered, and stay None for a request
        whose client went away first. Empty with ``log_requests=False``.
        """
        with self._lock:
            return [(a, status, sent) for a, status, sent in self._exchanges]

    def hang_after(self, n: int | None) -> None:
        """Answer the first ``n`` model requests (counted by ``calls``, from now on as
        from the start), then let every later one hang (``hang_seconds``): a run stops
        at a known point, whatever the machine's speed (a kill mid-run). None: off."""
        with self._lock:
            self._hang_after = n

    def hold_responses(self, n: int) -> None:
        """Answer nothing until ``n`` model requests have arrived (counted by ``calls``).

        Requests a client starts together then all arrive before any answer is sent, so
        a test can tell them from requests started after an answer (see ``exchanges``).
        A held answer goes out anyway after ``hold_timeout`` seconds.
        """
        with self._lock:
            self._hold_until = n

    # ---- handlers ------------------------------------------------------------------------

    async def _route(self, request: web.Request) -> web.StreamResponse:
        entry: list[Any] = [time.monotonic(), None, None]
        if self.log_requests:
            with self._lock:
                self._exchanges.append(entry)
        response = await self._handle(request)
        deadline = entry[0] + self.hold_timeout
        while self.calls < self._hold_until and time.monotonic() < deadline:
            await asyncio.sleep(0.005)
        with self._lock:
            entry[1:] = [response.status, time.monotonic()]
        await response.prepare(request)
        await response.write_eof()
        return response

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        raw = await request.read()
        with self._lock:
            self._in_flight += 1
            self._max_in_flight = max(self._max_in_flight, self._in_flight)
        try:
            return await self._respond(request, raw)
        finally:
            with self._lock:
                self._in_flight -= 1

    async def _respond(self, request: web.Request, raw: bytes) -> web.StreamResponse:
        from aiohttp import web

        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        key_ok = self.require_key is None or self._key_ok(request)
        with self._lock:
            self._calls += 1
            self._by_path[request.path] += 1
            if self.log_requests:
                self._log.append((time.time(), dict(request.headers), body))
            fault = None
            if key_ok:
                fault = self._faults.popleft() if self._faults else self._mode
                if self._hang_after is not None and self._calls > self._hang_after:
                    fault = _Fault("hang")
        if self.latency > 0:
            await asyncio.sleep(self.latency)
        if not key_ok:
            return web.Response(status=401, body=_error_body(401), content_type="application/json")
        if fault is not None:
            if fault.kind == "hang":
                await asyncio.sleep(self.hang_seconds)
            elif fault.kind == "malformed":
                return web.Response(body=MALFORMED_BODY, content_type="application/json")
            else:
                headers = {}
                if fault.retry_after is not None:
                    headers["Retry-After"] = str(fault.retry_after)
                return web.Response(
                    status=fault.status,
                    body=_error_body(fault.status),
                    headers=headers,
                    content_type="application/json",
                )
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            return web.Response(status=400, body=_error_body(400), content_type="application/json")
        refused = self._refused_format(body)
        if refused is not None:
            return web.Response(
                status=500,
                body=json.dumps({"error": {"message": refused, "type": "internal_server_error"}}),
                content_type="application/json",
            )
        if self.refuse_logprobs and ("logprobs" in body or "top_logprobs" in body):
            message = "logprobs is not supported with this model."  # OpenAI's o1 answer
            return web.Response(
                status=400,
                body=json.dumps({"error": {"message": message, "type": "invalid_request_error"}}),
                content_type="application/json",
            )
        anthropic = request.path.endswith("/messages")
        payload = self._answer(body, anthropic)
        return web.Response(body=json.dumps(payload).encode(), content_type="application/json")

    def _refused_format(self, body: dict[str, Any]) -> str | None:
        """llama.cpp's server message for a response_format type it does not take."""
        return refused_format(self.response_formats, body)

    def _key_ok(self, request: web.Request) -> bool:
        auth = request.headers.get("Authorization", "")
        return auth == f"Bearer {self.require_key}" or (
            request.headers.get("x-api-key") == self.require_key
        )

    def _judge_text(self, body: dict[str, Any]) -> str:
        return judge_text(self.judge_reply, body)

    def _answer(self, body: dict[str, Any], anthropic: bool) -> dict[str, Any]:
        last = _last_user_text(body.get("messages"))
        structured = "tools" in body if anthropic else "response_format" in body
        lowered = last.lower()
        judging = structured or "score" in lowered or "judge" in lowered
        if judging:
            text = self._judge_text(body)
        elif self.answer is not None:
            text = self.answer(body)
        else:
            text = f"Answer to: {last[:200]}"
        return reply_payload(
            body, text, anthropic=anthropic, structured=structured, logprobs=self.logprobs
        )

    async def _stats(self, request: web.Request) -> web.StreamResponse:
        from aiohttp import web

        return web.json_response({"calls": self.calls, "calls_by_path": self.calls_by_path})

    async def _control(self, request: web.Request) -> web.StreamResponse:
        """Change settings from another process: ``{"latency": 0.1, "fail_next": {...}}``."""
        from aiohttp import web

        try:
            data = json.loads(await request.read())
            if data.get("reset"):  # first: the other settings apply after it
                self.reset()
            if "latency" in data:
                self.latency = float(data["latency"])
            if "fail_next" in data:
                self.fail_next(**data["fail_next"])
            if "hang_next" in data:
                self.hang_next(int(data["hang_next"]))
            if "malformed_next" in data:
                self.malformed_next(int(data["malformed_next"]))
            if "hang_after" in data:
                found = data["hang_after"]
                self.hang_after(None if found is None else int(found))
            if "fault_mode" in data:
                mode = data["fault_mode"]
                if isinstance(mode, dict):
                    self.set_fault_mode(mode.pop("kind"), **mode)
                else:
                    self.set_fault_mode(mode)
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            return web.json_response({"error": str(exc)}, status=400)
        return web.json_response({"ok": True})
