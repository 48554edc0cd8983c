"""The pytest plugin, run by pytest itself (``pytester``): judged assertions that pass and
fail, what a failure prints, and an offline replay of a recorded suite with no model call
(counted on the test server)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from qualspec.testing import FakeServer

pytest_plugins = ("pytester",)

TESTS = """
import pytest

@pytest.mark.qualspec(model="openai/sut-model", judge="openai/judge-model")
def test_good_answer(qualspec_model, qualspec_judge):
    answer = qualspec_model("What is the capital of France?")
    assert answer == "Paris is the capital of France."
    result = qualspec_judge(answer, "Names Paris as the capital", threshold=7)
    assert result.passed
    assert result.score == 9 and result.reasoning == "It names Paris."

@pytest.mark.qualspec(judge="openai/judge-model")
def test_bad_answer(qualspec_judge):
    result = qualspec_judge("I like turtles.", "Names Paris as the capital", threshold=7)
    assert result.passed
"""


def _judge(body: dict[str, Any]) -> str:
    text = json.dumps(body["messages"])
    if "turtles" in text:
        return json.dumps({"score": 2, "reasoning": "It does not mention Paris at all."})
    return json.dumps({"score": 9, "reasoning": "It names Paris."})


@pytest.fixture
def server() -> Iterator[FakeServer]:
    with FakeServer(
        judge_reply=_judge, answer=lambda body: "Paris is the capital of France."
    ) as srv:
        yield srv


@pytest.fixture
def project(pytester: pytest.Pytester, server: FakeServer, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    pytester.makepyfile(test_judged=TESTS)
    return pytester.path


def _run(pytester: pytest.Pytester, db: Path, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess(f"--qualspec-db={db}", "-p", "no:cacheprovider", *args)


def test_a_passing_and_a_failing_judged_assertion(
    pytester: pytest.Pytester, project: Path, server: FakeServer, tmp_path: Path
) -> None:
    result = _run(pytester, tmp_path / "rec.db", "-q")
    result.assert_outcomes(passed=1, failed=1)
    out = result.stdout.str()
    # the failure shows the criteria, the score against the threshold, and the reasoning
    assert "test_bad_answer" in out
    assert "FAILED: score 2 < threshold 7" in out
    assert "criteria: 'Names Paris as the capital'" in out
    assert "reasoning: 'It does not mention Paris at all.'" in out
    assert "judge openai/judge-model" in out
    assert "test_good_answer" not in out  # -q: a passing test prints nothing of its own
    assert server.calls == 3  # one model answer, two judge calls


def test_a_recorded_suite_replays_offline_with_no_model_call(
    pytester: pytest.Pytester, project: Path, server: FakeServer, tmp_path: Path
) -> None:
    db = tmp_path / "rec.db"
    _run(pytester, db, "--qualspec-record=new").assert_outcomes(passed=1, failed=1)
    recorded = server.calls
    assert recorded == 3
    server.reset()
    # the replay, beside a new test whose call was never recorded (one pytest run for both:
    # each run is a pytest start-up in a subprocess)
    pytester.makepyfile(
        test_new="""
import pytest

@pytest.mark.qualspec(judge="openai/judge-model")
def test_unrecorded(qualspec_judge):
    assert qualspec_judge("Rome.", "Names Paris").passed
"""
    )
    replay = _run(pytester, db, "--qualspec-record=none", "-rf")
    # the same verdicts, from the recording; the call never recorded is a clear failure in
    # replay mode, not a model call
    replay.assert_outcomes(passed=1, failed=2)
    text = replay.stdout.str()
    assert "FAILED test_judged.py::test_bad_answer" in text
    assert "FAILED test_new.py::test_unrecorded" in text
    assert "FAILED: score 2 < threshold 7" in text
    assert "not recorded" in text and "--qualspec-record=new" in text
    assert server.calls == 0
    # --qualspec-record=all calls again, whatever is recorded
    _run(pytester, db, "--qualspec-record=all", "test_judged.py").assert_outcomes(
        passed=1, failed=1
    )
    assert server.calls == 3


def test_the_plugin_changes_nothing_for_a_test_that_does_not_use_it(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    pytester.makepyfile(test_plain="def test_plain():\n    assert 1 + 1 == 2\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    assert not (pytester.path / ".qualspec").exists()  # no recordings database made
    # and loading it imports no model, database or HTTP library
    probe = pytester.makepyfile(
        test_probe="""
import sys

def test_light():
    heavy = {"sqlalchemy", "aiohttp", "llama_cpp", "torch", "qualspec.engine", "qualspec.store"}
    assert not heavy & set(sys.modules), heavy & set(sys.modules)
"""
    )
    assert probe.exists()
    pytester.runpytest_subprocess("-p", "no:cacheprovider", "test_probe.py").assert_outcomes(
        passed=1
    )
