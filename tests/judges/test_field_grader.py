"""Reference-graded testing on the fake server with scripted answers: the field grader's
rules and grader calls, the records it writes (the issue 10 contract), the aggregation.

Candidates, the reference model and the grader are models of one FakeServer; every call
asks for structured output, so the server answers through ``judge_reply``, a script that
answers by model and input (and, for the grader, by the field values it is shown).
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from qualspec import Candidate, Evaluation, ProviderConfig, RetryPolicy, Scenario
from qualspec.analysis import field_analysis, field_analysis_to_dict, run_totals, suite_costs
from qualspec.engine import ExecuteOptions, RunOutcome, Session, expand
from qualspec.judges import FIELD_MATCHES, band, read_field_grades, read_structured, rule_grade
from qualspec.report import write_html
from qualspec.spec import GraderConfig, load_evaluation
from qualspec.store import JudgmentRecord, Store
from qualspec.testing import FakeServer

REFERENCE = {
    "acme": {"name": "Acme", "industry": "SaaS", "founded_year": 1999, "employees": ""},
    "blank": {},  # an empty reference: flagged, never graded against
    "junk": "the reference model rambles instead of answering",
}
ANSWERS: dict[str, dict[str, Any]] = {
    # name: same but case (rule), industry: semantic (grader), year: "1999" (rule),
    # employees: both empty (rule)
    "good": {
        "acme": {
            "name": "acme",
            "industry": "Software as a Service",
            "founded_year": "1999",
            "employees": None,
        }
    },
    # name: partial (grader), industry: wrong (grader), year: missing (rule),
    # employees: missing in the answer and empty in the reference (both empty, rule)
    "poor": {"acme": {"name": "Acme Corp", "industry": "Hardware"}},
    "refuser": {},
    "broken": {},
}
GRADES = {  # (field, reference value, answer value) -> the grader's verdict
    ("industry", "SaaS", "Software as a Service"): (90, "semantic"),
    ("name", "Acme", "Acme Corp"): (60, "partial"),
    ("industry", "SaaS", "Hardware"): (10, "none"),
}
UNSURE = {("name", "Acme", "Acme Corp")}  # graded with confidence 0.3
_BLOCK = re.compile(r"- (\w+):\n  reference <<<(.*?)>>>\n  answer <<<(.*?)>>>", re.DOTALL)


class Script:
    """The scripted server: answers by model and input; counts the grader's calls."""

    def __init__(self) -> None:
        self.grader_calls: list[list[str]] = []
        self.grader_text: str | None = None  # a fixed grader reply (unreadable, ...)

    def __call__(self, body: dict[str, Any]) -> str:
        model = str(body["model"])
        text = body["messages"][-1]["content"]
        if model == "grader":
            blocks = _BLOCK.findall(text)
            self.grader_calls.append([name for name, _, _ in blocks])
            if self.grader_text is not None:
                return self.grader_text
            fields = {}
            for name, ref, answer in blocks:
                accuracy, match = GRADES[(name, ref, answer)]
                fields[name] = {
                    "accuracy": accuracy,
                    "match": match,
                    "explanation": f"{answer} vs {ref}",
                    "confidence": 0.3 if (name, ref, answer) in UNSURE else 0.8,
                }
            return json.dumps({"fields": fields})
        company = re.search(r"Company: (\w+)", text)
        assert company is not None, text
        key = company.group(1)
        if model == "ref":
            found = REFERENCE[key]
            return found if isinstance(found, str) else json.dumps(found)
        if model == "refuser":
            return "I'm sorry, but I can't help with that."
        if model == "broken":
            return "name: Acme, industry: SaaS"
        return json.dumps(ANSWERS[model].get(key, {}))


@pytest.fixture
def served(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[FakeServer, Script]]:
    monkeypatch.setenv("FAKE_KEY", "sk-test-field-grader")
    script = Script()
    with FakeServer(judge_reply=script) as server:
        yield server, script


