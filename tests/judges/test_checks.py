"""The ``expect`` evaluator: every check, the evaluator protocol, where it is added to a run,
and checks shown, stored, exported and diffed like criteria, without a model call."""

from __future__ import annotations

import asyncio
import csv
import json
from pathlib import Path
from typing import Any

import pytest

from qualspec.cli import main
from qualspec.engine import Evaluator, Subject, create_evaluator, expand
from qualspec.errors import ConfigError
from qualspec.judges import looks_like_refusal, run_check
from qualspec.judges._expect import (
    REFUSAL_PHRASES,
    ExpectEvaluator,
    check_label,
    validate_json_schema,
)
from qualspec.spec import JSON_SCHEMA_KEYWORDS, EvaluatorConfig, load_suite
from qualspec.store import ResponseRecord
from qualspec.testing import FakeServer

# (check, value, an answer that passes, an answer that fails, the failure's reason)
CASES: list[tuple[str, Any, str, str, str]] = [
    ("contains", "Paris", "It is Paris.", "It is paris.", 'did not find "Paris"'),
    ("not_contains", "London", "Paris.", "London.", 'found "London"'),
    ("icontains", "paris", "PARIS.", "Lyon.", 'did not find "paris" (any case)'),
    ("regex", r"\bParis\b", "In Paris.", "Parisian.", 'no match for "\\\\bParis\\\\b"'),
    ("equals", "Paris", " Paris\n", "Paris.", 'the answer is not "Paris"'),
    ("starts_with", "The", "  The city.", "A city.", 'does not start with "The"'),
    ("max_words", 3, "one two three", "one two three four", "4 words > 3"),
    ("max_chars", 5, "Paris", "Paris!", "6 characters > 5"),
    ("is_json", True, '{"a": 1}', "a: 1", "the answer is not JSON"),
    ("is_json", False, "a: 1", "[1, 2]", "the answer is JSON"),
    ("json_schema", {"required": ["city"]}, '{"city": 1}', "{}", "$: missing required key 'city'"),
    ("json_schema", {"type": "object"}, "{}", "not json", "the answer is not JSON"),
    ("refusal", True, "I'm sorry, but no.", "Paris.", "no refusal"),
    ("refusal", False, "Paris.", "I cannot help with that.", "the answer refuses"),
]


@pytest.mark.parametrize(("name", "value", "good", "bad", "why"), CASES)
def test_every_check_passes_and_fails_with_a_factual_reason(
    name: str, value: Any, good: str, bad: str, why: str
) -> None:
    ok, reason = run_check(name, value, good)
    assert ok, reason
    assert run_check(name, value, bad) == (False, why)


def test_pass_reasons_say_what_was_found() -> None:
    assert run_check("contains", "Paris", "Paris") == (True, 'found "Paris"')
    assert run_check("regex", r"P\w+", "in Paris") == (True, 'matched "Paris"')
    assert run_check("max_words", 50, "a b") == (True, "2 words <= 50")
    assert run_check("json_schema", {}, "{}") == (True, "the JSON matches the schema")


def test_json_is_read_inside_a_fence() -> None:
    answer = 'Here it is:\n```json\n{"city": "Paris"}\n```\nAnything else?'
    assert run_check("is_json", True, answer)[0]
    assert run_check("json_schema", {"required": ["city"]}, answer)[0]
    assert not run_check("is_json", True, "```json\n{city: Paris}\n```")[0]


SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["city", "tags"],
    "additionalProperties": False,
    "properties": {
        "city": {"type": "string", "minLength": 2, "maxLength": 10, "pattern": "^[A-Z]"},
        "size": {"enum": ["small", "big"]},
        "rank": {"type": "integer", "minimum": 1, "maximum": 3},
        "tags": {"type": "array", "minItems": 1, "maxItems": 2, "items": {"type": "string"}},
        "capital": {"const": True},
        "note": {"type": ["string", "null"]},
    },
}
GOOD = {"city": "Paris", "size": "big", "rank": 1, "tags": ["fr"], "capital": True, "note": None}


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"city": 3}, "$.city: 3 is not of type string"),
        ({"city": "P"}, "$.city: 1 characters < minLength 2"),
        ({"city": "Parisparisparis"}, "$.city: 15 characters > maxLength 10"),
        ({"city": "paris"}, "$.city: does not match '^[A-Z]'"),
        ({"size": "huge"}, "$.size: \"huge\" is not one of ['small', 'big']"),
        ({"rank": 0}, "$.rank: 0 < minimum 1"),
        ({"rank": 4}, "$.rank: 4 > maximum 3"),
        ({"rank": 1.5}, "$.rank: 1.5 is not of type integer"),
        ({"rank": True}, "$.rank: true is not of type integer"),
        ({"tags": []}, "$.tags: 0 items < 1"),
        ({"tags": ["a", "b", "c"]}, "$.tags: 3 items > 2"),
        ({"tags": ["a", 2]}, "$.tags[1]: 2 is not of type string"),
        ({"capital": False}, "$.capital: false is not true"),
        ({"note": 1}, "$.note: 1 is not of type string/null"),
        ({"extra": 1}, "$: unexpected key 'extra'"),
    ],
)
def test_the_built_in_json_schema_subset(change: dict[str, Any], problem: str) -> None:
    assert validate_json_schema(GOOD, SCHEMA) is None
    assert validate_json_schema({**GOOD, **change}, SCHEMA) == problem
    assert validate_json_schema({"city": "Paris"}, SCHEMA) == "$: missing required key 'tags'"


