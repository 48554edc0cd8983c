"""The embedded model (SmolLM2-135M via llama.cpp) answers a real prompt and judges it."""

from __future__ import annotations

from pathlib import Path

import pytest

from qualspec import Candidate, Evaluation, ExecuteOptions, Scenario
from qualspec.engine import execute_plan, expand
from qualspec.spec import load_evaluation
from qualspec.store import Store

pytestmark = pytest.mark.embedded_model


def test_embedded_model_answers_and_is_judged(tmp_path: Path) -> None:
    evaluation = Evaluation(
        name="embedded",
        candidates=[Candidate(name="smol", model="local/smollm2", params={"max_tokens": 32})],
        scenarios=[
            Scenario(
                name="capital",
                prompt="What is the capital of France? Answer in one sentence.",
                criteria=["names Paris as the capital"],
            )
        ],
        judge={"model": "local/smollm2", "params": {"max_tokens": 96}},
    )
    suite = load_evaluation(evaluation, tmp_path)
    with Store.open(f"sqlite:///{tmp_path / 'q.db'}") as store:
        # no judge calibration here (16 more calls): the quickstart's README test shows it;
        # no call time limit a loaded machine could reach (the test's own is the hang guard)
        options = ExecuteOptions(calibrate=False, timeout=600)
        out = execute_plan(suite, expand(suite), store=store, options=options, argv=[])
    assert out.status == "finished"
    (response,) = out.record.responses
    assert response.error is None
    assert response.text and response.text.strip()
    assert response.output_tokens and response.output_tokens > 0
    # no temperatures: in the suite: llama-cpp-python's own default, recorded
    assert response.temperature is None and response.effective_temperature == 0.2
    (judgment,) = out.record.judgments
    assert judgment.error is None
    assert judgment.raw_text  # the judge really answered
    assert judgment.judge_model == "local/smollm2"
    if judgment.score is None:
        assert judgment.unscored_reason  # never an invented score
    else:
        assert 0 <= judgment.score <= 10
        assert judgment.passed == (judgment.score >= 7)
