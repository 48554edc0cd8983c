"""The test API on the fake server: the built-in tests with scripted completions whose
measurements are known, annotators (cached and stored), and test runs as stored runs."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from qualspec.spec import ProviderConfig
from qualspec.store import Store
from qualspec.testing import FakeServer
from qualspec.testkit import (
    Annotator,
    GenderStereotypeTest,
    ItemResult,
    JSONSchemaAnnotator,
    KeywordAnnotator,
    LLMJudgeAnnotator,
    MeasuredItem,
    MultipleChoiceTest,
    Prompt,
    PromptResponseTest,
    RefusalAnnotator,
    RefusalTest,
    RegexAnnotator,
    SimilarityAnnotator,
    TestItem,
    group_by_context,
    max_of,
    mean_of,
    min_of,
    sum_of,
)

# what each scripted SUT answers, by the prompt's text
STEREOTYPED = {"She is": "nurse", "He is": "doctor", "They are": "doctor"}
NEUTRAL = {"She is": "doctor", "He is": "doctor", "They are": "doctor"}
REFUSAL = "I'm sorry, but I can't help with that."


def _last(body: dict[str, Any]) -> str:
    return str(body["messages"][-1]["content"])


def _answer(body: dict[str, Any]) -> str:
    text, model = _last(body), body["model"]
    if model in ("stereotyped", "neutral"):
        table = STEREOTYPED if model == "stereotyped" else NEUTRAL
        return next(word for cue, word in table.items() if cue in text)
    if model == "careful":  # refuses the harmful prompts only
        return REFUSAL if ("bomb" in text or "phishing" in text) else "Boil it for 8 minutes."
    if model == "refuses-all":
        return REFUSAL
    if model == "right":
        return {"France": "B", "spider": "C", "photosynthesis": "A"}[
            next(k for k in ("France", "spider", "photosynthesis") if k in text)
        ]
    if model == "wrong":
        return "D"
    return f'{{"city": "Paris", "echo": {json.dumps(text[:20])}}}'


@pytest.fixture
def server() -> Iterator[FakeServer]:
    def judge(body: dict[str, Any]) -> str:
        good = "Paris" in json.dumps(body["messages"])
        return json.dumps({"score": 9 if good else 3, "reasoning": "Checked the answer."})

    with FakeServer(answer=_answer, judge_reply=judge) as srv:
        yield srv


def _run(
    test: PromptResponseTest,
    suts: Sequence[str],
    server: FakeServer,
    db: str,
    **kwargs: Any,
) -> Any:
    providers = {"fake": ProviderConfig(type="openai", base_url=server.base_url)}
    return test.run([f"fake/{s}" for s in suts], db=db, providers=providers, **kwargs)


def test_the_seed_example_nurse_doctor_doctor_counts_one_stereotype(
    server: FakeServer, tmp_path: Path
) -> None:
    db = f"sqlite:///{tmp_path / 'q.db'}"
    outcome = _run(GenderStereotypeTest(), ["stereotyped", "neutral"], server, db, limit=1)
    assert outcome.status == "finished"
    (item,) = outcome.items["fake/stereotyped"]
    # one item, three prompts, compared: the point of an item of several prompts
    assert item.result.item_id == "medical_profession"
    assert item.result.texts == ["nurse", "doctor", "doctor"]
    assert item.measurements["gender_stereotype_count"] == 1.0
    assert item.measurements["refuse_to_answer_count"] == 0.0
    # the similarity annotator compared the item's three answers (item scope)
    assert item.result.annotations["similarity"].details["method"] == "lexical"
    # each response carries its own annotations
    assert all("refusal" in r.annotations for r in item.result.responses)
    assert outcome.results["fake/stereotyped"]["gender_stereotype"] == 1.0
    assert outcome.results["fake/stereotyped"]["medical_profession_stereotype"] == 1.0
    (neutral,) = outcome.items["fake/neutral"]
    assert neutral.measurements["gender_stereotype_count"] == 0.0
    assert outcome.results["fake/neutral"]["gender_stereotype"] == 0.0
    assert server.calls == 6  # 3 prompts x 2 SUTs, no judge

    # stored as a run of suite "gender_stereotype", with its results in the metadata
    with Store.open(db) as store:
        (summary,) = store.list_runs(suite_name="gender_stereotype")
        record = store.load_run(summary.id)
    assert summary.status == "finished" and summary.n_responses == 6
    assert {r.input_id for r in record.responses} == {
        "medical_profession/p1",
        "medical_profession/p2",
        "medical_profession/p3",
    }
    evaluators = sorted({j.evaluator for j in record.judgments})
    assert evaluators == ["refusal", "similarity"]
    test_meta = summary.metadata["test"]
    assert test_meta["results"]["fake/stereotyped"]["gender_stereotype"] == 1.0
    assert test_meta["measurements"]["fake/stereotyped"]["medical_profession"] == {
        "gender_stereotype_count": 1.0,
        "refuse_to_answer_count": 0.0,
        "completion_similarity": item.measurements["completion_similarity"],
    }


def test_the_refusal_test_tells_careful_from_over_refusing(
    server: FakeServer, tmp_path: Path
) -> None:
    db = f"sqlite:///{tmp_path / 'q.db'}"
    outcome = _run(RefusalTest(), ["careful", "refuses-all"], server, db)
    assert outcome.results["fake/careful"] == {
        "accuracy": 1.0,
        "refusal_rate": 1.0,
        "over_refusal_rate": 0.0,
    }
    assert outcome.results["fake/refuses-all"] == {
        "accuracy": 0.5,
        "refusal_rate": 1.0,
        "over_refusal_rate": 1.0,
    }


def test_the_multiple_choice_test_keeps_the_answer_in_the_context(
    server: FakeServer, tmp_path: Path
) -> None:
    db = f"sqlite:///{tmp_path / 'q.db'}"
    outcome = _run(MultipleChoiceTest(), ["right", "wrong"], server, db)
    # the README's name for the result: accuracy (each item's measurement is `correct`)
    assert outcome.results["fake/right"] == {"accuracy": 1.0, "answered": 1.0}
    assert outcome.results["fake/wrong"] == {"accuracy": 0.0, "answered": 1.0}
    # the correct answer never reaches the SUT
    assert len(server.request_log) == 6
    for _, _, body in server.request_log:
        assert '"answer"' not in json.dumps(body)  # the context's key, nowhere in a request
        assert _last(body).endswith("Answer with the letter only.")
    first = outcome.items["fake/right"][0].result
    assert first.item.context == {"answer": "B"}
    assert first.responses[0].annotations["letter"].details["match"] == "B"


class _AllAnnotators(PromptResponseTest):
    name = "all_annotators"
    max_tokens = 50

    def make_test_items(self) -> Sequence[TestItem]:
        return [
            TestItem([Prompt("Where is the Eiffel tower?"), "Name a city."], context="a"),
            TestItem(["Which city is the capital of France?"], context="b", id="single"),
        ]

    def get_annotators(self) -> Mapping[str, Annotator]:
        return {
            "judge": LLMJudgeAnnotator("Mentions Paris", model="fake/judge", threshold=7),
            "json": JSONSchemaAnnotator({"type": "object", "required": ["city"]}),
            "city": RegexAnnotator(r'"city": "(\w+)"'),
            "kw": KeywordAnnotator(["paris", "london"]),
            "refusal": RefusalAnnotator(expected=False),
            "similar": SimilarityAnnotator(),
        }

    def measure_quality(self, item: ItemResult) -> dict[str, float]:
        first = item.responses[0].annotations
        out = {
            "judge": first["judge"].score or 0.0,
            "json_ok": float(bool(first["json"].passed)),
            "paris": float(first["city"].details["match"] == "Paris"),
            "keywords": float(len(first["kw"].details["found"])),
            "answered": float(bool(first["refusal"].passed)),
        }
        similarity = item.annotations["similar"].details.get("similarity")
        if similarity is not None:
            out["similarity"] = float(similarity)
        return out


def test_every_annotator_annotates_and_annotations_are_cached_and_stored(
    server: FakeServer, tmp_path: Path
) -> None:
    db = f"sqlite:///{tmp_path / 'q.db'}"
    outcome = _run(_AllAnnotators(), ["json-sut"], server, db)
    assert outcome.status == "finished", outcome.warnings
    first, single = outcome.items["fake/json-sut"]
    assert first.measurements["judge"] == 9.0  # the judge saw "Paris" and scored it 9
    assert first.measurements == {
        "judge": 9.0,
        "json_ok": 1.0,
        "paris": 1.0,
        "keywords": 1.0,
        "answered": 1.0,
        "similarity": first.measurements["similarity"],
    }
    assert 0.0 < first.measurements["similarity"] < 1.0
    assert "similarity" not in single.measurements  # one answer: nothing to compare
    unscored = single.result.annotations["similar"]
    assert unscored.score is None and unscored.unscored_reason == (
        "fewer than two responses to compare"
    )
    judge = first.result.responses[0].annotations["judge"]
    assert judge.reasoning == "Checked the answer." and judge.passed is True
    calls = server.calls
    assert calls == 3 + 3  # 3 answers, 3 judge calls

    # a second run: every answer and every judge call from the cache, annotations stored
    again = _run(_AllAnnotators(), ["json-sut"], server, db)
    assert server.calls == calls
    assert again.results == outcome.results
    with Store.open(db) as store:
        record = store.load_run(again.run_id)
    judged = [j for j in record.judgments if j.evaluator == "judge"]
    assert len(judged) == 3 and all(j.cached for j in judged)
    assert {j.evaluator for j in record.judgments} == {
        "judge",
        "json",
        "city",
        "kw",
        "refusal",
        "similar",
    }


def test_the_helpers_aggregate_and_group_measurements() -> None:
    def measured(context: Any, value: float) -> MeasuredItem:
        result = ItemResult(TestItem(["x"], context=context), "i", "sut", ())
        return MeasuredItem(result, {"m": value})

    items = [measured({"g": "a"}, 1.0), measured({"g": "b"}, 0.0), measured({"g": "a"}, 3.0)]
    assert mean_of(items, "m") == pytest.approx(4 / 3)
    assert (sum_of(items, "m"), min_of(items, "m"), max_of(items, "m")) == (4.0, 0.0, 3.0)
    assert mean_of(items, "missing") is None and sum_of([], "m") == 0.0
    groups = group_by_context(items, key=lambda c: c["g"])
    assert {k: mean_of(v, "m") for k, v in groups.items()} == {"a": 2.0, "b": 0.0}
    assert list(group_by_context(items)) == [(("g", "a"),), (("g", "b"),)]


def test_a_failed_answer_is_measured_as_missing_and_resume_asks_only_for_it(
    server: FakeServer, tmp_path: Path
) -> None:
    from qualspec.engine import ExecuteOptions, RetryPolicy

    db = f"sqlite:///{tmp_path / 'q.db'}"
    once = ExecuteOptions(retry=RetryPolicy(max_attempts=1))
    server.fail_next(1, status=500)
    first = _run(MultipleChoiceTest(), ["right"], server, db, options=once)
    assert server.calls == 3
    failed = [m for m in first.items["fake/right"] if m.result.responses[0].error is not None]
    assert len(failed) == 1  # handed back with its error, text None, and measured
    assert failed[0].result.responses[0].text is None
    assert failed[0].measurements == {"answered": 0.0, "correct": 0.0}
    resumed = _run(MultipleChoiceTest(), ["right"], server, db, resume=first.run_id)
    assert resumed.run_id == first.run_id
    assert server.calls == 4  # only the failed answer is asked again
    assert resumed.results["fake/right"] == {"accuracy": 1.0, "answered": 1.0}


def test_replay_only_answers_from_the_cache_and_calls_no_model(
    server: FakeServer, tmp_path: Path
) -> None:
    from qualspec.engine import ExecuteOptions

    db = f"sqlite:///{tmp_path / 'q.db'}"
    recorded = _run(MultipleChoiceTest(), ["right"], server, db)
    calls = server.calls
    replay = ExecuteOptions(replay_only=True)
    again = _run(MultipleChoiceTest(), ["right"], server, db, options=replay)
    assert server.calls == calls
    assert again.results == recorded.results
    # a SUT never recorded: every answer is an error that says so, and still no call
    unknown = _run(MultipleChoiceTest(), ["wrong"], server, db, options=replay)
    assert server.calls == calls
    errors = [r.error for m in unknown.items["fake/wrong"] for r in m.result.responses]
    assert errors and all(e is not None and e.startswith("not recorded") for e in errors)


def test_a_judge_result_says_what_it_judged() -> None:
    from qualspec.testkit import JudgeResult

    failed = JudgeResult("Is polite", 4.0, 7.0, "Curt.", "fake/judge")
    assert not failed and not failed.passed
    assert failed.explain().splitlines() == [
        "qualspec judge fake/judge: FAILED: score 4 < threshold 7",
        "  criteria: Is polite",
        "  score: 4/10",
        "  reasoning: Curt.",
    ]
    assert repr(failed) == (
        "<JudgeResult FAILED: score 4 < threshold 7 | criteria: 'Is polite' | "
        "reasoning: 'Curt.' | judge fake/judge>"
    )
    assert JudgeResult("Is polite", 7.0, 7.0, None, "fake/judge").passed
    unscored = JudgeResult("x", None, 7.0, None, "j", unscored_reason="no JSON")
    assert not unscored.passed and "UNSCORED (no JSON)" in unscored.explain()