def test_every_supported_schema_keyword_is_enforced() -> None:
    # each keyword the loader accepts changes the validator's answer for some value
    failing: dict[str, tuple[dict[str, Any], Any]] = {
        "type": ({"type": "string"}, 1),
        "enum": ({"enum": [1]}, 2),
        "const": ({"const": 1}, 2),
        "required": ({"required": ["a"]}, {}),
        "properties": ({"properties": {"a": {"type": "string"}}}, {"a": 1}),
        "additionalProperties": ({"additionalProperties": False}, {"a": 1}),
        "items": ({"items": {"type": "string"}}, [1]),
        "minItems": ({"minItems": 1}, []),
        "maxItems": ({"maxItems": 0}, [1]),
        "minimum": ({"minimum": 1}, 0),
        "maximum": ({"maximum": 1}, 2),
        "minLength": ({"minLength": 1}, ""),
        "maxLength": ({"maxLength": 0}, "a"),
        "pattern": ({"pattern": "^a"}, "b"),
    }
    assert set(failing) == set(JSON_SCHEMA_KEYWORDS)
    for keyword, (schema, value) in failing.items():
        assert validate_json_schema(value, schema) is not None, keyword


@pytest.mark.parametrize("phrase", REFUSAL_PHRASES)
def test_every_refusal_phrase_is_detected(phrase: str) -> None:
    assert looks_like_refusal(phrase.capitalize() + " do that.")
    assert looks_like_refusal(phrase.upper().replace("'", "\u2019") + " do that.")


def test_answers_are_not_refusals() -> None:
    for text in ("Paris.", "The capital of France is Paris.", '{"city": "Paris"}', ""):
        assert not looks_like_refusal(text)


def test_labels_are_short_and_stable() -> None:
    assert check_label("contains", "Paris") == 'contains "Paris"'
    assert check_label("max_words", 50) == "max_words 50"
    assert check_label("refusal", False) == "refusal false"
    assert check_label("is_json", True) == "is_json true"
    long = check_label("json_schema", {"properties": {f"k{i}": {} for i in range(20)}})
    assert long.startswith("json_schema {") and len(long) <= 93


SUITE = """\
name: checks
providers:
  fake: {{type: openai, base_url: "{url}"}}
candidates:
  - {{name: bot, model: fake/m}}
  - {{name: other, model: fake/n}}
scenarios:
  - name: capital
    prompt: "What is the capital of France?"
{expect}
  - name: greet
    prompt: "Say hi"
    criteria: [Is friendly]
{tail}
"""

CHECKS = """\
    expect:
      - contains: "Answer to"
      - max_words: 3
      - refusal: false
"""


def _write(tmp_path: Path, url: str, expect: str = CHECKS, tail: str = "") -> Path:
    path = tmp_path / "suite.yaml"
    path.write_text(SUITE.format(url=url, expect=expect, tail=tail))
    return path


