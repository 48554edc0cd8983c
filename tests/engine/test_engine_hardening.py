"""Engine hardening (issue 7): cached judgment tokens, the judge cache read off the event
loop, the judge temperature clamp, scrubbed secrets, URL credentials, empty answers and no
call after a 401. Against the in-process fake server."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from qualspec import Candidate, Evaluation, ExecuteOptions, RetryPolicy, Scenario
from qualspec.engine import CallEngine, execute_plan, expand
from qualspec.errors import AuthenticationError
from qualspec.providers import ChatRequest, ChatResponse, Message
from qualspec.spec import ProviderConfig, load_evaluation
from qualspec.store import CacheEntry, Store
from qualspec.testing import FakeServer

FAST = RetryPolicy(max_attempts=3, base_delay=0.01, max_delay=0.02)
KEY = "sk-hardening-0123456789abcdef"


@pytest.fixture
def server() -> Iterator[FakeServer]:
    with FakeServer() as srv:
        yield srv


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    s = Store.open(f"sqlite:///{tmp_path / 'q.db'}")
    yield s
    s.close()


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_KEY", KEY)


def _suite(
    tmp_path: Path,
    base_url: str,
    *,
    n_inputs: int = 1,
    provider_type: str = "openai",
    judge: Any = "fake/judge",
    api_key_env: str | None = "FAKE_KEY",
):  # type: ignore[no-untyped-def]
    evaluation = Evaluation(
        name="hardening",
        candidates=[Candidate(name="c", model="fake/model-a")],
        scenarios=[
            Scenario(
                name="s",
                prompt="question {{ i }}",
                criteria=["is an answer"],
                inputs=[{"i": i} for i in range(n_inputs)],
            )
        ],
        judge=judge,
        providers={
            "fake": ProviderConfig(type=provider_type, base_url=base_url, api_key_env=api_key_env)  # type: ignore[arg-type]
        },
    )
    return load_evaluation(evaluation, tmp_path)


def _run(suite, store, prices: Path | None = None, **opts):  # type: ignore[no-untyped-def]
    options = ExecuteOptions(retry=opts.pop("retry", FAST), **opts)
    return execute_plan(
        suite,
        expand(suite),
        store=store,
        options=options,
        argv=[],
        prices_path=None if prices is None else str(prices),
    )


# ---------------------------------------------------------------- 8: cached judgment tokens


def test_cached_judgments_record_their_tokens_at_no_cost(
    server: FakeServer, store: Store, tmp_path: Path
) -> None:
    prices = tmp_path / "prices.json"
    prices.write_text(
        json.dumps(
            {
                "fake/model-a": {"input": 1000.0, "output": 1000.0},
                "fake/judge": {"input": 1000.0, "output": 1000.0},
            }
        )
    )
    suite = _suite(tmp_path, server.base_url, n_inputs=2)
    first = _run(suite, store, prices, max_concurrency=1)
    calls = server.calls
    second = _run(suite, store, prices, max_concurrency=1)
    assert server.calls == calls  # everything came from the cache

    def by_key(run: Any, kind: str) -> dict[str, Any]:
        rows = run.record.judgments if kind == "j" else run.record.responses
        return {(r.response_key if kind == "j" else r.key): r for r in rows}

    for kind in ("r", "j"):
        old, new = by_key(first, kind), by_key(second, kind)
        assert old.keys() == new.keys() and len(new) == 2
        for key, row in new.items():
            assert row.cached, (kind, key)
            assert row.input_tokens and row.input_tokens == old[key].input_tokens, (kind, key)
            assert row.output_tokens and row.output_tokens == old[key].output_tokens, (kind, key)
            assert row.cost_usd == 0.0, (kind, key)
            assert old[key].cost_usd and old[key].cost_usd > 0
    assert second.stats.cost_usd == 0.0
    assert second.stats.saved_usd == pytest.approx(first.stats.cost_usd)


# ---------------------------------------------------------------- 15: cache read off the loop


def _engine(store: Store) -> CallEngine:
    return CallEngine(store=store, options=ExecuteOptions(retry=FAST), prices=None)


def _entry(key: str, kind: str = "judge") -> CacheEntry:
    return CacheEntry(key=key, kind=kind, provider="p", model="m", text="cached", input_tokens=3)


def test_judge_cache_lookup_does_not_block_the_event_loop(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.cache_put_many([_entry("other")])  # the store holds judge entries
    entered, release = threading.Event(), threading.Event()
    seen: list[bool] = []
    real = store.cache_get_many

    def slow_read(keys: Any, *args: Any, **kwargs: Any) -> dict[str, CacheEntry]:
        entered.set()
        # released by the event loop: only possible if the loop is not the one waiting here
        seen.append(release.wait(timeout=5))
        return real(keys, *args, **kwargs)

    monkeypatch.setattr(store, "cache_get_many", slow_read)

    async def main() -> CacheEntry | None:
        engine = _engine(store)
        lookup = asyncio.ensure_future(engine.cache_get("judge", "other"))
        await asyncio.to_thread(entered.wait, 30)
        release.set()  # runs only while the read is in progress if the loop is free
        return await lookup

    found = asyncio.run(main())
    assert seen == [True], "the store was read on the event loop"
    assert found is not None and found.text == "cached"


def test_judge_cache_lookup_skips_the_store_when_it_held_no_entries_of_the_kind(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.cache_put_many([_entry("a-candidate", kind="candidate")])
    reads: list[Any] = []
    monkeypatch.setattr(store, "cache_get_many", lambda keys, *a, **k: reads.append(keys) or {})

    async def main() -> list[CacheEntry | None]:
        engine = _engine(store)
        return [await engine.cache_get("judge", f"k{i}") for i in range(5)]

    assert asyncio.run(main()) == [None] * 5
    assert reads == []


# ---------------------------------------------------------------- 17: judge temperature clamp


def test_judge_temperature_is_clamped_to_the_providers_range(
    server: FakeServer, store: Store, tmp_path: Path
) -> None:
    suite = _suite(
        tmp_path,
        server.base_url,
        provider_type="anthropic",
        judge={"model": "fake/judge", "params": {"temperature": 1.5}},
    )
    out = _run(suite, store, use_cache=False)
    (judgment,) = out.record.judgments
    assert judgment.error is None and judgment.score == 8
    bodies = [body for _t, _h, body in server.request_log]
    judge_bodies = [b for b in bodies if b.get("model") == "judge"]
    assert judge_bodies and all(b["temperature"] == 1.0 for b in judge_bodies), judge_bodies


# ---------------------------------------------------------------- 19: secrets that come back


class EchoingAnswers(FakeServer):
    """Answers quote the credentials the request carried (as some proxies do)."""

    def _answer(self, body: dict[str, Any], anthropic: bool) -> dict[str, Any]:
        payload = super()._answer(body, anthropic)
        echo = f" Your key is {self.last_auth}."
        if anthropic:
            payload["content"][0]["text"] += echo
        else:
            message = payload["choices"][0]["message"]
            if "score" not in message["content"]:
                message["content"] += echo
        return payload

    last_auth = ""

    async def _handle(self, request: Any) -> Any:
        self.last_auth = request.headers.get("Authorization", "") or request.headers.get(
            "x-api-key", ""
        )
        return await super()._handle(request)


def _all_text(store: Store, run_id: str) -> str:
    record = store.load_run(run_id)
    parts = [repr(record)]
    keys = {r.key for r in record.responses}
    parts.append(repr(store.cache_get_many(keys)))
    return "\n".join(parts)


def test_an_echoed_api_key_is_scrubbed_before_it_is_recorded(store: Store, tmp_path: Path) -> None:
    with EchoingAnswers() as echo:
        suite = _suite(tmp_path, echo.base_url, n_inputs=2)
        out = _run(suite, store, max_concurrency=1)
        assert any(KEY in h.get("Authorization", "") for _t, h, _b in echo.request_log)
    texts = [r.text or "" for r in out.record.responses]
    assert all("Your key is Bearer ***" in t for t in texts), texts
    assert all(r.error is None for r in out.record.responses)
    dump = _all_text(store, out.run_id)
    assert KEY not in dump
    # the cached answers too: a rerun serves them scrubbed
    again = _run(suite, store, max_concurrency=1)
    assert all(r.cached and KEY not in (r.text or "") for r in again.record.responses)


def test_a_key_in_the_base_url_query_reaches_no_error_text(store: Store, tmp_path: Path) -> None:
    from helpers_integration import free_port

    secret = "qk-0123456789secret"
    url = f"http://127.0.0.1:{free_port()}/v1?api-key={secret}"
    suite = _suite(tmp_path, url, api_key_env=None)
    out = _run(suite, store, retry=RetryPolicy(max_attempts=1), use_cache=False)
    (response,) = out.record.responses
    assert response.error and "Could not reach" in response.error
    assert secret not in repr(store.load_run(out.run_id))


def test_base_url_credentials_are_sent_as_basic_auth(
    server: FakeServer, store: Store, tmp_path: Path
) -> None:
    import base64

    url = server.base_url.replace("http://", "http://alice:s3cr3t-pass-word@")
    suite = _suite(tmp_path, url, api_key_env=None)
    out = _run(suite, store, use_cache=False)
    assert all(r.error is None for r in out.record.responses), out.record.responses
    expected = "Basic " + base64.b64encode(b"alice:s3cr3t-pass-word").decode()
    sent = {h.get("Authorization") for _t, h, _b in server.request_log}
    assert sent == {expected}
    assert "s3cr3t-pass-word" not in repr(store.load_run(out.run_id))


def test_base_url_credentials_and_an_api_key_are_a_config_error(
    server: FakeServer, store: Store, tmp_path: Path
) -> None:
    from qualspec.errors import ConfigError

    url = server.base_url.replace("http://", "http://alice:s3cr3t-pass-word@")
    suite = _suite(tmp_path, url)  # api_key_env too: two Authorization headers
    with pytest.raises(ConfigError, match="credentials") as exc:
        _run(suite, store, use_cache=False)
    assert "s3cr3t-pass-word" not in str(exc.value)
    assert server.calls == 0


# ---------------------------------------------------------------- 19: empty answers


class EmptyAnswers(FakeServer):
    """The first ``empties`` candidate answers have content ``""`` or null."""

    empties = 0
    null = False

    def _answer(self, body: dict[str, Any], anthropic: bool) -> dict[str, Any]:
        payload = super()._answer(body, anthropic)
        if self.empties > 0 and body.get("model") == "model-a":
            self.empties -= 1
            if anthropic:
                payload["content"] = [] if self.null else [{"type": "text", "text": ""}]
            else:
                payload["choices"][0]["message"]["content"] = None if self.null else ""
        return payload


@pytest.mark.parametrize(
    ("provider_type", "null"), [("openai", False), ("openai", True), ("anthropic", False)]
)
def test_an_empty_answer_is_an_error_retried_and_never_judged(
    store: Store, tmp_path: Path, provider_type: str, null: bool
) -> None:
    with EmptyAnswers() as srv:
        srv.null = null
        srv.empties = 1  # retried: the second attempt answers
        suite = _suite(tmp_path, srv.base_url, provider_type=provider_type)
        out = _run(suite, store, use_cache=False, max_concurrency=1)
        (response,) = out.record.responses
        assert response.error is None and response.attempts == 2
        assert response.text

        srv.empties = 10  # every attempt: an error, not judged
        out = _run(suite, store, use_cache=False, max_concurrency=1)
        (response,) = out.record.responses
        assert response.error and "empty answer" in response.error
        assert response.attempts == FAST.max_attempts
        assert out.record.judgments == []


# ---------------------------------------------------------------- 19: no call after a 401


def first_401_sent(server: FakeServer) -> float:
    """The server's time at which it sent its first 401 (its own clock)."""
    return min(sent for _arrived, status, sent in server.exchanges if status == 401 and sent)


