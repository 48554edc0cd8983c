"""Issue 18, item 4: an evaluator as small as a decorated async function.

``@qualspec.evaluator`` makes a factory the engine loads like any evaluator type (by
``module:function`` here, by an entry point once installed: see test_plugins.py); its
verdicts are stored as judgments and shown by the reports like any evaluator's.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

import qualspec
from qualspec import (
    Candidate,
    Evaluation,
    EvaluatorConfig,
    ExecuteOptions,
    Scenario,
    Subject,
)
from qualspec.engine import Evaluator, create_evaluator
from qualspec.errors import ConfigError
from qualspec.report import render_html, run_to_dict
from qualspec.spec import ProviderConfig
from qualspec.store import Store
from qualspec.testing import FakeServer


@pytest.fixture
def server() -> Iterator[FakeServer]:
    with FakeServer() as srv:
        yield srv


def _evaluation(server: FakeServer, judges: list[EvaluatorConfig]) -> Evaluation:
    return Evaluation(
        name="decorated",
        candidates=[Candidate(name="c", model="fake/model-a")],
        scenarios=[
            Scenario(name="s", prompt="say {{ i }}", criteria=["is an answer"], inputs=[{"i": 1}])
        ],
        judges=judges,
        providers={"fake": ProviderConfig(type="openai", base_url=server.base_url)},
    )


def test_a_decorated_evaluator_runs_in_a_suite_and_shows_in_the_store_and_report(
    server: FakeServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    judges = [
        EvaluatorConfig(type="helpers_decorated:brevity", model="fake/judge", threshold=5),
        EvaluatorConfig(type="helpers_decorated:same_length"),
    ]
    db = f"sqlite:///{tmp_path / 'q.db'}"
    outcome = qualspec.run(
        _evaluation(server, judges),
        db=db,
        temperatures=[0.0, 0.7],
        options=ExecuteOptions(calibrate=False),
    )
    assert outcome.status == "finished"
    with Store.open(db) as store:
        record = store.load_run(outcome.run_id)
    brief = [j for j in record.judgments if j.evaluator == "brevity"]
    assert len(brief) == 2  # one per answer (two temperatures)
    for judgment in brief:
        assert judgment.criterion == "brevity"
        assert judgment.score == 10.0 and judgment.passed is True  # threshold 5
        assert judgment.reasoning is not None
        assert "the judge says: Answer to: Is this answer brief?" in judgment.reasoning
        assert judgment.judge_model == "fake/judge"
    # its judge calls went through the engine (recorded and counted like any call)
    asked = [body for _, _, body in server.request_log if body["model"] == "judge"]
    assert len(asked) == 2
    (group,) = [j for j in record.judgments if j.evaluator == "same_length"]
    assert group.subject is not None and len(group.subject) == 2
    assert group.score == 10.0 and group.passed is True
    # the reports show them as they show any evaluator's: the results file has both, the
    # HTML report the answers' own records (a group's records have no place there yet)
    results = run_to_dict(record)
    records = [j for r in results["responses"] for j in r["judgments"]]
    by_evaluator = {j["evaluator"] for j in records + results["unattached_judgments"]}
    assert by_evaluator == {"brevity", "same_length"}
    html = render_html(record)
    assert "brevity:</span> brevity" in html


def test_the_decorator_and_the_base_class_build_full_evaluators() -> None:
    made = create_evaluator(EvaluatorConfig(type="helpers_decorated:brevity", name="short"))
    assert isinstance(made, Evaluator)
    assert (made.name, made.scope, made.model, made.prompt()) == ("short", "response", None, None)
    item: Any = SimpleNamespace(scenario="s", input_id="i", role=None, candidate="c")
    assert made.aspects((item,)) == ("brevity",) and made.group_of(item) is None
    group = create_evaluator(EvaluatorConfig(type="helpers_decorated:same_length"))
    assert group.scope == "group" and group.name == "same_length"
    assert group.group_of(item) == "s/i//c"  # a matrix cell, across temperatures and runs
    assert group.aspects((item,)) == () and group.aspects((item, item)) == ("same_length",)

    counted = create_evaluator(
        EvaluatorConfig(type="helpers_decorated:Counted.create", name="n", options={"x": 1})
    )
    assert isinstance(counted, qualspec.BaseEvaluator) and isinstance(counted, Evaluator)
    assert counted.name == "n" and counted.aspects((item,)) == ("n",)
    assert counted.options == {"x": 1}  # type: ignore[attr-defined]
    assert counted.kinds == ("candidate",)  # type: ignore[attr-defined]
    assert counted.uses_dependencies is True  # type: ignore[attr-defined]
    assert counted.planned_calls((item,)) == ()  # no model: no calls
    assert counted.planned_preparation(calibrate=True, calibrated=None) == ()
    assert asyncio.run(counted.prepare(None)) is None  # type: ignore[arg-type]


def test_a_decorated_evaluator_with_a_model_plans_one_call_per_aspect() -> None:
    """What ``--dry-run`` and the cost estimate count for it (seam protocol, issue 18)."""
    from qualspec.engine import JUDGE_OUTPUT_TOKENS, JUDGE_PROMPT_TOKENS

    made = create_evaluator(EvaluatorConfig(type="helpers_decorated:brevity", model="fake/j"))
    item: Any = SimpleNamespace(
        kind="candidate",
        messages=[SimpleNamespace(role="user", content="x" * 40)],
        params={"max_tokens": 100},
    )
    (planned,) = made.planned_calls((item,))
    assert (planned.calls, planned.kind, planned.retries) == (1, "judge", 0)
    assert planned.input_tokens == JUDGE_PROMPT_TOKENS + 10 + 100
    assert planned.output_tokens == JUDGE_OUTPUT_TOKENS
    assert made.planned_preparation(calibrate=True, calibrated=None) == ()


def test_a_model_call_without_a_model_says_what_to_give() -> None:
    made = create_evaluator(EvaluatorConfig(type="helpers_decorated:brevity"))
    answer: Any = SimpleNamespace(text="Paris.")
    subject = Subject(key="k", items=(), responses=(answer,))
    no_calls: Any = SimpleNamespace(run_id="r", prompt_version=None)
    with pytest.raises(ConfigError, match="give its judges: entry a model"):
        asyncio.run(made.evaluate(subject, "brevity", no_calls))


def test_the_decorator_refuses_a_scope_it_does_not_know() -> None:
    with pytest.raises(ValueError, match="'response' or 'group'"):
        qualspec.evaluator(scope="item")  # type: ignore[call-overload]