def test_the_evaluator_follows_the_protocol_and_calls_no_model(tmp_path: Path) -> None:
    evaluator = create_evaluator(EvaluatorConfig(type="expect"))  # via the entry point
    assert isinstance(evaluator, ExpectEvaluator) and isinstance(evaluator, Evaluator)
    assert (evaluator.name, evaluator.scope, evaluator.model) == ("expect", "response", None)
    assert evaluator.threshold is None and evaluator.prompt() is None
    plan = expand(load_suite(_write(tmp_path, "http://127.0.0.1:9/v1")))
    item = next(i for i in plan.items if i.scenario == "capital")
    assert evaluator.group_of(item) is None
    aspects = evaluator.aspects([item])
    assert aspects == ('contains "Answer to"', "max_words 3", "refusal false")
    greet = next(i for i in plan.items if i.scenario == "greet")
    assert evaluator.aspects([greet]) == ()

    class NoModel:
        run_id = "r"
        prompt_version = None

        async def complete(self, *args: Any, **kwargs: Any) -> Any:
            raise AssertionError("a check called a model")

    response = ResponseRecord(
        key=item.key, candidate="bot", role=None, scenario="capital", input_id=None,
        temperature=0.0, effective_temperature=0.0, run_index=0, provider="fake", model="m",
        text="Answer to: the question, at some length",
    )  # fmt: skip
    subject = Subject(key=item.key, items=(item,), responses=(response,))
    verdicts = [asyncio.run(evaluator.evaluate(subject, a, NoModel())) for a in aspects]
    assert [(v.score, v.passed) for v in verdicts] == [(10.0, True), (0.0, False), (10.0, True)]
    assert verdicts[1].reasoning == "7 words > 3"
    missing = asyncio.run(evaluator.evaluate(subject, "contains x", NoModel()))
    assert missing.score is None and missing.unscored_reason


def test_the_evaluator_takes_no_model_and_no_options() -> None:
    with pytest.raises(ConfigError, match="takes no model and no options"):
        create_evaluator(EvaluatorConfig(type="expect", model="fake/m"))
    with pytest.raises(ConfigError, match="takes no model and no options"):
        create_evaluator(EvaluatorConfig(type="expect", options={"strict": True}))


def test_checks_leave_work_item_keys_unchanged(tmp_path: Path) -> None:
    url = "http://127.0.0.1:9/v1"
    with_checks = expand(load_suite(_write(tmp_path, url)))
    (tmp_path / "plain").mkdir()
    plain = expand(load_suite(_write(tmp_path / "plain", url, expect='    criteria: ["ok"]')))
    assert [i.key for i in with_checks.items] == [i.key for i in plain.items]
    assert [i.call_key for i in with_checks.items] == [i.call_key for i in plain.items]
    assert [i.checks for i in plain.items] == [()] * 4
    first = with_checks.items[0]
    assert first.checks == (("contains", "Answer to"), ("max_words", 3), ("refusal", False))


def test_the_checks_evaluator_is_added_only_when_a_scenario_has_checks(tmp_path: Path) -> None:
    url = "http://127.0.0.1:9/v1"
    plan = expand(load_suite(_write(tmp_path, url)))
    assert [c.label for c in plan.run_evaluators()] == ["criteria", "expect"]
    assert [c.label for c in plan.run_evaluators(judge=False)] == ["expect"]
    only_checks = expand(load_suite(_write(tmp_path, url)), scenarios=["capital"])
    assert [c.label for c in only_checks.run_evaluators()] == ["expect"]  # no judge needed
    only_judged = expand(load_suite(_write(tmp_path, url)), scenarios=["greet"])
    assert [c.label for c in only_judged.run_evaluators()] == ["criteria"]
    assert only_judged.run_evaluators(judge=False) == ()
    listed = _write(tmp_path, url, tail="judges: [{type: criteria}, {type: expect}]")
    assert [c.label for c in expand(load_suite(listed)).run_evaluators()] == [
        "criteria",
        "expect",
    ]  # listed once, not added twice


def _run(path: Path, *extra: str) -> tuple[int, dict[str, Any]]:
    out = path.parent / f"out{len(list(path.parent.glob('out*.json')))}.json"
    with pytest.raises(SystemExit) as exc:
        main(["run", str(path), "--output", str(out), *extra])
    return int(exc.value.code or 0), json.loads(out.read_text())


def _records(data: dict[str, Any], scenario: str = "capital") -> dict[tuple[str, str], Any]:
    return {
        (r["candidate"], j["criterion"]): j
        for r in data["responses"]
        if r["scenario"] == scenario
        for j in r["judgments"]
    }


