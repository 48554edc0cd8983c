"""Reference answers are cached for 24 hours (``--cache-ttl reference=...``), and
``--refresh-reference`` asks them again while the other answers still come from the
cache. The cache's clock is injected (``ExecuteOptions.clock``): no test sleeps."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from qualspec import Candidate, Evaluation, ProviderConfig, RetryPolicy, Scenario
from qualspec.analysis import field_analysis, run_totals
from qualspec.cli import main
from qualspec.engine import ExecuteOptions, RunOutcome, Session, expand
from qualspec.report import run_from_dict
from qualspec.spec import GraderConfig, load_evaluation
from qualspec.store import Store
from qualspec.testing import FakeServer

PROFILE = {"name": "Acme", "industry": "SaaS"}


class Clock:
    """A clock the test moves."""

    def __init__(self) -> None:
        self.now = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


def _reply(body: dict[str, Any]) -> str:
    return json.dumps(PROFILE)  # every answer the same: every field decided by rule


@pytest.fixture
def servers(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[FakeServer, FakeServer]]:
    """The candidates' and grader's server, and the reference model's own."""
    monkeypatch.setenv("FAKE_KEY", "sk-test-reference-ttl")
    with FakeServer(judge_reply=_reply) as main_server, FakeServer(judge_reply=_reply) as ref:
        yield main_server, ref


def _evaluation(main_server: FakeServer, ref: FakeServer) -> Evaluation:
    def provider(url: str) -> ProviderConfig:
        return ProviderConfig(type="openai", base_url=url, api_key_env="FAKE_KEY")

    return Evaluation(
        name="reference ttl",
        candidates=[Candidate(name="a", model="fake/a")],
        scenarios=[
            Scenario(
                name="profile",
                prompt="Profile of {{ company }} as JSON",
                inputs=[{"company": "Acme"}, {"company": "Globex"}],
                reference={"model": "ref/big"},  # type: ignore[arg-type]
                output_schema={"fields": [{"name": "name"}, {"name": "industry"}]},  # type: ignore[arg-type]
            )
        ],
        grader=GraderConfig(model="fake/grader"),
        providers={"fake": provider(main_server.base_url), "ref": provider(ref.base_url)},
    )


def _run(evaluation: Evaluation, tmp_path: Path, clock: Clock, **options: Any) -> RunOutcome:
    suite = load_evaluation(evaluation, tmp_path)
    opts = ExecuteOptions(
        calibrate=False, retry=RetryPolicy(max_attempts=1), clock=clock, **options
    )

    async def go() -> RunOutcome:
        async with Session(db=f"sqlite:///{tmp_path / 'q.db'}", options=opts) as session:
            return await session.run_plan(suite, expand(suite))

    return asyncio.run(go())


def test_reference_answers_expire_after_24_hours_on_the_cache_clock(
    servers: tuple[FakeServer, FakeServer], tmp_path: Path
) -> None:
    main_server, ref = servers
    evaluation = _evaluation(main_server, ref)
    clock = Clock()
    first = _run(evaluation, tmp_path, clock)
    assert first.status == "finished" and ref.calls == 2  # one per input
    assert first.stats.reference_calls == 2 and first.stats.candidate_calls == 2
    # every field decided by rule: no grader call, so no unknown grading price either
    assert run_totals(first.record).judge_cost_usd == 0.0
    with Store.open(f"sqlite:///{tmp_path / 'q.db'}") as store:
        assert store.list_runs()[0].judge_cost_usd == 0.0

    clock.now += timedelta(hours=23, minutes=59)  # within the TTL: from the cache
    second = _run(evaluation, tmp_path, clock)
    assert ref.calls == 2 and second.stats.cached_reference == 2
    assert all(r.cached for r in second.record.responses)

    clock.now += timedelta(minutes=2)  # 24 h and a minute after they were cached
    third = _run(evaluation, tmp_path, clock)
    assert ref.calls == 4 and third.stats.reference_calls == 2
    assert third.stats.cached_candidate == 2  # candidate answers never expire
    grades = [j for j in third.record.judgments if j.evaluator == "field_grader"]
    assert [j.score for j in grades] == [100.0, 100.0]

    # a TTL of one's own (--cache-ttl reference=3600) judges the answers by their age
    clock.now += timedelta(days=2)
    hour = {"reference": 3600.0}
    _run(evaluation, tmp_path, clock, cache_ttl=hour)
    assert ref.calls == 6
    clock.now += timedelta(minutes=59)
    _run(evaluation, tmp_path, clock, cache_ttl=hour)
    assert ref.calls == 6
    clock.now += timedelta(minutes=2)
    _run(evaluation, tmp_path, clock, cache_ttl=hour)
    assert ref.calls == 8