def test_no_request_starts_after_the_first_401(server: FakeServer, tmp_path: Path) -> None:
    server.require_key = "sk-the-right-one"
    suite = _suite(tmp_path, server.base_url, n_inputs=6)
    for concurrency in (1, 3):
        server.reset()
        # the calls the engine starts together all arrive before any answer goes out
        server.hold_responses(concurrency)
        store = Store.open(f"sqlite:///{tmp_path / f'auth{concurrency}.db'}")
        try:
            with pytest.raises(AuthenticationError):
                # no calibration: the candidate calls come first, `concurrency` at once
                _run(suite, store, use_cache=False, max_concurrency=concurrency, calibrate=False)
        finally:
            store.close()
        exchanges = server.exchanges
        stop = first_401_sent(server)
        # every request arrived before the first 401 went out: none was started after it
        assert [a for a, _status, _sent in exchanges if a > stop] == [], exchanges
        # (the others in flight were answered 401 too, or given up by the client)
        assert {status for _a, status, _s in exchanges} <= {401, None}, exchanges
        assert server.calls == len(exchanges) == concurrency


def test_after_a_401_the_engine_refuses_new_calls(
    server: FakeServer, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    from qualspec.engine import CallStopped
    from qualspec.providers import ProviderPool

    server.require_key = "sk-the-right-one"
    monkeypatch.setenv("FAKE_KEY", "sk-wrong-key")
    config = ProviderConfig(type="openai", base_url=server.base_url, api_key_env="FAKE_KEY")

    async def main() -> None:
        engine = _engine(store)
        provider = ProviderPool({"fake": config}).get("fake")
        request = ChatRequest(model="m", messages=(Message("user", "hi"),))
        try:
            with pytest.raises(AuthenticationError):
                await engine.call(provider, request)
            assert engine.stop_reason and "authentication" in engine.stop_reason
            with pytest.raises((CallStopped, AuthenticationError)):
                await engine.call(provider, request)
        finally:
            await provider.aclose()

    asyncio.run(main())
    assert server.calls == 1


def test_scrub_covers_structured_answers() -> None:
    from qualspec.engine._calls import Scrubber

    scrub = Scrubber()
    scrub.add(["sk-structured-secret"])
    response = ChatResponse(
        text='{"reasoning": "key sk-structured-secret"}',
        structured={"reasoning": "key sk-structured-secret", "list": ["sk-structured-secret", 1]},
    )
    out = scrub.response(response)
    assert "sk-structured-secret" not in repr(out)
    assert out.structured == {"reasoning": "key ***", "list": ["***", 1]}
