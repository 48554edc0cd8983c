"""Annotator parameters: a list of criteria is natural for ``LLMJudgeAnnotator`` (judged
together, one annotation per response), and a wrong parameter fails at construction with
a clear error, never deep in a run after half a report (issue 17, item 14)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from qualspec.spec import ProviderConfig
from qualspec.testing import FakeServer
from qualspec.testkit import (
    Annotator,
    JSONSchemaAnnotator,
    KeywordAnnotator,
    LLMJudgeAnnotator,
    PromptResponseTest,
    RefusalAnnotator,
    RegexAnnotator,
    SimilarityAnnotator,
    TestItem,
)


@pytest.fixture
def server() -> Iterator[FakeServer]:
    def judge(body: dict[str, Any]) -> str:
        text = json.dumps(body["messages"])
        return json.dumps({"score": 9 if "Paris" in text else 3, "reasoning": "Checked."})

    with FakeServer(answer=lambda body: "Paris is the capital.", judge_reply=judge) as srv:
        yield srv


class _Capital(PromptResponseTest):
    def __init__(self, annotator: Annotator) -> None:
        self.annotator = annotator

    def make_test_items(self) -> list[TestItem]:
        return [TestItem(["What is the capital of France?"], id="capital")]

    def get_annotators(self) -> Mapping[str, Annotator]:
        return {"judge": self.annotator}

    def measure_quality(self, item: Any) -> dict[str, float]:
        found = item.responses[0].annotations["judge"]
        return {"score": found.score if found.score is not None else -1.0}


def _judge_prompts(server: FakeServer) -> list[str]:
    prompts = []
    for _, _, body in server.request_log:
        if isinstance(body, dict) and body.get("model") == "judge":
            prompts.append(json.dumps(body["messages"]))
    return prompts


def _run(test: PromptResponseTest, server: FakeServer, tmp_path: Path) -> Any:
    providers = {"fake": ProviderConfig(type="openai", base_url=server.base_url)}
    return test.run(["fake/sut"], db=f"sqlite:///{tmp_path / 'q.db'}", providers=providers)


def test_a_list_of_one_criterion_runs_as_that_criterion(server: FakeServer, tmp_path: Path) -> None:
    outcome = _run(
        _Capital(LLMJudgeAnnotator(["Names Paris"], model="fake/judge")), server, tmp_path
    )
    assert outcome.status == "finished", outcome.warnings
    (measured,) = outcome.items["fake/sut"]
    assert measured.measurements == {"score": 9.0}
    (prompt,) = _judge_prompts(server)
    assert "Names Paris" in prompt and "['Names Paris']" not in prompt


def test_several_criteria_are_judged_together_in_one_annotation(
    server: FakeServer, tmp_path: Path
) -> None:
    annotator = LLMJudgeAnnotator(["Names Paris", "Is one sentence"], model="fake/judge")
    assert annotator.criteria == ["Names Paris", "Is one sentence"]
    outcome = _run(_Capital(annotator), server, tmp_path)
    assert outcome.status == "finished", outcome.warnings
    (measured,) = outcome.items["fake/sut"]
    annotation = measured.result.responses[0].annotations["judge"]
    assert annotation.score == 9.0 and annotation.passed is True
    (prompt,) = _judge_prompts(server)  # one call for both criteria
    assert "- Names Paris" in prompt and "- Is one sentence" in prompt


@pytest.mark.parametrize(
    ("make", "error", "words"),
    [
        (lambda: LLMJudgeAnnotator(42), TypeError, "criteria must be a string or a list"),  # type: ignore[arg-type]
        (lambda: LLMJudgeAnnotator([]), ValueError, "criteria is empty"),
        (lambda: LLMJudgeAnnotator(["ok", 3]), TypeError, "each of criteria must be a string"),  # type: ignore[list-item]
        (lambda: LLMJudgeAnnotator(["ok", " "]), ValueError, "empty string"),
        (lambda: LLMJudgeAnnotator("ok", model="gpt-4o"), ValueError, "provider/model"),
        (lambda: LLMJudgeAnnotator("ok", model=["a/b"]), TypeError, "model must be"),  # type: ignore[arg-type]
        (lambda: LLMJudgeAnnotator("ok", threshold=11), ValueError, "between 0 and 10"),
        (lambda: LLMJudgeAnnotator("ok", threshold="7"), TypeError, "threshold must be a number"),  # type: ignore[arg-type]
        (lambda: LLMJudgeAnnotator("ok", params=[("a", 1)]), TypeError, "params must be a mapping"),  # type: ignore[arg-type]
        (lambda: RegexAnnotator("("), ValueError, "RegexAnnotator: invalid pattern"),
        (lambda: RegexAnnotator(5), TypeError, "pattern must be a string"),  # type: ignore[arg-type]
        (lambda: KeywordAnnotator([""]), ValueError, "empty string"),
        (lambda: JSONSchemaAnnotator('{"type": "object"}'), TypeError, "schema must be a mapping"),  # type: ignore[arg-type]
        (lambda: RefusalAnnotator("yes"), TypeError, "expected must be True, False or None"),  # type: ignore[arg-type]
        (lambda: SimilarityAnnotator(threshold=-1), ValueError, "between 0 and 10"),
    ],
)
def test_a_wrong_parameter_fails_at_construction_with_a_clear_error(
    make: Any, error: type[Exception], words: str
) -> None:
    with pytest.raises(error, match=words.replace("(", r"\(")):
        make()


def test_one_keyword_given_as_a_string_is_one_keyword() -> None:
    assert KeywordAnnotator("nurse").keywords == ["nurse"]
    assert LLMJudgeAnnotator("Names Paris").criteria == "Names Paris"
