"""The async core: ``Session.run``/``complete``, evaluators as plugins, staged group work,
limits and cache keyed by endpoint. Everything runs against the in-process fake server."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import helpers_evaluators
import pytest

import qualspec
from qualspec import (
    Candidate,
    Evaluation,
    EvaluatorConfig,
    ExecuteOptions,
    ProviderConfig,
    RetryPolicy,
    Scenario,
    Session,
)
from qualspec.store import Store
from qualspec.testing import FakeServer

KEY = "sk-session-canary-7f3a9"


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeServer]:
    monkeypatch.setenv("FAKE_KEY", KEY)
    with FakeServer(latency=0.02, require_key=KEY) as srv:
        yield srv


def _provider(base_url: str) -> ProviderConfig:
    return ProviderConfig(type="openai", base_url=base_url, api_key_env="FAKE_KEY")


def _evaluation(
    base_url: str,
    *,
    n_inputs: int = 3,
    scenarios: int = 1,
    judges: list[EvaluatorConfig] | None = None,
    providers: dict[str, ProviderConfig] | None = None,
    candidates: list[Candidate] | None = None,
    temperatures: list[float] | None = None,
) -> Evaluation:
    rows = [{"id": f"r{i}", "i": str(i)} for i in range(n_inputs)]
    extra: dict[str, Any] = {"judges": judges} if judges else {"judge": "fake/judge"}
    return Evaluation(
        name="session-test",
        candidates=candidates or [Candidate(name="c", model="fake/model-a")],
        scenarios=[
            Scenario(
                name=f"s{n}",
                prompt=f"question {n}-{{{{ i }}}}",
                criteria=["is an answer"],
                inputs=rows,
            )
            for n in range(scenarios)
        ],
        temperatures=temperatures or [0.0],
        providers=providers or {"fake": _provider(base_url)},
        **extra,
    )


def _db(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'session.db'}"


# ---------------------------------------------------------------- Session in a running loop


@pytest.mark.asyncio
async def test_session_run_and_complete_from_pytest_asyncio(
    server: FakeServer, tmp_path: Path
) -> None:
    evaluation = _evaluation(server.base_url, n_inputs=3)
    options = ExecuteOptions(calibrate=False)  # the session run holds the ad-hoc call only
    providers = {"fake": _provider(server.base_url)}
    async with Session(db=_db(tmp_path), providers=providers, options=options) as s:
        outcome = await s.run(evaluation)
        assert outcome.status == "finished"
        assert len(outcome.record.responses) == 3
        assert [j.score for j in outcome.record.judgments] == [8.0, 8.0, 8.0]
        calls = server.calls

        reply = await s.complete("fake/model-a", "Say hi", kind="adhoc", max_tokens=20)
        assert reply.ok and reply.text == "Answer to: Say hi" and not reply.cached
        again = await s.complete("fake/model-a", "Say hi", kind="adhoc", max_tokens=20)
        assert again.cached and again.text == reply.text
        assert server.calls == calls + 1  # the second came from the cache
    with Store.open(_db(tmp_path)) as store:
        runs = {r.suite_name: r for r in store.list_runs()}
        assert runs["session-test"].status == "finished"
        session_run = store.load_run(runs["(session)"].id)
        assert session_run.summary.status == "finished"
        assert [r.kind for r in session_run.responses] == ["adhoc"]
        assert session_run.responses[0].text == "Answer to: Say hi"


@pytest.mark.asyncio
async def test_first_calls_made_at_once_share_one_session_run(
    server: FakeServer, tmp_path: Path
) -> None:
    """Twenty first calls in flight together: one ad-hoc run records every answer, and a
    second session answers them all from the cache."""
    providers = {"fake": _provider(server.base_url)}
    prompts = [f"question {i}" for i in range(20)]
    async with Session(db=_db(tmp_path), providers=providers) as s:
        replies = await asyncio.gather(
            *(s.complete("fake/model-a", p, kind="adhoc", max_tokens=20) for p in prompts)
        )
    assert all(r.ok and not r.cached for r in replies)
    with Store.open(_db(tmp_path)) as store:
        runs = [r for r in store.list_runs() if r.suite_name == "(session)"]
        assert len(runs) == 1
        recorded = store.load_run(runs[0].id).responses
        assert sorted(r.text or "" for r in recorded) == sorted(f"Answer to: {p}" for p in prompts)
    calls = server.calls
    async with Session(db=_db(tmp_path), providers=providers) as s:
        again = await asyncio.gather(
            *(s.complete("fake/model-a", p, kind="adhoc", max_tokens=20) for p in prompts)
        )
    assert all(r.cached for r in again) and server.calls == calls


@pytest.mark.asyncio
async def test_sync_run_works_inside_a_running_event_loop(
    server: FakeServer, tmp_path: Path
) -> None:
    asyncio.get_running_loop()  # we are inside a loop, as in Jupyter or FastAPI
    outcome = qualspec.run(_evaluation(server.base_url, n_inputs=2), db=_db(tmp_path))
    assert outcome.status == "finished"
    assert len(outcome.record.judgments) == 2


def test_sync_run_resume_makes_no_new_calls(server: FakeServer, tmp_path: Path) -> None:
    evaluation = _evaluation(server.base_url, n_inputs=4)
    first = qualspec.run(evaluation, db=_db(tmp_path))
    calls = server.calls
    again = qualspec.run(evaluation, db=_db(tmp_path), resume=first.run_id)
    assert again.run_id == first.run_id and again.status == "finished"
    assert server.calls == calls
    assert again.stats.candidate_calls == again.stats.judge_calls == 0


# ---------------------------------------------------------------- several evaluators


def test_two_evaluators_in_one_run(server: FakeServer, tmp_path: Path) -> None:
    judges = [
        EvaluatorConfig(type="criteria", model="fake/judge", threshold=9),
        EvaluatorConfig(type="criteria", name="second_opinion", model="other/judge-b", threshold=3),
    ]
    providers = {"fake": _provider(server.base_url), "other": _provider(server.base_url)}
    evaluation = _evaluation(server.base_url, n_inputs=3, judges=judges, providers=providers)
    outcome = qualspec.run(evaluation, db=_db(tmp_path))
    assert outcome.status == "finished"
    by_evaluator: dict[str, list[Any]] = {}
    for j in outcome.record.judgments:
        by_evaluator.setdefault(j.evaluator, []).append(j)
    assert sorted(by_evaluator) == ["criteria", "second_opinion"]
    assert len(by_evaluator["criteria"]) == len(by_evaluator["second_opinion"]) == 3
    first, second = by_evaluator["criteria"][0], by_evaluator["second_opinion"][0]
    assert (first.judge_model, first.threshold, first.passed) == ("fake/judge", 9, False)
    assert (second.judge_model, second.threshold, second.passed) == ("other/judge-b", 3, True)
    assert first.prompt_version is not None and first.prompt_version == second.prompt_version
    meta = outcome.record.summary.metadata["evaluators"]
    assert [(m["name"], m["model"]) for m in meta] == [
        ("criteria", "fake/judge"),
        ("second_opinion", "other/judge-b"),
    ]
    assert outcome.stats.judge_calls == 6


def test_yaml_judges_list_and_judge_key_are_exclusive(tmp_path: Path) -> None:
    from qualspec.errors import SpecError

    suite = tmp_path / "both.yaml"
    suite.write_text(
        "name: x\ncandidates: [{name: c, model: local/smollm2}]\n"
        "scenarios: [{name: s, prompt: hi, criteria: [ok]}]\n"
        "judge: local/smollm2\njudges: [{type: criteria}]\n",
        encoding="utf-8",
    )
    with pytest.raises(SpecError) as info:
        qualspec.load_suite(suite)
    assert "not both" in str(info.value.issues[0])


def test_an_unknown_evaluator_type_is_one_clear_error(server: FakeServer, tmp_path: Path) -> None:
    from qualspec.errors import ConfigError

    evaluation = _evaluation(
        server.base_url, judges=[EvaluatorConfig(type="critera", model="fake/judge")]
    )
    with pytest.raises(ConfigError, match="did you mean 'criteria'"):
        qualspec.run(evaluation, db=_db(tmp_path))


def test_an_evaluator_that_raises_is_recorded_not_fatal(server: FakeServer, tmp_path: Path) -> None:
    judges = [
        EvaluatorConfig(type="criteria", model="fake/judge"),
        EvaluatorConfig(type="helpers_evaluators:exploding", name="exploding"),
    ]
    outcome = qualspec.run(_evaluation(server.base_url, judges=judges), db=_db(tmp_path))
    assert outcome.status == "finished"
    broken = [j for j in outcome.record.judgments if j.evaluator == "exploding"]
    assert len(broken) == 3
    assert all(j.error and "ValueError" in j.error and j.score is None for j in broken)
    assert all(j.score == 8.0 for j in outcome.record.judgments if j.evaluator == "criteria")


# ---------------------------------------------------------------- staged group work


def test_a_group_evaluator_waits_for_every_answer_of_its_group(
    server: FakeServer, tmp_path: Path
) -> None:
    helpers_evaluators.SEEN.clear()
    server.latency = 0.05
    judges = [EvaluatorConfig(type="helpers_evaluators:group_probe", name="probe")]
    evaluation = _evaluation(server.base_url, n_inputs=4, scenarios=2, judges=judges)
    outcome = qualspec.run(evaluation, db=_db(tmp_path))
    assert outcome.status == "finished"
    keys_by_scenario: dict[str, set[str]] = {}
    for r in outcome.record.responses:
        keys_by_scenario.setdefault(r.scenario, set()).add(r.key)
    seen = {entry["group"]: entry for entry in helpers_evaluators.SEEN}
    assert sorted(seen) == ["s0", "s1"]
    for scenario, keys in keys_by_scenario.items():
        assert set(seen[scenario]["keys"]) == keys
        assert all(text and text.startswith("Answer to:") for text in seen[scenario]["texts"])
        assert seen[scenario]["prompt_version"] is not None
    records = [j for j in outcome.record.judgments if j.evaluator == "probe"]
    assert len(records) == 2
    for record in records:
        assert record.subject is not None and len(record.subject) == 4
        assert record.scores is not None and set(record.scores) == set(record.subject)
        assert record.details == {"answers": 4}
        assert record.passed is True
        assert {record.criterion} == {"all answered"}
    # a resume finds the group records done: nothing is evaluated twice
    helpers_evaluators.SEEN.clear()
    again = qualspec.run(evaluation, db=_db(tmp_path), resume=outcome.run_id)
    assert helpers_evaluators.SEEN == []
    assert len([j for j in again.record.judgments if j.evaluator == "probe"]) == 2


# ---------------------------------------------------------------- endpoints


def test_two_provider_names_on_one_endpoint_share_one_limit(tmp_path: Path) -> None:
    with FakeServer(latency=0.1) as server:
        providers = {
            "p1": ProviderConfig(type="openai", base_url=server.base_url, max_concurrency=3),
            "p2": ProviderConfig(type="openai", base_url=server.base_url, max_concurrency=3),
        }
        evaluation = _evaluation(
            server.base_url,
            n_inputs=12,
            providers=providers,
            candidates=[Candidate(name="a", model="p1/m"), Candidate(name="b", model="p2/m")],
        )
        options = ExecuteOptions(judge=False)
        outcome = qualspec.run(evaluation, db=_db(tmp_path), options=options)
        assert outcome.status == "finished" and len(outcome.record.responses) == 24
        assert server.max_in_flight <= 3


def test_one_name_on_two_servers_never_shares_the_cache(tmp_path: Path) -> None:
    options = ExecuteOptions(judge=False)
    with FakeServer() as first, FakeServer() as second:
        for server in (first, second):
            evaluation = _evaluation(
                server.base_url,
                n_inputs=3,
                providers={"fake": ProviderConfig(base_url=server.base_url)},
            )
            outcome = qualspec.run(evaluation, db=_db(tmp_path), options=options)
            assert outcome.stats.cached_candidate == 0
            assert server.calls == 3
        # the same server again: all from the cache
        evaluation = _evaluation(
            first.base_url, n_inputs=3, providers={"fake": ProviderConfig(base_url=first.base_url)}
        )
        outcome = qualspec.run(evaluation, db=_db(tmp_path), options=options)
        assert outcome.stats.cached_candidate == 3 and first.calls == 3


# ---------------------------------------------------------------- budget and logging


@pytest.mark.asyncio
async def test_the_budget_covers_the_whole_session(server: FakeServer, tmp_path: Path) -> None:
    from qualspec.errors import BudgetExceededError

    prices = tmp_path / "prices.json"
    prices.write_text('{"fake/model-a": {"input": 1000000, "output": 1000000}}', encoding="utf-8")
    async with Session(
        db=_db(tmp_path),
        max_cost=1.0,
        prices=prices,
        providers={"fake": _provider(server.base_url)},
    ) as s:
        first = await s.complete("fake/model-a", "one")
        assert first.ok and first.cost_usd is not None and first.cost_usd >= 1.0
        with pytest.raises(BudgetExceededError):
            await s.complete("fake/model-a", "two")
        assert s.spent_usd == first.cost_usd


def test_retries_are_logged_and_no_secret_reaches_a_log_record(
    server: FakeServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    server.fail_next(2, status=500)
    options = ExecuteOptions(retry=RetryPolicy(max_attempts=4, base_delay=0.01, max_delay=0.02))
    with caplog.at_level(logging.DEBUG, logger="qualspec"):
        outcome = qualspec.run(
            _evaluation(server.base_url, n_inputs=2), db=_db(tmp_path), options=options
        )
    assert outcome.status == "finished"
    messages = [r.getMessage() for r in caplog.records if r.name.startswith("qualspec")]
    assert any("retrying in" in m and "HTTP 500" in m for m in messages)
    assert not any(KEY in m for m in messages)
    for record in caplog.records:
        assert KEY not in repr(record.args) and KEY not in str(record.msg)
