"""The Lab on the fake server with scripted scores: stops at the threshold, returns the
best iteration (not the last), feeds each verdict back, never invents a score, and records
its calls in a run of its own."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from qualspec import ProviderConfig, Session
from qualspec.errors import ConfigError
from qualspec.lab import LAB_SUITE, agenerate_answer, generate_answer
from qualspec.store import Store
from qualspec.testing import FakeServer, LabScript

KEY_ENV = "FAKE_LAB_KEY"


@pytest.fixture
def script() -> LabScript:
    return LabScript(scores=[0.5])


def _serve(script: LabScript, monkeypatch: pytest.MonkeyPatch) -> FakeServer:
    monkeypatch.setenv(KEY_ENV, "sk-lab")
    return FakeServer(judge_reply=script.evaluate, answer=script.generate)


def _providers(server: FakeServer) -> dict[str, ProviderConfig]:
    return {"fake": ProviderConfig(type="openai", base_url=server.base_url, api_key_env=KEY_ENV)}


def _lab(server: FakeServer, db: Path, **kw: object) -> object:
    args: dict[str, object] = {
        "instruct": "Explain tides",
        "resp_format": "Two sentences",
        "eval_crit": "Mentions the moon",
        "model": "fake/gen",
        "judge_model": "fake/eval",
        "providers": _providers(server),
        "db": f"sqlite:///{db}",
    }
    args.update(kw)
    return generate_answer(**args)  # type: ignore[arg-type]


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Path]:
    yield tmp_path / "lab.db"


def test_success_on_the_second_iteration(monkeypatch: pytest.MonkeyPatch, db: Path) -> None:
    script = LabScript(scores=[0.4, 0.9, 0.95])
    with _serve(script, monkeypatch) as server:
        result = _lab(server, db, iter_max=5, score_threshold=0.8)
    assert result.success is True  # type: ignore[attr-defined]
    assert result.total_iterations == 2  # type: ignore[attr-defined]
    assert result.final_score == 0.9  # type: ignore[attr-defined]
    assert result.final_answer == "Answer 2"  # type: ignore[attr-defined]
    assert [i.evaluation.score for i in result.iterations] == [0.4, 0.9]  # type: ignore[attr-defined]
    assert len(script.generation_prompts) == 2 and len(script.evaluation_prompts) == 2
    assert result.metadata["best_iteration"] == 2  # type: ignore[attr-defined]
    assert result.metadata["input_tokens"] > 0 and result.metadata["output_tokens"] > 0  # type: ignore[attr-defined]


def test_failure_returns_the_best_iteration_not_the_last(
    monkeypatch: pytest.MonkeyPatch, db: Path
) -> None:
    script = LabScript(scores=[0.3, 0.7, 0.5])
    with _serve(script, monkeypatch) as server:
        result = _lab(server, db, iter_max=3, score_threshold=0.8)
    assert result.success is False  # type: ignore[attr-defined]
    assert result.total_iterations == 3  # type: ignore[attr-defined]
    assert result.final_score == 0.7  # type: ignore[attr-defined]
    assert result.final_answer == "Answer 2"  # type: ignore[attr-defined]
    assert result.iterations[-1].answer == "Answer 3"  # type: ignore[attr-defined]
    assert result.metadata["best_iteration"] == 2  # type: ignore[attr-defined]


def test_feedback_from_iteration_one_is_in_the_prompt_of_iteration_two(
    monkeypatch: pytest.MonkeyPatch, db: Path
) -> None:
    script = LabScript(scores=[0.4, 0.9])
    with _serve(script, monkeypatch) as server:
        _lab(server, db, iter_max=3)
    first, second = script.generation_prompts
    assert "Feedback on your previous attempt" not in first
    assert "Verdict 1: rated 0.4." in second  # the reasoning
    assert "Suggestion 1: add an example" in second  # the suggestions
    assert "Rated 0.4 of 1.0" in second
    # generation and evaluation are separate calls: the evaluator sees the answer
    assert "Answer 1" in script.evaluation_prompts[0]
    assert "Mentions the moon" in script.evaluation_prompts[0]
    assert "Mentions the moon" not in first


def test_an_unreadable_verdict_is_unscored_never_invented(
    monkeypatch: pytest.MonkeyPatch, db: Path
) -> None:
    # 8 is a 0-10 score: not read as 0.8 or clamped to 1; the retry is unreadable too
    script = LabScript(scores=['{"score": 8, "meets_criteria": true, "evaluation_reasoning": "x"}'])
    with _serve(script, monkeypatch) as server:
        result = _lab(server, db, iter_max=2)
    assert result.final_score is None and result.success is False  # type: ignore[attr-defined]
    assert all(i.evaluation is None for i in result.iterations)  # type: ignore[attr-defined]
    assert "outside 0-1" in (result.iterations[0].unscored_reason or "")  # type: ignore[attr-defined]
    assert len(script.evaluation_prompts) == 4  # one parse retry per iteration
    assert "could not be read" in script.evaluation_prompts[1]


def test_the_calls_are_recorded_in_a_run_of_its_own(
    monkeypatch: pytest.MonkeyPatch, db: Path
) -> None:
    script = LabScript(scores=[0.4, 0.9])
    with _serve(script, monkeypatch) as server:
        result = _lab(server, db, iter_max=3)
    run_id = result.metadata["run_id"]  # type: ignore[attr-defined]
    with Store.open(f"sqlite:///{db}") as store:
        record = store.load_run(run_id)
    assert record.summary.suite_name == LAB_SUITE
    assert record.summary.status == "finished"
    kinds = sorted(r.kind for r in record.responses)
    assert kinds == ["lab", "lab", "lab_eval", "lab_eval"]
    stored = record.summary.metadata["lab"]
    assert stored["instruct"] == "Explain tides"
    assert stored["result"]["final_score"] == 0.9


@pytest.mark.asyncio
async def test_async_on_an_open_session_streams_each_iteration(
    monkeypatch: pytest.MonkeyPatch, db: Path
) -> None:
    script = LabScript(scores=[0.2, 0.6])
    seen: list[int] = []

    async def on_iteration(iteration: object) -> None:
        seen.append(iteration.iteration_number)  # type: ignore[attr-defined]

    with _serve(script, monkeypatch) as server:
        async with Session(db=f"sqlite:///{db}", providers=_providers(server)) as session:
            result = await agenerate_answer(
                "Explain tides",
                "Two sentences",
                "Mentions the moon",
                iter_max=2,
                model="fake/gen",
                session=session,
                on_iteration=on_iteration,
            )
    assert seen == [1, 2]
    assert result.final_score == 0.6 and result.final_answer == "Answer 2"


@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        ("iter_max", 0, "iter_max"),
        ("iter_max", 11, "iter_max"),
        ("score_threshold", 1.5, "score_threshold"),
        ("instruct", "", "instruct"),
    ],
)
def test_bad_arguments_name_the_field_before_any_call(
    monkeypatch: pytest.MonkeyPatch, db: Path, field: str, value: object, expected: str
) -> None:
    script = LabScript(scores=[0.9])
    with _serve(script, monkeypatch) as server:
        with pytest.raises(ConfigError, match=expected):
            _lab(server, db, **{field: value})
        assert server.calls == 0
