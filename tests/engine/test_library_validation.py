"""The library validates what ``qualspec run`` validates: ``qualspec.run``, ``Session.run``
and ``Plan.with_judge`` refuse a bad threshold, a malformed judge address, scenarios with
nothing to judge and nonsensical call options with the command line's one-line error,
before any call and before any run is recorded."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import qualspec
from qualspec.cli import main
from qualspec.engine import ExecuteOptions, RetryPolicy, Session, expand
from qualspec.errors import ConfigError, SpecError
from qualspec.spec import load_suite
from qualspec.store import Store
from qualspec.testing import FakeServer

KEY = "sk-validation-test"

SUITE = """\
name: validated
providers:
  fake: {type: openai, base_url: "URL", api_key_env: FAKE_KEY}
candidates: [{name: a, model: fake/model}]
judge: fake/judge
temperatures: [0]
scenarios:
  - name: judged
    prompt: hi
    criteria: [is polite]
"""

UNJUDGED = """\
  - name: unjudged
    prompt: hello
"""

CHECKED_ONLY = """\
name: checks-only
providers:
  fake: {type: openai, base_url: "URL", api_key_env: FAKE_KEY}
candidates: [{name: a, model: fake/model}]
temperatures: [0]
scenarios:
  - name: checked
    prompt: hi
    expect: [{contains: hi}]
