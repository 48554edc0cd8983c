"""Replicas (``base_urls``): three real HTTP servers on 127.0.0.1, one of them refusing
connections, answering 500 or hanging. Calls fail over within their attempt, the replica
with the fewest calls in flight gets the next call, each replica has its own limit, a
failed replica is left out for its cool-down and comes back after it."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from qualspec import Candidate, Evaluation, ExecuteOptions, RetryPolicy, Scenario
from qualspec.engine import execute_plan, expand
from qualspec.report import export_rows, run_to_dict
from qualspec.spec import ProviderConfig, load_evaluation
from qualspec.store import Store
from qualspec.testing import FakeServer

ONE_ATTEMPT = RetryPolicy(max_attempts=1)
FAST = RetryPolicy(max_attempts=2, base_delay=0.01, max_delay=0.05)


@pytest.fixture
def servers() -> Iterator[list[FakeServer]]:
    with FakeServer() as a, FakeServer() as b, FakeServer() as c:
        yield [a, b, c]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    s = Store.open(f"sqlite:///{tmp_path / 'q.db'}")
    yield s
    s.close()


def _refused_url() -> str:
    """A base URL on 127.0.0.1 where nothing listens: every connection is refused."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def _suite(tmp_path: Path, urls: list[str] | str, cells: int, **config: Any) -> Any:
    """A suite of ``cells`` calls to ``llama``: replicas ``urls`` (a str: one base_url)."""
    where = {"base_url": urls} if isinstance(urls, str) else {"base_urls": urls}
    evaluation = Evaluation(
        name="replicas",
        candidates=[Candidate(name="c", model="llama/model-a")],
        scenarios=[
            Scenario(
                name="s",
                prompt="question {{ i }}",
                criteria=["is an answer"],
                inputs=[{"i": i} for i in range(cells)],
            )
        ],
        providers={"llama": ProviderConfig(type="openai", **where, **config)},
    )
    return load_evaluation(evaluation, tmp_path)


def _run(suite: Any, store: Store, **opts: Any) -> Any:
    options = ExecuteOptions(
        retry=opts.pop("retry", ONE_ATTEMPT),
        use_cache=opts.pop("use_cache", False),
        calibrate=False,
        judge=False,
        **opts,
    )
    return execute_plan(suite, expand(suite), store=store, options=options, argv=[])


def _answered(out: Any, cells: int) -> list[Any]:
    responses = out.record.responses
    assert out.status == "finished"
    assert len(responses) == cells
    assert [r.error for r in responses] == [None] * cells
    return list(responses)


def test_a_refused_replica_passes_its_calls_on_without_a_retry(
    servers: list[FakeServer], store: Store, tmp_path: Path
) -> None:
    refused = _refused_url()
    _, b, c = servers
    suite = _suite(tmp_path, [refused, b.base_url, c.base_url], cells=12, max_concurrency=2)
    out = _run(suite, store)  # one attempt per cell: a failover is not a retry
    responses = _answered(out, 12)
    assert {r.attempts for r in responses} == {1}
    assert b.calls + c.calls == 12
    served = [r.served_by for r in responses]
    assert set(served) == {b.base_url, c.base_url}
    # visible in load_run, the results file and the exports
    loaded = store.load_run(out.record.summary.id)
    assert [r.served_by for r in loaded.responses] == served
    data = run_to_dict(loaded)
    assert data["schema_version"] == "1.2"
    assert {r["served_by"] for r in data["responses"]} == {b.base_url, c.base_url}
    assert {row["served_by"] for row in export_rows(loaded)} == {b.base_url, c.base_url}


def test_a_replica_answering_500_is_left_out_for_its_cooldown(
    servers: list[FakeServer], store: Store, tmp_path: Path
) -> None:
    a, b, c = servers
    a.set_fault_mode("fail", status=500)
    urls = [a.base_url, b.base_url, c.base_url]
    suite = _suite(tmp_path, urls, cells=9, max_concurrency=1, replica_cooldown=600)
    responses = _answered(_run(suite, store), 9)
    assert {r.attempts for r in responses} == {1}
    assert a.calls == 1  # its first call failed; then it is out for 600 s
    assert b.calls + c.calls == 9
    assert a.base_url not in {r.served_by for r in responses}


