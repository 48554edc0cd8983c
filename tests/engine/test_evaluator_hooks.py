"""The engine learns what an evaluator plans and prepares through the protocol's hooks,
not by its type (issue 18, item 1): ``planned_calls`` and ``planned_preparation`` for the
dry run, ``prepare`` before (and alongside) the run's calls, recorded in the run's
metadata. An evaluator with only the older members still runs, with the defaults."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import helpers_hooks
import pytest

from qualspec import Candidate, Evaluation, EvaluatorConfig, ExecuteOptions, Scenario, Session
from qualspec.engine import Evaluator, estimate, expand, with_defaults
from qualspec.spec import ProviderConfig, load_evaluation
from qualspec.testing import FakeServer

HOOKED = "helpers_hooks:hooked"


def _evaluation(base_url: str = "http://127.0.0.1:9") -> Evaluation:
    return Evaluation(
        name="hooks",
        candidates=[Candidate(name="c", model="fake/model-a")],
        scenarios=[
            Scenario(name="s", prompt="q {{ i }}", inputs=[{"i": 1}, {"i": 2}], criteria=["ok"])
        ],
        judges=[
            EvaluatorConfig(type=HOOKED, name="one", model="fake/judge"),
            EvaluatorConfig(type=HOOKED, name="two", model="fake/judge"),
        ],
        providers={
            "fake": ProviderConfig(type="openai", base_url=base_url, api_key_env="FAKE_KEY")
        },
    )


def test_the_dry_run_counts_what_the_hooks_plan(tmp_path: Path) -> None:
    plan = expand(load_evaluation(_evaluation(), tmp_path))
    est = estimate(plan, None, calibrate=True)
    assert est.judge_calls == 2 * 2 * 3  # two evaluators, two answers, three calls each
    assert est.max_judge_calls == 2 * est.judge_calls  # each asked once more
    # one preparation for both (the same key), as the run makes it once
    assert est.calibration_calls == 5
    assert [(c.model, c.pairs, c.calls) for c in est.calibrations] == [("fake/judge", 2, 5)]
    assert estimate(plan, None, calibrate=False).calibration_calls == 0


def test_a_run_records_what_prepare_returned(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_KEY", "sk-test")
    helpers_hooks.PREPARED.clear()
    with FakeServer() as server:

        async def main() -> Any:
            options = ExecuteOptions(use_cache=False)
            async with Session(db=f"sqlite:///{tmp_path / 'q.db'}", options=options) as s:
                return await s.run(_evaluation(server.base_url))

        outcome = asyncio.run(main())
    assert outcome.status == "finished"
    recorded = outcome.record.summary.metadata["judge_calibration"]
    assert recorded == {
        "one": {"measured": 7, "calibrate": True},
        "two": {"measured": 7, "calibrate": True},
    }
    assert helpers_hooks.PREPARED == ["one"]  # made once for both (``ctx.once``)
    assert outcome.warnings[:2] == ["one prepared", "two prepared"]


class _Older:
    """An evaluator written before the hooks: the core members only."""

    name = "older"
    scope = "response"
    model = None
    threshold = None

    def prompt(self) -> None:
        return None

    def group_of(self, item: Any) -> None:
        return None

    def aspects(self, items: Any) -> tuple[str, ...]:
        return ("a", "b")

    async def evaluate(self, subject: Any, aspect: str, ctx: Any) -> Any:
        raise AssertionError("not called here")


def test_an_older_evaluator_gets_the_defaults() -> None:
    older = _Older()
    evaluator = with_defaults(older)
    assert isinstance(evaluator, Evaluator)
    assert tuple(evaluator.kinds) == ("candidate",) and evaluator.uses_dependencies is True
    assert evaluator.name == "older" and evaluator.aspects([]) == ("a", "b")
    assert evaluator.planned_calls([]) == ()  # it calls no model
    assert evaluator.planned_preparation(calibrate=True, calibrated=None) == ()
    assert asyncio.run(evaluator.prepare(None)) is None  # type: ignore[arg-type]
    full = helpers_hooks.Hooked("h", "fake/judge")
    assert with_defaults(full) is full  # an evaluator with every member is itself
