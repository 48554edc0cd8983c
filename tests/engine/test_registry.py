"""Issue 18, item 3: one plugin registry (entry-point group, ``module:attr``, did you mean)
under the evaluator, provider and test registries, and the testkit annotators and the
Lab's evaluator registered as evaluator types like the built-in judges.

The evaluator entry points are read from this checkout's ``pyproject.toml`` into a
distribution made for the test (on ``sys.path``), so the test sees what an install of it
declares whatever the installed copy says.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

import qualspec
from qualspec import Candidate, Evaluation, EvaluatorConfig, ExecuteOptions, Scenario
from qualspec.engine import Evaluator, available_evaluators, create_evaluator
from qualspec.errors import ConfigError
from qualspec.providers import ProviderPool
from qualspec.spec import ProviderConfig
from qualspec.store import Store
from qualspec.testing import FakeServer
from qualspec.testkit import load_test

REPO = Path(__file__).resolve().parents[2]
ANNOTATORS = {"regex", "keyword", "refusal", "json_schema", "similarity", "llm_judge"}


@pytest.fixture
def declared(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """The checkout's evaluator entry points, installed as a distribution of their own."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    group = project["entry-points"]["qualspec.evaluators"]
    dist = tmp_path / "site" / "qualspec_declared-0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: qualspec-declared\nVersion: 0\n")
    lines = [f"{name} = {value}" for name, value in group.items()]
    text = "[qualspec.evaluators]\n" + "\n".join(lines) + "\n"
    (dist / "entry_points.txt").write_text(text, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    return dict(group)


@pytest.fixture
def server() -> Iterator[FakeServer]:
    with FakeServer() as srv:
        yield srv


def test_the_annotators_and_the_lab_evaluator_are_registered_evaluator_types(
    declared: dict[str, str],
) -> None:
    assert ANNOTATORS | {"lab", "criteria", "expect"} <= set(declared)
    assert ANNOTATORS | {"lab"} <= set(available_evaluators())
    options = {
        "regex": {"pattern": "Paris"},
        "keyword": {"keywords": ["Paris"]},
        "refusal": {"expected": False},
        "json_schema": {"schema": {"type": "object"}},
        "similarity": {"method": "lexical"},
        "llm_judge": {"criteria": "names Paris"},
        "lab": {"criteria": "names Paris", "format": "one sentence"},
    }
    for kind, given in options.items():
        made = create_evaluator(EvaluatorConfig(type=kind, name=f"my_{kind}", options=given))
        assert isinstance(made, Evaluator), kind
        assert made.name == f"my_{kind}"
    judge = create_evaluator(
        EvaluatorConfig(type="llm_judge", model="fake/j", threshold=6, options=options["llm_judge"])
    )
    assert (judge.model, judge.threshold) == ("fake/j", 6)


def test_an_annotator_type_refuses_bad_options_naming_its_entry(declared: dict[str, str]) -> None:
    with pytest.raises(ConfigError, match="evaluator 'r' of type regex: .*options:"):
        create_evaluator(EvaluatorConfig(type="regex", name="r", options={"pattern": ["x"]}))
    with pytest.raises(ConfigError, match="type lab: give options: {criteria"):
        create_evaluator(EvaluatorConfig(type="lab"))


def test_registered_annotators_and_the_lab_evaluator_judge_a_suite(
    declared: dict[str, str], server: FakeServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    judges = [
        EvaluatorConfig(type="keyword", options={"keywords": ["Answer"]}),
        EvaluatorConfig(type="lab", model="fake/judge", options={"criteria": "is an answer"}),
    ]
    evaluation = Evaluation(
        name="registered",
        candidates=[Candidate(name="c", model="fake/model-a")],
        scenarios=[Scenario(name="s", prompt="say {{ i }}", inputs=[{"i": 1}])],
        judges=judges,
        providers={"fake": ProviderConfig(type="openai", base_url=server.base_url)},
    )
    db = f"sqlite:///{tmp_path / 'q.db'}"
    outcome = qualspec.run(
        evaluation, db=db, temperatures=[0.0], options=ExecuteOptions(calibrate=False)
    )
    assert outcome.status == "finished"
    with Store.open(db) as store:
        record = store.load_run(outcome.run_id)
    (found,) = [j for j in record.judgments if j.evaluator == "keyword"]
    assert found.passed is True and found.score == 10.0
    (lab,) = [j for j in record.judgments if j.evaluator == "lab"]
    assert lab.criterion == "is an answer" and lab.judge_model == "fake/judge"
    assert lab.error is None  # the fake server's reply is read, or unscored with a reason
    assert lab.score is not None or lab.unscored_reason


def test_every_registry_suggests_the_closest_name() -> None:
    with pytest.raises(ConfigError, match="unknown evaluator type 'critera': did you mean"):
        create_evaluator(EvaluatorConfig(type="critera"))
    with pytest.raises(ConfigError, match="unknown test 'refusl': did you mean 'refusal'"):
        load_test("refusl")
    with pytest.raises(ConfigError, match="Unknown provider 'opnai': did you mean 'openai'"):
        ProviderPool().get("opnai")
    with pytest.raises(ConfigError, match="cannot be loaded .*give module:TestClass"):
        load_test("qualspec_no_such_module:Test")
