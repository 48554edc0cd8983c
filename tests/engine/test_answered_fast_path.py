"""The answered call's fast path (issue 20, throughput): every shortcut gives what the
general path gives.

* Timeouts on one timer per engine (not one ``asyncio.timeout`` per call): a call past its
  deadline ends with the same ``ProviderTimeoutError``, calls with other timeouts each at
  their own, a cancellation from outside stays one, and a second event loop works.
* An answer and its cache entry queued to the recorder as one item (``Recorder.answer``)
  store the same rows as ``response`` then ``cache``.
* A call's record is made straight from its outcome (``answered_record``), equal to what
  ``ResponseRecord.from_reply`` makes of its Reply.
* The HTTP client reuses its session without a coroutine per call, and still makes a
  fresh one for a new event loop; a refused connection is still a retryable ProviderError.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest

from qualspec import ExecuteOptions, RetryPolicy
from qualspec.engine import CallEngine, Recorder, WorkItem
from qualspec.engine._reply import Outcome, answered_record
from qualspec.errors import ProviderError
from qualspec.providers import ChatRequest, ChatResponse, Message, Provider, ProviderPool
from qualspec.spec import ProviderConfig
from qualspec.store import CacheEntry, ResponseRecord, Store
from qualspec.testing import FakeServer

ONCE = RetryPolicy(max_attempts=1)


class Sleepy:
    """A provider whose answer takes ``seconds`` (per model name: ``slow`` or ``fast``)."""

    default_concurrency = 8
    temperature_range = (0.0, 2.0)

    def __init__(self, name: str, seconds: float) -> None:
        self.name = name
        self.endpoint = f"sleepy:{name}"
        self.seconds = seconds

    async def complete(self, request: ChatRequest) -> ChatResponse:
        await asyncio.sleep(self.seconds)
        return ChatResponse(text=f"answer of {self.name}")

    async def aclose(self) -> None:
        pass


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    s = Store.open(f"sqlite:///{tmp_path / 'q.db'}")
    yield s
    s.close()


def _openai(name: str, base_url: str) -> Provider:
    return ProviderPool({name: ProviderConfig(type="openai", base_url=base_url)}).get(name)


def _request() -> ChatRequest:
    return ChatRequest(model="m", messages=(Message("user", "hi"),))


def test_a_call_past_its_timeout_fails_as_with_asyncio_timeout(store: Store) -> None:
    engine = CallEngine(store=store, options=ExecuteOptions(retry=ONCE, timeout=0.2), prices=None)

    async def main() -> tuple[Any, Any, Any]:
        slow, fast = Sleepy("slow", 30.0), Sleepy("fast", 0.01)
        # several at once: each is timed by the one timer, the fast ones answer
        return await asyncio.gather(
            engine.call(slow, _request()),
            engine.call(fast, _request()),
            engine.call(slow, _request()),
        )

    first, answered, second = asyncio.run(main())
    for out in (first, second):
        assert out.response is None
        assert out.error == "no answer within 0.2s (raise --timeout)"
    assert answered.response is not None and answered.error is None


def test_each_endpoint_keeps_its_own_timeout(store: Store) -> None:
    """A suite's shorter provider timeout, given after a longer call started, fires first
    (the one timer is set earlier for it)."""
    engine = CallEngine(store=store, options=ExecuteOptions(retry=ONCE, timeout=5.0), prices=None)
    with FakeServer(latency=1.0) as slowish, FakeServer(latency=30.0) as hung:
        configs = {
            "slowish": ProviderConfig(type="openai", base_url=slowish.base_url),
            "hung": ProviderConfig(type="openai", base_url=hung.base_url, timeout=0.2),
        }
        providers = engine.providers(["slowish", "hung"], configs)

        async def main() -> list[tuple[str, str | None]]:
            done: list[tuple[str, str | None]] = []

            async def one(name: str, delay: float) -> None:
                await asyncio.sleep(delay)
                out = await engine.call(providers[name], _request())
                done.append((name, out.error))

            try:
                await asyncio.gather(one("slowish", 0.0), one("hung", 0.05))
            finally:
                await engine.aclose()
            return done

        done = asyncio.run(main())
    assert [name for name, _ in done] == ["hung", "slowish"]
    (_, hung_error), (_, slowish_error) = done
    assert hung_error == "no answer within 0.2s (raise --timeout)"
    assert slowish_error is None


def test_a_cancellation_from_outside_stays_a_cancellation(store: Store) -> None:
    engine = CallEngine(store=store, options=ExecuteOptions(retry=ONCE, timeout=30), prices=None)

    async def main() -> None:
        task = asyncio.ensure_future(engine.call(Sleepy("slow", 30.0), _request()))
        await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())


def test_timeouts_work_in_a_second_event_loop(store: Store) -> None:
    """A loop that ended with a call in flight leaves nothing that stops the next loop's
    timeouts."""
    engine = CallEngine(store=store, options=ExecuteOptions(retry=ONCE, timeout=0.2), prices=None)

    async def abandon() -> None:
        task = asyncio.ensure_future(engine.call(Sleepy("slow", 30.0), _request()))
        await asyncio.sleep(0.05)
        task.cancel()

    asyncio.run(abandon())
    out = asyncio.run(engine.call(Sleepy("slow", 30.0), _request()))
    assert out.error == "no answer within 0.2s (raise --timeout)"


def _record(key: str) -> ResponseRecord:
    return ResponseRecord(
        key=key,
        candidate="c",
        role=None,
        scenario="s",
        input_id="r1",
        temperature=0.0,
        effective_temperature=0.0,
        run_index=0,
        provider="p",
        model="m",
        text="an answer",
        finish_reason="stop",
        input_tokens=3,
        output_tokens=2,
        latency_s=0.01,
        cost_usd=None,
        attempts=1,
        error=None,
        created_at=datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC),
        call_key=f"call-{key}",
        input_values={"q": "question"},
    )


def _entry(key: str) -> CacheEntry:
    when = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    return CacheEntry(
        key=f"call-{key}", kind="candidate", provider="p", model="m", text="an answer",
        finish_reason="stop", input_tokens=3, output_tokens=2, effective_temperature=0.0,
        created_at=when,
    )  # fmt: skip


def _stored(tmp_path: Path, name: str, together: bool) -> tuple[list[Any], Any]:
    """The responses and cache entry a run stores for one answer, queued one way."""
    store = Store.open(f"sqlite:///{tmp_path / name}")
    try:
        run_id = store.create_run("suite", "hash", {})
        committed: list[str] = []

        async def main() -> None:
            async with Recorder(store, run_id) as recorder:
                if together:
                    recorder.answer(_record("k"), _entry("k"), lambda: committed.append("k"))
                else:
                    recorder.response(_record("k"), lambda: committed.append("k"))
                    recorder.cache(_entry("k"))

        asyncio.run(main())
        assert committed == ["k"]
        rows = [replace(r, input_hash=None) for r in store.load_run(run_id).responses]
        return rows, store.cache_get_many(["call-k"])
    finally:
        store.close()


def test_an_answer_with_its_entry_stores_what_response_then_cache_store(tmp_path: Path) -> None:
    general = _stored(tmp_path, "general.db", together=False)
    fast = _stored(tmp_path, "fast.db", together=True)
    assert fast == general
    assert len(fast[0]) == 1 and set(fast[1]) == {"call-k"}


def test_the_http_session_is_reused_and_made_afresh_for_a_new_loop() -> None:
    with FakeServer() as server:
        provider = _openai("fake", server.base_url)

        async def twice() -> list[str]:
            out = [(await provider.complete(_request())).text for _ in range(2)]
            return [t or "" for t in out]

        first = asyncio.run(twice())
        second = asyncio.run(twice())  # another loop: another session
        asyncio.run(provider.aclose())
    assert all(first) and all(second)


def test_a_refused_connection_is_still_a_retryable_provider_error() -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    provider = _openai("gone", f"http://127.0.0.1:{port}/v1")

    async def main() -> None:
        try:
            await provider.complete(_request())
        finally:
            await provider.aclose()

    with pytest.raises(ProviderError, match="Could not reach provider 'gone'") as caught:
        asyncio.run(main())
    assert caught.value.retryable


def _item(values: Any) -> WorkItem:
    return WorkItem(
        key="cell", call_key="call", candidate="c", role="expert", scenario="s",
        input_id="r1", temperature=0.7, run_index=2, provider="p", model="m",
        messages=(Message("user", "hi"),), params={}, criteria=(), input_values=values,
        kind="reference",
    )  # fmt: skip


@pytest.mark.parametrize("values", [None, {"q": "question"}, MappingProxyType({"q": "x"})])
@pytest.mark.parametrize(
    "out",
    [
        Outcome(
            ChatResponse(text="an answer", finish_reason="stop", input_tokens=3, output_tokens=2),
            attempts=2, latency=0.25, error=None, cost=0.001, queue=0.5, served_by="http://r1",
        ),
        Outcome(None, attempts=3, latency=1.5, error="HTTP 500: down", cost=None, queue=0.1),
    ],
    ids=["answered", "failed"],
)  # fmt: skip
def test_the_answered_record_is_the_general_paths(out: Outcome, values: Any) -> None:
    """``answered_record`` (the executor's path) makes what ``ResponseRecord.from_reply``
    makes of the call's Reply (the general path, as ``Session.complete`` records it)."""
    item = _item(values)
    fast = answered_record(out, item, "cache-key", 0.65, {"scenario_prompt:1": 4})
    general = ResponseRecord.from_reply(
        out.reply(key="cache-key", effective_temperature=0.65),
        key=item.key, candidate=item.candidate, provider=item.provider, model=item.model,
        scenario=item.scenario, role=item.role, input_id=item.input_id,
        temperature=item.temperature, run_index=item.run_index, kind=item.kind,
        call_key="cache-key", prompt_versions={"scenario_prompt:1": 4},
        created_at=fast.created_at, input_values=item.input_values,
    )  # fmt: skip
    assert fast == general
    assert type(fast.input_values) is type(general.input_values)
