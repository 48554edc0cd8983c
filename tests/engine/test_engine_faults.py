"""The engine against a real HTTP server with faults: retries, Retry-After, timeouts, 401."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from qualspec import Candidate, Evaluation, ExecuteOptions, RetryPolicy, Scenario
from qualspec.engine import execute_plan, expand
from qualspec.spec import ProviderConfig, load_evaluation
from qualspec.store import Store
from qualspec.testing import FakeServer

FAST = RetryPolicy(max_attempts=4, base_delay=0.01, max_delay=0.05)


@pytest.fixture
def server() -> Iterator[FakeServer]:
    with FakeServer() as srv:
        yield srv


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    s = Store.open(f"sqlite:///{tmp_path / 'q.db'}")
    yield s
    s.close()


def _suite(server: FakeServer, tmp_path: Path, n_inputs: int = 1, judge: bool = True):  # type: ignore[no-untyped-def]
    evaluation = Evaluation(
        name="faults",
        candidates=[Candidate(name="c", model="fake/model-a")],
        scenarios=[
            Scenario(
                name="s",
                prompt="question {{ i }}",
                criteria=["is an answer"],
                inputs=[{"i": i} for i in range(n_inputs)],
            )
        ],
        judge="fake/judge",
        providers={
            "fake": ProviderConfig(type="openai", base_url=server.base_url, api_key_env="FAKE_KEY")
        },
    )
    return load_evaluation(evaluation, tmp_path)


def _run(suite, store, **opts):  # type: ignore[no-untyped-def]
    options = ExecuteOptions(
        retry=opts.pop("retry", FAST), use_cache=False, calibrate=False, **opts
    )
    return execute_plan(suite, expand(suite), store=store, options=options, argv=[])


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_KEY", "sk-test-engine")


def test_server_errors_are_retried(server: FakeServer, store: Store, tmp_path: Path) -> None:
    server.fail_next(2, status=500)
    out = _run(_suite(server, tmp_path), store, max_concurrency=1)
    (response,) = out.record.responses
    assert response.error is None
    assert response.attempts == 3
    assert out.status == "finished"
    (judgment,) = out.record.judgments
    assert judgment.score == 8


def test_retry_after_is_honoured(server: FakeServer, store: Store, tmp_path: Path) -> None:
    server.fail_next(1, status=429, retry_after=1)
    start = time.perf_counter()
    out = _run(_suite(server, tmp_path), store, max_concurrency=1, judge=False)
    assert out.record.responses[0].error is None
    assert out.record.responses[0].attempts == 2
    times = [t for t, _headers, _body in server.request_log]
    assert len(times) == 2
    assert times[1] - times[0] >= 0.95
    assert time.perf_counter() - start < 10


def test_hung_request_is_abandoned_at_timeout(
    server: FakeServer, store: Store, tmp_path: Path
) -> None:
    server.hang_next(1)
    start = time.perf_counter()
    out = _run(_suite(server, tmp_path), store, max_concurrency=1, timeout=0.5, judge=False)
    elapsed = time.perf_counter() - start
    response = out.record.responses[0]
    assert response.error is None and response.attempts == 2
    assert elapsed < 5


def test_malformed_body_is_retried(server: FakeServer, store: Store, tmp_path: Path) -> None:
    server.malformed_next(1)
    out = _run(_suite(server, tmp_path), store, max_concurrency=1, judge=False)
    assert out.record.responses[0].error is None
    assert out.record.responses[0].attempts == 2


def test_exhausted_retries_record_an_error_and_the_run_completes(
    server: FakeServer, store: Store, tmp_path: Path
) -> None:
    suite = _suite(server, tmp_path, n_inputs=3)
    # three first attempts take faults 1-3 (the retries wait 0.1-0.2 s, so they queue behind
    # the other cells); whichever retry comes first takes fault 4 and has no attempts left.
    server.fail_next(4, status=503)
    policy = RetryPolicy(max_attempts=2, base_delay=0.2, max_delay=0.2)
    out = _run(suite, store, max_concurrency=1, retry=policy)
    assert out.status == "finished"
    errors = [r for r in out.record.responses if r.error is not None]
    assert len(out.record.responses) == 3
    assert len(errors) == 1
    assert "503" in (errors[0].error or "")
    assert errors[0].attempts == 2
    # the failed cell is not judged; the others are
    judged = {j.response_key for j in out.record.judgments}
    assert errors[0].key not in judged and len(judged) == 2


def test_client_errors_are_not_retried(server: FakeServer, store: Store, tmp_path: Path) -> None:
    server.fail_next(1, status=400)
    out = _run(_suite(server, tmp_path), store, max_concurrency=1, judge=False)
    assert out.record.responses[0].attempts == 1
    assert "400" in (out.record.responses[0].error or "")


def test_cli_401_stops_the_run_with_one_line(
    server: FakeServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from qualspec.cli import main

    server.require_key = "sk-the-right-one"
    monkeypatch.setenv("OPENAI_API_KEY", "sk-canary-wrong-key")
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    monkeypatch.chdir(tmp_path)
    suite = tmp_path / "s.yaml"
    suite.write_text(
        "name: auth\ncandidates: [{name: c, model: openai/gpt-4o}]\n"
        "scenarios: [{name: s, prompt: hi, criteria: [ok]}]\njudge: openai/gpt-4o\n"
    )
    with pytest.raises(SystemExit) as exc:
        main(["run", str(suite), "--quiet"])
    assert exc.value.code == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert "authentication failed" in err[0]
    assert "OPENAI_API_KEY" in err[0]
    assert "sk-canary-wrong-key" not in err[0]
    assert server.calls == 1  # the one candidate call; nothing is judged after a 401


def test_provider_timeout_from_the_suite_wins(
    server: FakeServer, store: Store, tmp_path: Path
) -> None:
    server.hang_next(1)
    evaluation = Evaluation(
        name="provider-timeout",
        candidates=[Candidate(name="c", model="fake/model-a")],
        scenarios=[Scenario(name="s", prompt="hello", criteria=["ok"])],
        providers={
            "fake": ProviderConfig(
                type="openai", base_url=server.base_url, api_key_env="FAKE_KEY", timeout=0.3
            )
        },
    )
    suite = load_evaluation(evaluation, tmp_path)
    start = time.perf_counter()
    out = _run(suite, store, judge=False, timeout=60)
    assert out.record.responses[0].attempts == 2
    assert time.perf_counter() - start < 5