def test_the_current_ttl_applies_to_reference_answers_already_cached(
    servers: tuple[FakeServer, FakeServer], tmp_path: Path
) -> None:
    # issue 17 item 11: the lifetime was fixed when an answer was written, so a shorter
    # --cache-ttl reference=N given later did not expire answers cached with 24 h
    main_server, ref = servers
    evaluation = _evaluation(main_server, ref)
    clock = Clock()
    _run(evaluation, tmp_path, clock)  # cached with the default 24 h
    assert ref.calls == 2
    clock.now += timedelta(hours=2)
    again = _run(evaluation, tmp_path, clock, cache_ttl={"reference": 3600.0})
    assert ref.calls == 4 and again.stats.reference_calls == 2  # 2 h old > 1 h: asked again
    assert again.stats.cached_candidate == 2  # the other kinds untouched
    # and a longer TTL keeps answers cached with a shorter one
    clock.now += timedelta(hours=5)
    longer = _run(evaluation, tmp_path, clock, cache_ttl={"reference": 86400.0 * 7})
    assert ref.calls == 4 and longer.stats.cached_reference == 2
    # "none" (forever) too
    clock.now += timedelta(days=30)
    forever = _run(evaluation, tmp_path, clock, cache_ttl={"reference": None})
    assert ref.calls == 4 and forever.stats.cached_reference == 2


def test_help_lists_every_cache_ttl_kind(capsys: pytest.CaptureFixture[str]) -> None:
    assert _cli(["run", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "--cache-ttl KIND=SECONDS" in text
    assert "(candidate, judge, reference; 'none' = forever)" in text
    assert "applies to entries already cached" in text


def test_refresh_reference_asks_the_references_again_and_overwrites_their_cache(
    servers: tuple[FakeServer, FakeServer], tmp_path: Path
) -> None:
    main_server, ref = servers
    evaluation = _evaluation(main_server, ref)
    clock = Clock()
    _run(evaluation, tmp_path, clock)
    candidate_calls = main_server.calls
    refreshed = _run(evaluation, tmp_path, clock, refresh_kinds=("reference",))
    assert ref.calls == 4 and refreshed.stats.reference_calls == 2
    assert refreshed.stats.cached_candidate == 2  # the candidates still from the cache
    assert main_server.calls == candidate_calls  # no candidate nor grader call
    # the refreshed entries are the ones read next time (overwritten, with a new TTL)
    clock.now += timedelta(hours=12)
    again = _run(evaluation, tmp_path, clock)
    assert ref.calls == 4 and again.stats.cached_reference == 2


def _cli(args: list[str]) -> object:
    with pytest.raises(SystemExit) as exited:
        main(args)
    return exited.value.code


def test_qualspec_run_refresh_reference(
    servers: tuple[FakeServer, FakeServer], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    main_server, ref = servers
    data = _evaluation(main_server, ref).model_dump(mode="json", exclude_defaults=True)
    suite = tmp_path / "suite.json"
    suite.write_text(json.dumps(data))
    yaml_suite = tmp_path / "suite.yaml"
    yaml_suite.write_text(suite.read_text())  # JSON is YAML
    common = [
        "run", str(yaml_suite), "--db", f"sqlite:///{tmp_path / 'q.db'}",
        "--results-dir", str(tmp_path / "results"), "--quiet", "--no-calibration",
    ]  # fmt: skip
    assert _cli(common) == 0
    assert ref.calls == 2
    assert _cli(common) == 0
    assert ref.calls == 2  # cached
    assert _cli([*common, "--refresh-reference"]) == 0
    assert ref.calls == 4
    out = capsys.readouterr().out
    assert "Reference-graded fields (field_grader, pass >= 80)" in out
    assert "Overall: 100.0 weighted, 100.0 simple  Excellent" in out
    assert "reference: 2 calls" in out  # the cost per suite, by kind
    assert "grading: 0 calls" in out  # every field decided by rule: no grader call
    results = sorted((tmp_path / "results").glob("*.json"))
    data = json.loads(results[-1].read_text())
    assert data["field_grades"]["overall"]["band"] == "Excellent"
    assert data["field_grades"]["costs"]["reference"]["calls"] == 2
    graded = [
        j for r in data["responses"] for j in r["judgments"] if j["evaluator"] == "field_grader"
    ]
    assert len(graded) == 2 and graded[0]["details"]["type"] == "field_grade"
    # the file reads back into the same field grades
    analysis = field_analysis(run_from_dict(data, source=str(results[-1])))
    assert analysis is not None and analysis.overall.mean == 100.0
