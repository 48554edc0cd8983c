"""The fake server itself: answers, faults, counters, and the subprocess mode."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import urllib.error
import urllib.request
from typing import Any

import pytest

from qualspec.testing import FakeServer


def _post(url: str, body: Any, headers: dict[str, str] | None = None) -> tuple[int, bytes]:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    request = urllib.request.Request(
        url, data=data, headers={"Content-Type": "application/json", **(headers or {})}
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def _chat(text: str, **extra: Any) -> dict[str, Any]:
    return {"model": "m", "messages": [{"role": "user", "content": text}], **extra}


def test_echo_and_judge_answers(server: FakeServer) -> None:
    status, raw = _post(f"{server.base_url}/chat/completions", _chat("x" * 500))
    assert status == 200
    answer = json.loads(raw)["choices"][0]["message"]["content"]
    assert answer == "Answer to: " + "x" * 200
    _, raw = _post(f"{server.base_url}/chat/completions", _chat("Give a SCORE from 0 to 10"))
    judged = json.loads(json.loads(raw)["choices"][0]["message"]["content"])
    assert judged["score"] == 8
    server.judge_reply = '{"score": 3, "reasoning": "weak"}'
    try:
        _, raw = _post(f"{server.base_url}/chat/completions", _chat("As a judge, rate this"))
    finally:
        server.reset()
        server.judge_reply = '{"score": 8, "reasoning": "The answer meets the criterion."}'
    assert json.loads(json.loads(raw)["choices"][0]["message"]["content"])["score"] == 3


def test_counters_and_fault_queue(server: FakeServer) -> None:
    url = f"{server.base_url}/chat/completions"
    server.fail_next(2, status=429, retry_after=5)
    server.malformed_next(1)
    first = _post(url, _chat("a"))
    second = _post(url, _chat("a"))
    third = _post(url, _chat("a"))
    fourth = _post(url, _chat("a"))
    assert first[0] == second[0] == 429
    assert third[0] == 200
    with pytest.raises(ValueError):
        json.loads(third[1])
    assert fourth[0] == 200 and json.loads(fourth[1])["choices"]
    _post(f"{server.base_url}/messages", _chat("b"))
    assert server.calls == 5
    assert server.calls_by_path == {"/v1/chat/completions": 4, "/v1/messages": 1}
    assert len(server.request_log) == 5


def test_fault_mode_applies_to_every_call(server: FakeServer) -> None:
    server.set_fault_mode("fail", status=503)
    url = f"{server.base_url}/chat/completions"
    assert [_post(url, _chat("a"))[0] for _ in range(3)] == [503, 503, 503]
    server.set_fault_mode(None)
    assert _post(url, _chat("a"))[0] == 200


def test_hang_is_abandoned_by_the_client(server: FakeServer) -> None:
    import aiohttp

    server.hang_next(1)

    async def go() -> int:
        async with aiohttp.ClientSession() as session:
            with pytest.raises(asyncio.TimeoutError):
                async with asyncio.timeout(0.3):
                    await session.post(f"{server.base_url}/chat/completions", json=_chat("h"))
            async with session.post(
                f"{server.base_url}/chat/completions", json=_chat("after")
            ) as response:
                return response.status

    # the hung call was given up by the client, and the server answered the next one while
    # the first still hangs (hang_seconds is far past this test's life)
    assert asyncio.run(go()) == 200
    assert server.calls == 2
    assert [status for _, status, _ in server.exchanges] == [None, 200]


def test_latency_and_concurrency(server: FakeServer) -> None:
    """100 requests started together are answered together, each after the latency: the
    server holds every answer until all 100 have arrived (``hold_responses``): a server that
    answered one request at a time would send its first answer (at ``hold_timeout``) before
    the others arrived. Orderings and counts, not seconds: the machine's speed cannot fail it."""
    import aiohttp

    server.latency = 0.1
    server.hold_responses(100)

    async def go() -> list[int]:
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:

            async def one(i: int) -> int:
                async with session.post(
                    f"{server.base_url}/chat/completions", json=_chat(str(i))
                ) as response:
                    await response.read()
                    return response.status

            return await asyncio.gather(*(one(i) for i in range(100)))

    assert asyncio.run(go()) == [200] * 100
    exchanges = server.exchanges
    assert len(exchanges) == 100
    last_arrival = max(arrived for arrived, _, _ in exchanges)
    # every answer went out after the last request arrived: all 100 were open at once
    assert all(sent is not None and sent >= last_arrival for _, _, sent in exchanges)
    # and each waited the latency (a sleep never ends early, however loaded the machine)
    assert all(sent - arrived >= 0.09 for arrived, _, sent in exchanges if sent is not None)
    # the latencies overlapped: more than one request was inside its wait at once
    assert server.max_in_flight > 1


def test_require_key(server: FakeServer) -> None:
    server.require_key = "k1"
    url = f"{server.base_url}/chat/completions"
    assert _post(url, _chat("a"))[0] == 401
    assert _post(url, _chat("a"), {"Authorization": "Bearer k1"})[0] == 200
    assert _post(f"{server.base_url}/messages", _chat("a"), {"x-api-key": "k1"})[0] == 200


def test_subprocess_mode_with_stats_and_control() -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "qualspec.testing.fakeserver", "--port", "0", "--latency", "0"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        base_url = process.stdout.readline().strip()
        assert base_url.startswith("http://127.0.0.1:") and base_url.endswith("/v1")
        root = base_url[: -len("/v1")]
        assert _post(f"{base_url}/chat/completions", _chat("a"))[0] == 200
        _post(f"{root}/_control", {"fail_next": {"n": 1, "status": 500}})
        assert _post(f"{base_url}/chat/completions", _chat("a"))[0] == 500
        with urllib.request.urlopen(f"{root}/_stats", timeout=10) as response:
            stats = json.loads(response.read())
        assert stats["calls"] == 2
    finally:
        process.terminate()
        assert process.wait(timeout=10) == 0
        if process.stdout is not None:
            process.stdout.close()
