"""The engine knows no evaluator by its type (issue 18, item 1): what it did for the
criteria judge because its type was ``criteria`` it now does for any evaluator that
declares ``scores_criteria`` (the built-in does), a plugin included:

* left out of a run whose answers have no criteria (nothing to call, prepare or check);
* a judged run with one refuses a scenario with nothing to judge;
* its calls are the plan's ``judge_calls`` (the progress bar's total).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import qualspec
from qualspec import Candidate, Evaluation, EvaluatorConfig, Scenario
from qualspec.engine import check_plan, create_evaluator, expand, with_defaults
from qualspec.errors import SpecError
from qualspec.spec import ExpectCheck, ProviderConfig, load_evaluation

SCORER = "helpers_criteria_plugin:CriteriaScorer.create"
READER = "helpers_criteria_plugin:Reader.create"
BUILT_IN = "criteria"


def _suite(tmp_path: Path, judge_type: str, scenario: Scenario) -> qualspec.LoadedSuite:
    evaluation = Evaluation(
        name="plugin",
        candidates=[Candidate(name="c", model="fake/model")],
        scenarios=[scenario],
        judges=[EvaluatorConfig(type=judge_type, name="scorer", model="fake/judge")],
        providers={"fake": ProviderConfig(type="openai", base_url="http://127.0.0.1:9")},
    )
    return load_evaluation(evaluation, tmp_path)


def _judged(criteria: list[str]) -> Scenario:
    return Scenario(name="s", prompt="q {{ i }}", inputs=[{"i": 1}, {"i": 2}], criteria=criteria)


@pytest.mark.parametrize("judge_type", [BUILT_IN, SCORER])
def test_it_declares_that_it_scores_criteria(judge_type: str) -> None:
    evaluator = create_evaluator(EvaluatorConfig(type=judge_type, model="fake/judge"))
    assert evaluator.scores_criteria is True
    reader = create_evaluator(EvaluatorConfig(type=READER, model="fake/judge"))
    assert reader.scores_criteria is False


@pytest.mark.parametrize("judge_type", [BUILT_IN, SCORER])
def test_it_is_left_out_of_a_run_without_criteria(tmp_path: Path, judge_type: str) -> None:
    checks_only = Scenario(name="s", prompt="q", expect=[ExpectCheck(contains="a")])
    plan = expand(_suite(tmp_path, judge_type, checks_only))
    assert [c.label for c in plan.run_evaluators()] == ["expect"]  # checks need no judge
    scored = expand(_suite(tmp_path, judge_type, _judged(["brief"])))
    assert [c.label for c in scored.run_evaluators()] == ["scorer"]
    # an evaluator that does not score criteria runs whatever the answers' criteria
    assert [c.label for c in expand(_suite(tmp_path, READER, checks_only)).run_evaluators()] == [
        "scorer",
        "expect",
    ]


@pytest.mark.parametrize("judge_type", [BUILT_IN, SCORER])
def test_a_judged_run_with_it_refuses_a_scenario_with_nothing_to_judge(
    tmp_path: Path, judge_type: str
) -> None:
    suite = _suite(tmp_path, judge_type, _judged([]))
    with pytest.raises(SpecError, match="nothing to judge|criteria"):
        check_plan(suite, expand(suite))
    check_plan(suite, expand(suite), judge=False)  # unjudged: fine
    reader = _suite(tmp_path, READER, _judged([]))
    check_plan(reader, expand(reader))  # it reads the answers its own way: fine


@pytest.mark.parametrize("judge_type", [BUILT_IN, SCORER])
def test_its_calls_are_the_plans_judge_calls(tmp_path: Path, judge_type: str) -> None:
    plan = expand(_suite(tmp_path, judge_type, _judged(["brief", "kind"])))
    assert plan.judge_calls == 2 * 2  # two answers, two criteria, one call each
    assert plan.criteria_judges == 1
    reader = expand(_suite(tmp_path, READER, _judged(["brief", "kind"])))
    assert reader.judge_calls == 0 and reader.criteria_judges == 0


def test_an_evaluator_without_the_newer_member_keeps_its_own_hooks() -> None:
    import helpers_hooks

    # every member but ``scores_criteria``: written before it existed
    members = {
        k: v
        for k, v in vars(helpers_hooks.Hooked).items()
        if k not in ("scores_criteria", "__dict__", "__weakref__")
    }
    earlier = type("Earlier", (), members)("e", "fake/judge")
    wrapped = with_defaults(earlier)
    assert wrapped.scores_criteria is False
    assert [p.calls for p in wrapped.planned_calls([])] == [3]  # its own, not the default
    assert [p.calls for p in wrapped.planned_preparation(calibrate=True, calibrated=None)] == [5]


def test_the_engine_names_no_evaluator_type() -> None:
    """No ``config.type == "..."`` and no ``EvaluatorConfig(type="...")`` in the engine."""
    engine = Path(qualspec.__file__).resolve().parent / "engine"
    found = []
    for path in sorted(engine.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Compare) and any(
                isinstance(op, ast.Eq | ast.NotEq) for op in node.ops
            ):
                sides = [node.left, *node.comparators]
                typed = any(isinstance(s, ast.Attribute) and s.attr == "type" for s in sides)
                named = any(isinstance(s, ast.Constant) and isinstance(s.value, str) for s in sides)
                if typed and named:
                    found.append(f"{path.name}:{node.lineno}")
            if isinstance(node, ast.Call):
                for kw in node.keywords:
                    if kw.arg == "type" and isinstance(kw.value, ast.Constant):
                        found.append(f"{path.name}:{node.lineno}")
    assert found == []