def _evaluation(server: FakeServer, inputs: list[str], **changes: Any) -> Evaluation:
    candidates = [Candidate(name=m, model=f"fake/{m}") for m in ANSWERS]
    return Evaluation(
        name="field grades",
        candidates=changes.pop("candidates", candidates),
        scenarios=[
            Scenario(
                name="profile",
                prompt="Extract a profile as JSON. Company: {{ company }}",
                inputs=[{"id": c, "company": c} for c in inputs],
                reference={"model": "fake/ref"},  # type: ignore[arg-type]
                output_schema={  # type: ignore[arg-type]
                    "fields": [
                        {"name": "name", "critical": True},
                        {"name": "industry", "critical": True, "weight": 3},
                        {"name": "founded_year", "type": "integer"},
                        {"name": "employees"},
                    ]
                },
            )
        ],
        grader=changes.pop("grader", GraderConfig(model="fake/grader", parse_retries=1)),
        providers={
            "fake": ProviderConfig(type="openai", base_url=server.base_url, api_key_env="FAKE_KEY")
        },
        **changes,
    )


def _run(evaluation: Evaluation, tmp_path: Path, **options: Any) -> RunOutcome:
    suite = load_evaluation(evaluation, tmp_path)
    plan = expand(suite)
    options = {"retry": RetryPolicy(max_attempts=1), **options}
    opts = ExecuteOptions(calibrate=False, **options)

    async def main() -> RunOutcome:
        async with Session(db=f"sqlite:///{tmp_path / 'q.db'}", options=opts) as session:
            return await session.run_plan(suite, plan)

    return asyncio.run(main())


def _grades(outcome: RunOutcome) -> dict[str, JudgmentRecord]:
    """Field-grade records by candidate name."""
    record = outcome.record
    by_key = {r.key: r for r in record.responses}
    return {
        by_key[j.response_key].candidate: j
        for j in record.judgments
        if j.evaluator == "field_grader"
    }


def test_fields_are_graded_by_rule_or_grader_and_the_records_follow_the_contract(
    served: tuple[FakeServer, Script], tmp_path: Path
) -> None:
    server, script = served
    outcome = _run(_evaluation(server, ["acme"]), tmp_path)
    assert outcome.status == "finished"
    grades = _grades(outcome)
    assert set(grades) == {"good", "poor", "refuser", "broken"}
    # one grader call per answer that needs one, with only the fields no rule decides
    assert sorted(script.grader_calls) == [["industry"], ["name", "industry"]]

    good = grades["good"]
    details = good.details or {}
    fields = details["fields"]
    assert fields["name"]["match"] == "exact" and fields["name"]["decided_by"] == "rule"
    assert fields["industry"] == {
        "accuracy": 90.0,
        "match": "semantic",
        "explanation": "Software as a Service vs SaaS",
        "confidence": 0.8,
        "critical": True,
        "weight": 3.0,
        "decided_by": "grader",
    }
    assert fields["founded_year"]["accuracy"] == 100.0  # "1999" is 1999
    assert fields["employees"]["accuracy"] == 100.0 and "both" in fields["employees"]["explanation"]
    # weighted: name 2 (critical), industry 3 (its weight), the others 1
    assert details["simple_mean"] == pytest.approx(97.5)
    assert details["weighted_mean"] == pytest.approx((200 + 270 + 100 + 100) / 7)
    assert good.score == pytest.approx(details["weighted_mean"])
    assert good.passed is True and good.threshold == 80.0
    assert details["band"] == "Excellent" and details["field_pass_rate"] == 100.0
    assert good.scores == {
        "name": 100.0,
        "industry": 90.0,
        "founded_year": 100.0,
        "employees": 100.0,
    }
    assert details["type"] == "field_grade" and details["flags"] == []
    assert details["reference_status"] == "unvalidated"
    # the reference named by its response key and its call (cache) key
    reference = next(r for r in outcome.record.responses if r.kind == "reference")
    assert details["reference_key"] == reference.key
    with Store.open(f"sqlite:///{tmp_path / 'q.db'}") as store:
        cached = store.cache_get_many([details["reference_call_key"]])
    assert cached[details["reference_call_key"]].kind == "reference"
    assert {(g.details or {})["reference_call_key"] for g in grades.values()} == {
        details["reference_call_key"]
    }
    assert good.judge_model == "fake/grader" and good.prompt_version is not None
    assert set(details["fields"]["name"]) == {
        "accuracy", "match", "explanation", "confidence", "critical", "weight", "decided_by"
    }  # fmt: skip
    assert all(f["match"] in FIELD_MATCHES for f in details["fields"].values())

    poor = grades["poor"].details or {}
    assert poor["fields"]["name"]["match"] == "partial"
    assert poor["fields"]["industry"]["match"] == "none"
    assert poor["fields"]["founded_year"] == {
        "accuracy": 0.0,
        "match": "missing",
        "explanation": "the answer has no such field",
        "confidence": 1.0,
        "critical": False,
        "weight": 1.0,
        "decided_by": "rule",
    }
    assert poor["fields"]["employees"]["accuracy"] == 100.0  # both empty
    assert poor["simple_mean"] == pytest.approx(42.5)
    assert poor["weighted_mean"] == pytest.approx((120 + 30 + 0 + 100) / 7)
    assert poor["band"] == "Needs improvement" and poor["field_pass_rate"] == 25.0
    assert poor["flags"] == ["low_confidence"] and poor["fields"]["name"]["confidence"] == 0.3
    assert grades["poor"].passed is False

    refusal = grades["refuser"]
    assert refusal.score == 0.0 and refusal.passed is False
    assert (refusal.details or {})["flags"] == ["refusal"]
    assert {f["decided_by"] for f in (refusal.details or {})["fields"].values()} == {"rule"}
    broken = grades["broken"]
    assert broken.score == 0.0 and (broken.details or {})["flags"] == ["malformed_json"]
    assert broken.scores == dict.fromkeys(["name", "industry", "founded_year", "employees"], 0.0)