def test_a_hung_replica_times_out_and_the_call_moves_on(
    servers: list[FakeServer], store: Store, tmp_path: Path
) -> None:
    a, b, c = servers
    a.hang_next(1)
    urls = [a.base_url, b.base_url, c.base_url]
    suite = _suite(tmp_path, urls, cells=3, max_concurrency=1, timeout=0.5)
    responses = _answered(_run(suite, store), 3)
    assert {r.attempts for r in responses} == {1}
    assert a.calls >= 1


def test_a_failed_replica_comes_back_when_its_cooldown_ends(
    servers: list[FakeServer], store: Store, tmp_path: Path
) -> None:
    a, b, c = servers
    for server in (b, c):
        server.latency = 0.1  # 29 calls, 2 at a time: the run lasts at least 1.4 s
    a.fail_next(1, status=503)
    urls = [a.base_url, b.base_url, c.base_url]
    cooldown = 0.4
    suite = _suite(tmp_path, urls, cells=30, max_concurrency=1, replica_cooldown=cooldown)
    responses = _answered(_run(suite, store), 30)
    arrived = [t for t, _status, _sent in a.exchanges]
    assert len(arrived) >= 2  # back in service after its cool-down
    assert arrived[1] - arrived[0] >= cooldown  # and not before
    assert a.base_url in {r.served_by for r in responses}


def test_the_replica_with_fewest_calls_in_flight_gets_the_next_call(
    servers: list[FakeServer], store: Store, tmp_path: Path
) -> None:
    a, b, c = servers
    cells = 12
    # ``a`` holds its first answer until ``b`` and ``c`` served every other cell: with one
    # call in flight on ``a`` and none on the others, no further call may go to ``a``
    a.hold_timeout = 120.0
    a.hold_responses(99)

    def release() -> None:
        deadline = time.monotonic() + 120
        while b.calls + c.calls < cells - 1 and time.monotonic() < deadline:
            time.sleep(0.01)
        a.hold_responses(0)

    releaser = threading.Thread(target=release, daemon=True)
    releaser.start()
    urls = [a.base_url, b.base_url, c.base_url]
    suite = _suite(tmp_path, urls, cells=cells, max_concurrency=1)
    responses = _answered(_run(suite, store), cells)
    releaser.join(timeout=5)
    assert a.calls == 1
    assert b.calls >= 1 and c.calls >= 1 and b.calls + c.calls == cells - 1
    assert {r.served_by for r in responses} == set(urls)


def test_each_replica_has_its_own_concurrency_limit(
    servers: list[FakeServer], store: Store, tmp_path: Path
) -> None:
    for server in servers:  # no answer until two calls are in flight on each replica
        server.hold_timeout = 120.0
        server.hold_responses(2)
    urls = [s.base_url for s in servers]
    suite = _suite(tmp_path, urls, cells=12, max_concurrency=2)
    _answered(_run(suite, store), 12)
    # 2 at once on every replica (6 in all), never more than 2 on one
    assert [_most_at_once(s) for s in servers] == [2, 2, 2]
    assert sum(s.calls for s in servers) == 12


def _most_at_once(server: FakeServer) -> int:
    """The most requests a server held at one moment: arrived, not yet answered."""
    events = []
    for arrived, _status, sent in server.exchanges:
        assert sent is not None
        events += [(arrived, 1), (sent, -1)]
    most = now = 0
    for _t, step in sorted(events, key=lambda e: (e[0], e[1])):
        now += step
        most = max(most, now)
    return most


def test_when_every_replica_is_down_the_retry_policy_applies(
    servers: list[FakeServer], store: Store, tmp_path: Path
) -> None:
    for server in servers:
        server.fail_next(1, status=500)
    urls = [s.base_url for s in servers]
    suite = _suite(tmp_path, urls, cells=1, max_concurrency=1, replica_cooldown=600)
    (response,) = _answered(_run(suite, store, retry=FAST), 1)
    # attempt 1 tried the three replicas; attempt 2 (all out) probed the first one back
    assert response.attempts == 2
    assert [s.calls for s in servers] == [2, 1, 1]
    assert response.served_by == servers[0].base_url


