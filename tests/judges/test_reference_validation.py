"""References are graded against what was validated (issue 17, items 8 and 20).

* A run records its scenarios' output schemas, so that a person's override of a reference
  answer is checked against the schema it was made for: the CLI exits 2 and the API
  answers 422, each naming the missing field.
* A reference with an empty field (a validated override with ``null``): the field is not
  graded against nothing; it is left out of the means and the answer is flagged
  ``empty_reference_field``.
* A field grade that contradicts itself (``exact`` with accuracy 0, ``semantic`` with 1) is
  not taken: asked again, then unscored and flagged ``contradictory_grade``; a confidence
  outside 0-1 is flagged ``confidence_out_of_range``, not dropped silently.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from helpers_cli import run_cli
from qualspec import Evaluation, ProviderConfig, RetryPolicy, Scenario
from qualspec.engine import ExecuteOptions, RunOutcome, Session, expand
from qualspec.judges import read_field_grades
from qualspec.spec import Candidate, GraderConfig, load_evaluation
from qualspec.store import JudgmentRecord, Store
from qualspec.testing import FakeServer

REFERENCE = {"name": "Acme", "industry": "SaaS"}
ANSWER = {"name": "Acme", "industry": "Software as a Service"}
_BLOCK = re.compile(r"- (\w+):\n  reference <<<(.*?)>>>\n  answer <<<(.*?)>>>", re.DOTALL)
Grade = Callable[[str, str, str], dict[str, Any]]


def _semantic(name: str, ref: str, answer: str) -> dict[str, Any]:
    return {"accuracy": 90, "match": "semantic", "explanation": "same", "confidence": 0.9}


class Script:
    """The reference model, the candidate and the grader (``grade`` per field block)."""

    def __init__(self) -> None:
        self.grade: Grade = _semantic
        self.graded: list[list[tuple[str, str, str]]] = []

    def __call__(self, body: dict[str, Any]) -> str:
        model = str(body["model"])
        text = body["messages"][-1]["content"]
        if model == "grader":
            blocks = _BLOCK.findall(text)
            self.graded.append(blocks)
            return json.dumps({"fields": {b[0]: self.grade(*b) for b in blocks}})
        return json.dumps(REFERENCE if model == "ref" else ANSWER)


@pytest.fixture
def served(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[FakeServer, Script]]:
    monkeypatch.setenv("FAKE_KEY", "sk-test-reference-validation")
    monkeypatch.setenv("QUALSPEC_USER", "dana")
    script = Script()
    with FakeServer(judge_reply=script) as server:
        yield server, script


def _evaluation(server: FakeServer) -> Evaluation:
    return Evaluation(
        name="validated references",
        candidates=[Candidate(name="bot", model="fake/bot")],
        scenarios=[
            Scenario(
                name="profile",
                prompt="Extract a profile as JSON. Company: {{ company }}",
                inputs=[{"id": "acme", "company": "acme"}],
                reference={"model": "fake/ref"},  # type: ignore[arg-type]
                output_schema={  # type: ignore[arg-type]
                    "fields": [{"name": "name", "critical": True}, {"name": "industry"}]
                },
            )
        ],
        grader=GraderConfig(model="fake/grader", parse_retries=1),
        providers={
            "fake": ProviderConfig(type="openai", base_url=server.base_url, api_key_env="FAKE_KEY")
        },
    )


def _db(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'q.db'}"


def _run(server: FakeServer, tmp_path: Path) -> RunOutcome:
    suite = load_evaluation(_evaluation(server), tmp_path)
    opts = ExecuteOptions(calibrate=False, retry=RetryPolicy(max_attempts=1))

    async def go() -> RunOutcome:
        async with Session(db=_db(tmp_path), options=opts) as session:
            return await session.run_plan(suite, expand(suite))

    outcome = asyncio.run(go())
    assert outcome.status == "finished"
    return outcome


def _grade(outcome: RunOutcome) -> JudgmentRecord:
    (grade,) = [j for j in outcome.record.judgments if j.evaluator == "field_grader"]
    return grade


def _reference_key(tmp_path: Path) -> str:
    with Store.open(_db(tmp_path)) as store:
        (answer,) = store.reference_answers()
    return answer.call_key


def test_a_run_records_its_output_schemas_and_an_override_missing_a_field_is_refused(
    served: tuple[FakeServer, Script], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server, _ = served
    outcome = _run(server, tmp_path)
    schemas = outcome.record.summary.metadata["output_schemas"]
    assert schemas == {"profile": {"fields": [{"name": "name"}, {"name": "industry"}]}}
    key = _reference_key(tmp_path)
    partial = tmp_path / "partial.json"
    partial.write_text(json.dumps({"name": "Acme Inc"}))
    code, out, err = run_cli(
        capsys, "reference", "override", key[:12], "--file", str(partial), "--db", _db(tmp_path)
    )
    assert code == 2, out + err
    assert len(err.strip().splitlines()) == 1
    assert "field 'industry' is missing" in err
    with Store.open(_db(tmp_path)) as store:  # nothing recorded: still the model's answer
        review = store.reference_review(key)
    assert review is None or review.override_text is None
    # an override that fits is taken
    whole = tmp_path / "whole.json"
    whole.write_text(json.dumps({"name": "Acme Inc", "industry": "SaaS"}))
    code, out, err = run_cli(
        capsys, "reference", "override", key[:12], "--file", str(whole), "--db", _db(tmp_path)
    )
    assert code == 0, out + err


def test_the_api_refuses_an_override_missing_a_field_with_422_naming_it(
    served: tuple[FakeServer, Script], tmp_path: Path
) -> None:
    from qualspec.web import create_app

    server, _ = served
    _run(server, tmp_path)
    key = _reference_key(tmp_path)

    async def post(answer: dict[str, Any]) -> httpx.Response:
        app = create_app(db=_db(tmp_path))
        transport = httpx.ASGITransport(app=app)
        try:
            async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as c:
                return await c.post(
                    f"/api/references/{key[:12]}/override", json={"answer": json.dumps(answer)}
                )
        finally:
            await app.fastapi.state.web.aclose()

    refused = asyncio.run(post({"name": "Acme Inc"}))
    assert refused.status_code == 422, refused.text
    (detail,) = refused.json()["detail"]
    assert detail["loc"] == ["body", "answer"] and "field 'industry' is missing" in detail["msg"]
    taken = asyncio.run(post({"name": "Acme Inc", "industry": "SaaS"}))
    assert taken.status_code == 200, taken.text


def test_an_empty_field_of_a_validated_reference_is_flagged_and_not_graded_against(
    served: tuple[FakeServer, Script], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server, script = served
    first = _grade(_run(server, tmp_path))
    assert first.score == pytest.approx((2 * 100 + 90) / 3)  # name by rule, industry 90
    key = _reference_key(tmp_path)
    blank = tmp_path / "blank.json"
    blank.write_text(json.dumps({"name": "Acme", "industry": None}))  # fits the schema
    code, out, err = run_cli(
        capsys, "reference", "override", key[:12], "--file", str(blank), "--db", _db(tmp_path)
    )
    assert code == 0, out + err
    calls = len(script.graded)
    grade = _grade(_run(server, tmp_path))
    details = grade.details or {}
    assert details["reference_status"] == "validated"
    assert "empty_reference_field" in details["flags"]
    industry = details["fields"]["industry"]
    assert industry["match"] == "no_reference" and industry["accuracy"] is None
    assert len(script.graded) == calls  # no grader call: nothing to grade it against
    assert grade.score == 100.0  # the name alone, the field left out of the means
    assert grade.unscored_reason is None


def test_a_contradictory_field_grade_is_asked_again_then_unscored_and_flagged(
    served: tuple[FakeServer, Script], tmp_path: Path
) -> None:
    server, script = served
    script.grade = lambda n, r, a: {
        "accuracy": 0,
        "match": "exact",
        "explanation": "same",
        "confidence": 0.9,
    }
    grade = _grade(_run(server, tmp_path))
    assert len(script.graded) == 2  # asked once more (parse_retries 1)
    details = grade.details or {}
    assert grade.score is None and grade.passed is None
    assert "contradictory_grade" in details["flags"]
    industry = details["fields"]["industry"]
    assert industry["accuracy"] is None and "contradictory grade" in industry["explanation"]
    assert "match exact with accuracy 0" in (grade.unscored_reason or "")


def test_a_confidence_outside_0_1_is_flagged_not_dropped_silently(
    served: tuple[FakeServer, Script], tmp_path: Path
) -> None:
    server, script = served
    script.grade = lambda n, r, a: {
        "accuracy": 90,
        "match": "semantic",
        "explanation": "same",
        "confidence": 85,
    }
    grade = _grade(_run(server, tmp_path))
    details = grade.details or {}
    assert grade.score == pytest.approx((2 * 100 + 90) / 3)  # the grade itself is kept
    assert "confidence_out_of_range" in details["flags"]
    assert details["fields"]["industry"]["confidence"] is None
    assert details["fields"]["industry"]["flag"] == "confidence_out_of_range"


@pytest.mark.parametrize(
    ("accuracy", "match", "contradicts"),
    [
        (0, "exact", True),
        (1, "semantic", True),  # a 0-1 scale's "all right" is 1 of 100 here
        (100, "none", True),
        (100, "partial", True),
        (0, "partial", True),
        (100, "exact", False),
        (85, "semantic", False),
        (50, "partial", False),
        (10, "none", False),
    ],
)
def test_which_match_kinds_and_accuracies_contradict(
    accuracy: int, match: str, contradicts: bool
) -> None:
    reply = json.dumps({"fields": {"a": {"accuracy": accuracy, "match": match, "confidence": 1}}})
    got = read_field_grades(reply, None, ["a"])["a"]
    assert isinstance(got, str) == contradicts, got
    if contradicts:
        assert isinstance(got, str) and "contradictory grade" in got


def test_a_run_recorded_before_runs_kept_their_schemas_is_checked_by_its_graded_fields(
    served: tuple[FakeServer, Script], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server, _ = served
    outcome = _run(server, tmp_path)
    with Store.open(_db(tmp_path)) as store:  # as an older qualspec recorded it
        store.update_run_metadata(outcome.run_id, {"output_schemas": None})
        (answer,) = store.reference_answers()
    assert answer.output_schema == {"fields": [{"name": "name"}, {"name": "industry"}]}
    partial = tmp_path / "partial.json"
    partial.write_text(json.dumps({"industry": "SaaS"}))
    code, _, err = run_cli(
        capsys, "reference", "override", answer.call_key, "--file", str(partial),
        "--db", _db(tmp_path),
    )  # fmt: skip
    assert code == 2 and "field 'name' is missing" in err