def test_an_empty_or_malformed_reference_is_flagged_and_not_graded_against(
    served: tuple[FakeServer, Script], tmp_path: Path
) -> None:
    server, script = served
    outcome = _run(_evaluation(server, ["blank", "junk"]), tmp_path)
    assert outcome.status == "finished"
    records = [j for j in outcome.record.judgments if j.evaluator == "field_grader"]
    assert len(records) == 8 and script.grader_calls == []  # nothing graded, no call
    by_key = {r.key: r for r in outcome.record.responses}
    for j in records:
        details = j.details or {}
        expected = (
            "empty_reference"
            if by_key[j.response_key].input_id == "blank"
            else ("malformed_reference")
        )
        assert details["flags"] == [expected]
        assert j.score is None and j.passed is None and j.error is None
        assert j.unscored_reason and "reference" in j.unscored_reason
        assert set((j.scores or {}).values()) == {None}
        assert details["weighted_mean"] is None and details["band"] is None


def test_an_unreadable_grader_is_asked_again_then_the_answer_is_unscored(
    served: tuple[FakeServer, Script], tmp_path: Path
) -> None:
    server, script = served
    script.grader_text = "Looks fine to me, maybe 80%?"
    good = [Candidate(name="good", model="fake/good")]
    outcome = _run(_evaluation(server, ["acme"], candidates=good), tmp_path)
    record = _grades(outcome)["good"]
    # asked once, and once again (parse_retries: 1): never a score made up from prose
    assert script.grader_calls == [["industry"], ["industry"]]
    details = record.details or {}
    assert details["fields"]["industry"]["accuracy"] is None
    assert details["fields"]["industry"]["match"] == "error"
    assert details["fields"]["name"]["accuracy"] == 100.0  # the rules' grades are kept
    assert record.score is None and record.passed is None
    assert record.unscored_reason and "1 of 4 fields not graded" in record.unscored_reason
    assert record.raw_text == "Looks fine to me, maybe 80%?"


def test_a_grader_call_that_times_out_is_retried_then_an_error_record(
    served: tuple[FakeServer, Script], tmp_path: Path
) -> None:
    server, script = served
    good = [Candidate(name="good", model="fake/good")]
    with FakeServer() as hanging:
        hanging.set_fault_mode("hang")
        slow = ProviderConfig(
            type="openai", base_url=hanging.base_url, api_key_env="FAKE_KEY", timeout=0.5
        )
        evaluation = _evaluation(
            server, ["acme"], candidates=good, grader=GraderConfig(model="slow/grader")
        )
        evaluation = evaluation.model_copy(
            update={"providers": {**evaluation.providers, "slow": slow}}
        )
        policy = RetryPolicy(max_attempts=2, base_delay=0.01, max_delay=0.02)
        outcome = _run(evaluation, tmp_path, retry=policy)
        assert hanging.calls == 2  # the engine retried the call once
    record = _grades(outcome)["good"]
    assert record.error is not None and "no answer within" in record.error
    assert record.score is None and record.passed is None
    assert record.unscored_reason and "judge call failed" in record.unscored_reason
    details = record.details or {}
    assert details["flags"] == ["timeout"]
    assert details["fields"]["industry"]["match"] == "error"
    assert details["fields"]["name"]["accuracy"] == 100.0  # decided by rule, kept
    assert outcome.status == "finished" and script.grader_calls == []