def test_every_replica_failing_records_the_error_after_the_retries(
    servers: list[FakeServer], store: Store, tmp_path: Path
) -> None:
    for server in servers:
        server.set_fault_mode("fail", status=502)
    urls = [s.base_url for s in servers]
    suite = _suite(tmp_path, urls, cells=1, max_concurrency=1, replica_cooldown=600)
    out = _run(suite, store, retry=FAST)
    (response,) = out.record.responses
    assert response.attempts == 2 and "502" in (response.error or "")
    assert response.served_by is None
    assert sum(s.calls for s in servers) == 4  # 3 in attempt 1, one probe in attempt 2


def test_a_4xx_is_the_calls_own_error_and_does_not_move(
    servers: list[FakeServer], store: Store, tmp_path: Path
) -> None:
    a, b, c = servers
    a.fail_next(1, status=400)
    urls = [a.base_url, b.base_url, c.base_url]
    suite = _suite(tmp_path, urls, cells=1, max_concurrency=1)
    (response,) = _run(suite, store).record.responses
    assert "400" in (response.error or "")
    assert (a.calls, b.calls, c.calls) == (1, 0, 0)


def test_cache_keys_are_per_model_not_per_replica(
    servers: list[FakeServer], store: Store, tmp_path: Path
) -> None:
    a, b, c = servers
    suite = _suite(tmp_path, [a.base_url, b.base_url, c.base_url], cells=6, max_concurrency=1)
    first = _answered(_run(suite, store, use_cache=True), 6)
    assert len({r.served_by for r in first}) > 1
    calls = a.calls + b.calls + c.calls
    # the same model behind another replica list (first replica kept), or its first
    # replica alone: every answer comes from the cache
    again = _suite(tmp_path, [a.base_url, c.base_url], cells=6, max_concurrency=1)
    cached = _run(again, store, use_cache=True).record.responses
    assert len(cached) == 6 and all(r.cached and r.served_by is None for r in cached)
    single = _suite(tmp_path, a.base_url, cells=6)
    alone = _run(single, store, use_cache=True).record.responses
    assert len(alone) == 6 and all(r.cached for r in alone)
    assert a.calls + b.calls + c.calls == calls


def test_judge_calls_record_the_replica_that_answered(
    servers: list[FakeServer], store: Store, tmp_path: Path
) -> None:
    """A judge on a provider with replicas: each judgment records the replica that
    answered its call (``details["served_by"]``, no migration), visible where responses
    show theirs: ``JudgmentRecord.served_by``, the results file and the exports."""
    _, b, c = servers
    evaluation = Evaluation(
        name="judged-replicas",
        candidates=[Candidate(name="c", model="llama/model-a")],
        scenarios=[
            Scenario(
                name="s",
                prompt="question {{ i }}",
                criteria=["is an answer"],
                inputs=[{"i": i} for i in range(8)],
            )
        ],
        judge="llama/judge",
        providers={
            "llama": ProviderConfig(
                type="openai", base_urls=[b.base_url, c.base_url], max_concurrency=2
            )
        },
    )
    suite = load_evaluation(evaluation, tmp_path)
    out = execute_plan(
        suite,
        expand(suite),
        store=store,
        options=ExecuteOptions(retry=ONE_ATTEMPT, use_cache=False, calibrate=False),
        argv=[],
    )
    assert out.status == "finished"
    loaded = store.load_run(out.record.summary.id)
    judged = [j for j in loaded.judgments if j.evaluator == "criteria"]
    assert len(judged) == 8 and all(j.score is not None for j in judged)
    served = {j.served_by for j in judged}
    assert served <= {b.base_url, c.base_url} and None not in served
    assert all(j.details and j.details["served_by"] == j.served_by for j in judged)
    data = run_to_dict(loaded)
    in_file = {j["served_by"] for r in data["responses"] for j in r["judgments"]}
    assert in_file == served
    rows = [row for row in export_rows(loaded) if row["evaluator"] == "criteria"]
    assert {row["judge_served_by"] for row in rows} == served
    assert {row["served_by"] for row in rows} <= {b.base_url, c.base_url}
