"""Issue 17: an empty judge answer is an unscored verdict with its raw text, not a call
error retried as one (a candidate's empty answer stays a retried error)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from qualspec import Candidate, Evaluation, ExecuteOptions, RetryPolicy, Scenario
from qualspec.engine import execute_plan, expand
from qualspec.spec import ProviderConfig, load_evaluation
from qualspec.store import Store
from qualspec.testing import FakeServer

JUDGE: Any = "fake/judge"  # a model address is read as the judge's config
RETRY = RetryPolicy(max_attempts=4, base_delay=0.01, max_delay=0.02)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    s = Store.open(f"sqlite:///{tmp_path / 'q.db'}")
    yield s
    s.close()


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_KEY", "sk-empty-judge-0123456789")


class Judge:
    """A judge reply that is empty (or whitespace) on the first ``empties`` calls."""

    def __init__(self, empties: int, empty: str = "") -> None:
        self.empties = empties
        self.empty = empty
        self.calls = 0

    def __call__(self, body: dict[str, Any]) -> str:
        self.calls += 1
        if self.calls <= self.empties:
            return self.empty
        return '{"score": 8, "reasoning": "Meets the criterion."}'


def _run(tmp_path: Path, store: Store, url: str):  # type: ignore[no-untyped-def]
    evaluation = Evaluation(
        name="empty-judge",
        candidates=[Candidate(name="c", model="fake/model-a")],
        scenarios=[Scenario(name="s", prompt="What is 2 + 2?", criteria=["is correct"])],
        judge=JUDGE,
        providers={"fake": ProviderConfig(type="openai", base_url=url, api_key_env="FAKE_KEY")},
    )
    suite = load_evaluation(evaluation, tmp_path)
    return execute_plan(
        suite,
        expand(suite),
        store=store,
        options=ExecuteOptions(retry=RETRY, use_cache=False, max_concurrency=1, calibrate=False),
        argv=[],
        prices_path=None,
    )


@pytest.mark.parametrize("empty", ["", "  \n"])
def test_an_empty_judge_answer_is_unscored_with_its_raw_text(
    tmp_path: Path, store: Store, empty: str
) -> None:
    judge = Judge(empties=100, empty=empty)
    with FakeServer(judge_reply=judge) as srv:
        out = _run(tmp_path, store, srv.base_url)
    (judgment,) = out.record.judgments
    assert judgment.error is None
    assert judgment.score is None
    assert "empty" in (judgment.unscored_reason or "")
    assert judgment.raw_text == empty
    # asked once and re-asked twice (the judge's parse retries), never retried as an error
    assert judge.calls == 3
    assert judgment.attempts == judge.calls


def test_an_empty_judge_answer_is_re_asked_like_an_unreadable_one(
    tmp_path: Path, store: Store
) -> None:
    judge = Judge(empties=1)
    with FakeServer(judge_reply=judge) as srv:
        out = _run(tmp_path, store, srv.base_url)
    (judgment,) = out.record.judgments
    assert judgment.score == 8
    assert judge.calls == 2