@dataclass
class _Review:
    """What a store with reference reviews returns (the i10-review contract)."""

    status: str
    override_text: str | None

    def status_for(self, text: str | None) -> str:
        return self.status


def test_a_reviewed_reference_is_graded_against_its_override_with_its_status(
    served: tuple[FakeServer, Script], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server, script = served
    fixed = dict(REFERENCE["acme"], industry="Software as a Service")  # type: ignore[arg-type]
    asked: list[str] = []

    def review(self: Store, call_key: str) -> _Review:
        asked.append(call_key)
        return _Review("validated", json.dumps(fixed))

    monkeypatch.setattr(Store, "reference_review", review, raising=False)
    good = [Candidate(name="good", model="fake/good")]
    outcome = _run(_evaluation(server, ["acme"], candidates=good), tmp_path)
    record = _grades(outcome)["good"]
    details = record.details or {}
    assert asked == [details["reference_call_key"]]
    assert details["reference_status"] == "validated"
    # against the override every field is decided by rule: no grader call
    assert script.grader_calls == [] and record.score == 100.0
    assert details["fields"]["industry"]["match"] == "exact"


def test_rules_and_bands_on_their_own() -> None:
    assert band(90) == "Excellent" and band(89.9) == "Good" and band(80) == "Good"
    assert band(70) == "Acceptable" and band(69.99) == "Needs improvement" and band(None) is None
    exact = rule_grade("SaaS", "  saas", present=True)
    assert exact is not None and (exact.accuracy, exact.match) == (100.0, "exact")
    assert rule_grade(None, "", present=True) is not None  # both empty
    missing = rule_grade("x", None, present=True)
    assert missing is not None and missing.match == "missing"
    assert rule_grade("SaaS", "Software", present=True) is None
    assert read_structured('```json\n{"a": 1}\n```') == ({"a": 1}, None)
    assert read_structured("[1, 2]") == (None, "malformed_json")
    assert read_structured("I cannot do that.") == (None, "refusal")
    # strict: a grade needs a number 0-100 and a known match type
    out = read_field_grades(
        '{"fields": {"a": {"accuracy": 150, "match": "exact"}, '
        '"b": {"accuracy": 50, "match": "close"}, "c": {"accuracy_score": 40, '
        '"match_type": "partial", "confidence": 2}}}',
        None,
        ["a", "b", "c"],
    )
    assert isinstance(out["a"], str) and isinstance(out["b"], str)
    graded = out["c"]
    assert not isinstance(graded, str) and graded.accuracy == 40.0 and graded.confidence is None


def test_the_run_aggregates_field_grades_per_model_input_and_field(
    served: tuple[FakeServer, Script], tmp_path: Path
) -> None:
    server, _ = served
    candidates = [Candidate(name=m, model=f"fake/{m}") for m in ("good", "poor")]
    outcome = _run(_evaluation(server, ["acme", "blank"], candidates=candidates), tmp_path)
    analysis = field_analysis(outcome.record)
    assert analysis is not None
    good, poor = (a / 7 for a in (670, 250))
    assert analysis.overall.n == 4 and analysis.overall.n_unscored == 2  # blank: unscored
    assert analysis.overall.mean == pytest.approx((good + poor) / 2)
    assert analysis.by_model["good"].mean == pytest.approx(good)
    assert analysis.by_model["good"].band == "Excellent"
    assert analysis.by_model["poor"].pass_rate == 0.0
    # inputs, hardest first: acme (graded) before blank (nothing graded)
    (first, hard), (_, blank) = analysis.by_input.items()
    assert first == ("profile", "acme") and hard.mean == pytest.approx((good + poor) / 2)
    assert hard.variance == pytest.approx(((good - poor) / 2) ** 2)
    assert blank.mean is None
    # the most problematic field first (ties by name): means 50, 50, 80, 100
    assert [(f.name, f.mean) for f in analysis.fields] == [
        ("founded_year", 50.0),
        ("industry", 50.0),
        ("name", 80.0),
        ("employees", 100.0),
    ]
    assert analysis.fields[1].matches == {"error": 2, "none": 1, "semantic": 1}
    assert analysis.flags == {"empty_reference": 2, "low_confidence": 1}
    data = field_analysis_to_dict(analysis, outcome.record)
    assert data["costs"]["reference"]["calls"] == 2 and data["costs"]["agent"]["calls"] == 4
    assert data["costs"]["grading"]["calls"] == 2  # the blank input: no grader call
    json.dumps(data)  # plain JSON
    # the 0-10 totals do not mix in the 0-100 field grades
    totals = run_totals(outcome.record)
    assert totals.field_grades == 4 and totals.judgments == 0
    assert suite_costs(outcome.record)["grading"].input_tokens > 0
    # the HTML report shows the field grades on their answers, apart from the 0-10 means
    page = tmp_path / "report.html"
    write_html(outcome.record, page)
    html = page.read_text(encoding="utf-8")
    assert "field_grader" in html and "passes at 80" in html


def test_a_reference_requires_an_output_schema_with_its_line(tmp_path: Path) -> None:
    from qualspec.errors import SpecError
    from qualspec.spec import load_suite

    path = tmp_path / "suite.yaml"
    path.write_text(
        "name: t\ncandidates:\n  - {name: a, model: local/smollm2}\nscenarios:\n"
        "  - name: s\n    prompt: hi\n    reference: {model: local/smollm2}\n"
        "    output_schema:\n      fields:\n        - {name: x, weigth: 2}\n"
    )
    with pytest.raises(SpecError) as caught:
        load_suite(path)
    assert f"{path}:10:" in str(caught.value) and "weigth" in str(caught.value)
    path.write_text(
        "name: t\ncandidates:\n  - {name: a, model: local/smollm2}\nscenarios:\n"
        "  - name: s\n    prompt: hi\n    reference: {model: local/smollm2}\n"
    )
    with pytest.raises(SpecError, match="output_schema"):
        load_suite(path)
    path.write_text(
        "name: t\ncandidates:\n  - {name: a, model: local/smollm2}\ngrader: {threshold: 800}\n"
        "scenarios:\n  - {name: s, prompt: hi, criteria: [ok]}\n"
    )
    with pytest.raises(SpecError) as caught:
        load_suite(path)
    assert f"{path}:4:" in str(caught.value) and "grader.threshold" in str(caught.value)


def test_candidates_are_asked_for_the_structure_and_step_down_when_refused(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("FAKE_KEY", "sk-test-field-grader")
    script = Script()
    # a llama.cpp-like server that takes JSON mode but not a JSON Schema
    with FakeServer(judge_reply=script, response_formats=("json_object",)) as server:
        good = [Candidate(name="good", model="fake/good")]
        outcome = _run(_evaluation(server, ["acme"], candidates=good), tmp_path)
        formats = [
            (body["model"], (body.get("response_format") or {}).get("type"))
            for _when, _headers, body in server.request_log
            if body["model"] in ("good", "ref")
        ]
    assert outcome.status == "finished"
    assert all(r.error is None for r in outcome.record.responses)
    # asked with the schema, refused, then asked in JSON mode (and the endpoint keeps it)
    assert formats[0][1] == "json_schema"
    for model in ("good", "ref"):
        assert (model, "json_object") in formats
    with Store.open(f"sqlite:///{tmp_path / 'q.db'}") as store:
        metadata = store.load_run(outcome.run_id).summary.metadata
    assert metadata["structured_output"] == {"fake": "json_object"}
    sent = next(b for _w, _h, b in server.request_log if b["model"] == "good")
    schema = sent["response_format"]["json_schema"]["schema"]
    assert schema["required"] == ["name", "industry", "founded_year", "employees"]
    assert schema["properties"]["founded_year"] == {"type": ["integer", "null"]}
    assert _grades(outcome)["good"].score == pytest.approx(670 / 7)
