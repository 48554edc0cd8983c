"""scoring: expected on the embedded model (SmolLM2 via llama-cpp-python): the judge asks
for token log-probabilities, and the expected score and its mass are recorded (issue 21)."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers_expected import assert_expected_consistent

from qualspec import Candidate, Evaluation, ExecuteOptions, Scenario
from qualspec.engine import execute_plan, expand
from qualspec.spec import load_evaluation
from qualspec.store import Store

pytestmark = pytest.mark.embedded_model


@pytest.mark.timeout(900)
def test_the_embedded_judge_records_an_expected_score_and_its_mass(tmp_path: Path) -> None:
    evaluation = Evaluation(
        name="expected-embedded",
        candidates=[Candidate(name="smol", model="local/smollm2", params={"max_tokens": 24})],
        scenarios=[
            Scenario(
                name="capital",
                prompt="What is the capital of France? Answer in one sentence.",
                criteria=["names Paris as the capital"],
            )
        ],
        judge={"model": "local/smollm2", "params": {"max_tokens": 64}, "scoring": "expected"},
    )
    suite = load_evaluation(evaluation, tmp_path)
    with Store.open(f"sqlite:///{tmp_path / 'q.db'}") as store:
        # no call time limit a loaded machine could reach (the test's own is the hang guard)
        options = ExecuteOptions(calibrate=False, timeout=600)
        out = execute_plan(suite, expand(suite), store=store, options=options, argv=[])
    assert out.status == "finished"
    (judgment,) = out.record.judgments
    assert judgment.error is None and judgment.raw_text
    assert judgment.details is not None
    assert_expected_consistent(judgment.score, judgment.details)
    assert judgment.passed == (judgment.score is not None and judgment.score >= 7)