"""

ADDRESS_ERROR = (
    "Model address 'nojudge' must be provider/model, e.g. local/smollm2 or openai/gpt-4o-mini"
)


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeServer]:
    monkeypatch.setenv("FAKE_KEY", KEY)
    with FakeServer(require_key=KEY) as srv:
        yield srv


def _write(tmp_path: Path, server: FakeServer, text: str = SUITE) -> Path:
    path = tmp_path / "suite.yaml"
    path.write_text(text.replace("URL", server.base_url))
    return path


def _db(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'q.db'}"


def _runs(db: str) -> list[str]:
    with Store.open(db) as store:
        return [r.id for r in store.list_runs()]


def _cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    capsys.readouterr()
    with pytest.raises(SystemExit) as caught:
        main(argv)
    code = caught.value.code
    assert isinstance(code, int)
    return code, capsys.readouterr().err


# ---------------------------------------------------------------- threshold


@pytest.mark.parametrize("threshold", [42, -1, 10.5, math.nan, "7"])
def test_qualspec_run_refuses_a_threshold_outside_0_to_10_before_any_call(
    threshold: Any, server: FakeServer, tmp_path: Path
) -> None:
    suite, db = _write(tmp_path, server), _db(tmp_path)
    with pytest.raises(ConfigError, match=r"^--threshold must be .*between 0 and 10, got"):
        qualspec.run(str(suite), db=db, threshold=threshold)
    assert server.calls == 0
    assert _runs(db) == []


def test_session_run_refuses_a_threshold_outside_0_to_10_before_any_call(
    server: FakeServer, tmp_path: Path
) -> None:
    suite, db = _write(tmp_path, server), _db(tmp_path)

    async def run() -> None:
        async with Session(db=db) as session:
            await session.run(str(suite), threshold=42)

    with pytest.raises(ConfigError) as caught:
        asyncio.run(run())
    assert str(caught.value) == "--threshold must be between 0 and 10, got 42"
    assert server.calls == 0
    assert _runs(db) == []


def test_plan_with_judge_checks_what_it_replaces(server: FakeServer, tmp_path: Path) -> None:
    plan = expand(load_suite(_write(tmp_path, server)))
    with pytest.raises(ConfigError, match="between 0 and 10, got 42"):
        plan.with_judge(threshold=42)
    with pytest.raises(ConfigError) as caught:
        plan.with_judge(model="nojudge")
    assert str(caught.value) == ADDRESS_ERROR
    # good values are kept as a suite's are: the threshold a float, on every judge
    changed = plan.with_judge(model="fake/other", threshold=7)
    assert changed.threshold == 7.0 and isinstance(changed.threshold, float)
    assert [(j.model, j.threshold) for j in changed.judges] == [("fake/other", 7.0)]
    assert all(isinstance(j.threshold, float) for j in changed.judges)
    assert plan.with_judge() is plan
    assert server.calls == 0


def test_the_command_line_message_for_a_threshold_is_unchanged(
    server: FakeServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = str(_write(tmp_path, server))
    code, err = _cli(["run", suite, "--dry-run", "--threshold", "42"], capsys)
    assert code == 2
    assert "argument --threshold: expected a score from 0 to 10, got 42" in err
    assert _cli(["run", suite, "--dry-run", "--threshold", "7"], capsys)[0] == 0
    assert server.calls == 0


# ---------------------------------------------------------------- judge address


def test_a_malformed_judge_is_refused_even_where_no_judge_would_be_called(
    server: FakeServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # expect: checks only: the criteria judge is never called, yet --judge nojudge is
    # refused by the command line; the library refuses it with the same line
    suite, db = _write(tmp_path, server, CHECKED_ONLY), _db(tmp_path)
    with pytest.raises(ConfigError) as caught:
        qualspec.run(str(suite), db=db, judge="nojudge")
    assert str(caught.value) == ADDRESS_ERROR
    assert server.calls == 0
    assert _runs(db) == []
    code, err = _cli(["run", str(suite), "--dry-run", "--judge", "nojudge"], capsys)
    assert code == 2
    assert err.strip() == f"qualspec: error: {ADDRESS_ERROR} (see docs/reference/cli.md)"


# ---------------------------------------------------------------- nothing to judge


def test_a_scenario_with_nothing_to_judge_is_refused_by_the_library_as_by_the_cli(
    server: FakeServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite, db = _write(tmp_path, server, SUITE + UNJUDGED), _db(tmp_path)
    with pytest.raises(SpecError) as caught:
        qualspec.run(str(suite), db=db)
    (issue,) = caught.value.issues
    line = str(issue)
    assert line.startswith(f"{suite}:11:5: error: scenarios[1]: scenario 'unjudged' has no")
    assert line.endswith("or run with --no-judge")
    assert server.calls == 0
    assert _runs(db) == []
    # the command line prints the same line, exit 2 (dry run or not)
    for extra in (["--dry-run"], ["-q", "--db", db]):
        code, err = _cli(["run", str(suite), *extra], capsys)
        assert code == 2
        assert err.strip() == f"{line} (see docs/reference/suite.md)"
    assert server.calls == 0
    # filtered out, or not judged, it is fine
    qualspec.run(str(suite), db=db, scenarios=["judged"], options=ExecuteOptions(calibrate=False))
    assert server.calls == 2  # one answer, one judgment
    server.reset()
    outcome = qualspec.run(str(suite), db=db, options=ExecuteOptions(judge=False))
    assert outcome.status == "finished" and server.calls == 1  # the new scenario's answer


# ---------------------------------------------------------------- call options


OPTIONS: list[tuple[Callable[[], object], str]] = [
    (lambda: ExecuteOptions(max_concurrency=0), "max_concurrency: expected a whole number of 1"),
    (lambda: ExecuteOptions(max_concurrency=-3), "max_concurrency: expected a whole number of 1"),
    (lambda: ExecuteOptions(max_concurrency=2.5), "max_concurrency: expected a whole number"),  # type: ignore[arg-type]
    (lambda: ExecuteOptions(timeout=0), "timeout: expected a finite number above 0"),
    (lambda: ExecuteOptions(timeout=math.inf), "timeout: expected a finite number above 0"),
    (lambda: ExecuteOptions(timeout=math.nan), "timeout: expected a finite number above 0"),
    (lambda: ExecuteOptions(max_cost=-1), "max_cost: expected a finite number above 0"),
    (lambda: ExecuteOptions(max_cost=math.nan), "max_cost: expected a finite number above 0"),
    (lambda: ExecuteOptions(store_retry_s=-5), "store_retry_s: expected a finite number above 0"),
    (
        lambda: ExecuteOptions(retry=RetryPolicy(max_attempts=0)),
        "retry.max_attempts: expected a whole number of 1 or more",
    ),
    (lambda: ExecuteOptions(cache_ttl={"bogus": 5}), "cache_ttl: unknown kind 'bogus'"),
    (lambda: ExecuteOptions(cache_ttl={"candidate": -5}), r"cache_ttl\['candidate'\]: expected"),
    (lambda: ExecuteOptions(cache_ttl={"judge": math.nan}), r"cache_ttl\['judge'\]: expected"),
    (lambda: ExecuteOptions(refresh_kinds=("answers",)), "refresh_kinds: unknown kind"),
    (lambda: Session(max_cost=0), "max_cost: expected a finite number above 0"),
    (lambda: Session(max_cost=-1), "max_cost: expected a finite number above 0"),
]


@pytest.mark.parametrize(("make", "message"), OPTIONS)
def test_options_the_cli_refuses_as_flags_are_refused_in_python(
    make: Callable[[], object], message: str
) -> None:
    with pytest.raises(ConfigError, match=message) as caught:
        make()
    assert "\n" not in str(caught.value)


def test_qualspec_run_refuses_a_budget_below_zero_before_any_call(
    server: FakeServer, tmp_path: Path
) -> None:
    suite, db = _write(tmp_path, server), _db(tmp_path)
    with pytest.raises(ConfigError, match="max_cost"):
        qualspec.run(str(suite), db=db, max_cost=-1)
    assert server.calls == 0


def test_sensible_options_are_accepted() -> None:
    options = ExecuteOptions(
        max_concurrency=1,
        timeout=0.5,
        retry=RetryPolicy(max_attempts=1),
        max_cost=0.01,
        store_retry_s=1,
        cache_ttl={"candidate": 0, "judge": None, "reference": 3600},
        refresh_kinds=("reference",),
    )
    assert options.max_concurrency == 1
    assert Session(max_cost=2.5).options.max_cost == 2.5