def test_no_judge_runs_checks_without_a_model_call_and_shows_stores_and_exports_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    with FakeServer() as server:
        path = _write(tmp_path, server.base_url)
        code, data = _run(path, "--no-judge")
        assert server.calls == 4  # 2 candidates x 2 scenarios: the answers only
    out = capsys.readouterr().out
    text = " ".join(out.split())
    assert code == 0
    records = _records(data)
    assert len(records) == 6
    assert all(j["evaluator"] == "expect" and j["judge_model"] is None for j in records.values())
    assert records[("bot", 'contains "Answer to"')]["passed"] is True
    assert records[("bot", 'contains "Answer to"')]["score"] == 10
    assert records[("bot", 'contains "Answer to"')]["reasoning"] == 'found "Answer to"'
    failed = records[("other", "max_words 3")]
    assert (failed["passed"], failed["score"], failed["reasoning"]) == (False, 0, "8 words > 3")
    assert _records(data, "greet") == {}  # nothing judged under --no-judge
    assert 'check PASS contains "Answer to": 1/1' in text
    assert "check FAIL max_words 3: 0/1 (8 words > 3)" in text
    assert "check PASS refusal false: 1/1" in text
    assert text.count("[FAIL]") == 2  # a failed check fails its row
    assert "Checks: 6: 4 passed, 2 failed (expect:)" in text
    assert "Judgments:" not in text  # no judge ran
    counts = data["summary"]["counts"]
    assert (counts["checks"], counts["checks_passed"], counts["checks_failed"]) == (6, 4, 2)
    assert data["summary"]["mean_score"] is None  # checks are not scores to average
    evaluators = data["run"]["metadata"]["evaluators"]
    assert [(e["name"], e["type"], e["model"]) for e in evaluators] == [("expect", "expect", None)]
    # the CSV export says which rows are checks
    run_id = data["run"]["id"]
    csv_path = tmp_path / "rows.csv"
    with pytest.raises(SystemExit):
        main(["runs", "export", run_id, "--format", "csv", "--output", str(csv_path)])
    with csv_path.open(newline="") as handle:
        rows = [r for r in csv.DictReader(handle) if r["evaluator"] == "expect"]
    assert {(r["criterion"], r["passed"]) for r in rows if r["candidate"] == "other"} == {
        ('contains "Answer to"', "true"),
        ("max_words 3", "false"),
        ("refusal false", "true"),
    }


def test_checks_beside_the_judge_count_toward_pass_fail_but_not_the_mean(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    expect = CHECKS.replace("    expect:", '    criteria: ["Is correct"]\n    expect:')
    with FakeServer() as server:
        path = _write(tmp_path, server.base_url, expect, "judge: {model: fake/judge, calibrate: 0}")
        # --no-cache: both candidates get the same fake answer, so their judge calls are
        # the same call, served from the cache when one is recorded before the other starts
        code, data = _run(path, "--no-cache")
        assert server.calls == 4 + 4  # 4 answers, one judge call per criterion
    text = " ".join(capsys.readouterr().out.split())
    assert code == 0
    records = _records(data)
    assert sorted({j["evaluator"] for j in records.values()}) == ["criteria", "expect"]
    assert records[("bot", "Is correct")]["score"] == 8
    # the judge passes every answer; the failed max_words check fails the capital rows
    assert text.count("[FAIL] 8/10") == 2 and text.count("[PASS] 8/10") == 2
    assert "Judgments: 4: 4 passed, 0 failed; mean score 8.00" in text
    assert "Checks: 6: 4 passed, 2 failed (expect:)" in text
    assert data["summary"]["mean_score"] == 8  # the judge's scores only


def test_an_expect_only_suite_needs_no_judge(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    with FakeServer() as server:
        # a judge that could not run: it is not needed, so neither checked nor called
        path = _write(tmp_path, server.base_url, tail="judge: {model: nowhere/judge}")
        code, data = _run(path, "--scenarios", "capital")
        assert server.calls == 2
    assert code == 0
    assert {j["evaluator"] for j in _records(data).values()} == {"expect"}


def test_a_check_that_starts_failing_is_a_regression_in_diff(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    with FakeServer() as server:
        passing = _write(tmp_path, server.base_url, "    expect:\n      - icontains: answer")
        _run(passing, "--no-judge")
        failing = _write(tmp_path, server.base_url, "    expect:\n      - icontains: paris")
        _run(failing, "--no-judge")
    capsys.readouterr()
    a, b = tmp_path / "out0.json", tmp_path / "out1.json"
    with pytest.raises(SystemExit) as exc:
        main(["diff", str(a), str(b), "--fail-on-regression"])
    text = " ".join(capsys.readouterr().out.split())
    assert exc.value.code == 1
    assert "new_fail bot - capital - default - - - PASS -> FAIL" in text
    assert "2 new_fail" in text
    with pytest.raises(SystemExit) as exc:
        main(["diff", str(a), str(a), "--fail-on-regression"])
    text = " ".join(capsys.readouterr().out.split())
    assert exc.value.code == 0
    assert "unchanged bot - capital - default - - - PASS -> PASS" in text
