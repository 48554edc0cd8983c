"""The Lab end to end on the embedded model (SmolLM2-135M via llama.cpp): two rounds at
most, short answers; whatever the small model writes, the result is consistent and every
call is recorded in the Lab's own run."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from qualspec import ExecuteOptions, Session
from qualspec.lab import LAB_SUITE, GenerateAnswerResponse, agenerate_answer
from qualspec.store import Store

pytestmark = [pytest.mark.timeout(900), pytest.mark.embedded_model]


def test_the_lab_runs_on_the_embedded_model(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'lab.db'}"

    async def lab() -> GenerateAnswerResponse:
        # no call time limit a loaded machine could reach (the test's own is the hang guard)
        async with Session(db=db, options=ExecuteOptions(timeout=600)) as session:
            return await agenerate_answer(
                instruct="What is the capital of France?",
                resp_format="One short sentence",
                eval_crit="Names Paris as the capital",
                iter_max=2,
                score_threshold=1.0,
                model="local/smollm2",
                session=session,
                max_tokens=32,
                judge_max_tokens=160,
            )

    result = asyncio.run(lab())
    assert 1 <= result.total_iterations <= 2
    assert [i.iteration_number for i in result.iterations] == list(
        range(1, result.total_iterations + 1)
    )
    for iteration in result.iterations:
        assert iteration.error is None
        assert iteration.answer.strip()
        if iteration.evaluation is None:
            assert iteration.unscored_reason  # never an invented score
        else:
            assert 0.0 <= iteration.evaluation.score <= 1.0
    scored = [i for i in result.iterations if i.evaluation is not None]
    if scored:
        best = max(i.evaluation.score for i in scored if i.evaluation is not None)
        assert result.final_score == best
        assert result.final_answer in [i.answer for i in scored]
    else:
        assert result.final_score is None and result.success is False
    assert result.metadata["output_tokens"] > 0
    with Store.open(db) as store:
        record = store.load_run(result.metadata["run_id"])
    assert record.summary.suite_name == LAB_SUITE and record.summary.status == "finished"
    kinds = {r.kind for r in record.responses}
    assert kinds == {"lab", "lab_eval"}
    assert record.summary.metadata["lab"]["result"]["total_iterations"] == result.total_iterations
