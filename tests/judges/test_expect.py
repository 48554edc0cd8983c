"""``expect:`` checks: deterministic, no model call, shown, stored and counted like criteria."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from qualspec.cli import main
from qualspec.errors import SpecError
from qualspec.judges import looks_like_refusal, run_check
from qualspec.judges._expect import check_label
from qualspec.spec import load_suite
from qualspec.testing import FakeServer

CASES = [
    ("contains", "Paris", "The capital is Paris.", "the capital is paris."),
    ("icontains", "paris", "PARIS it is.", "Lyon."),
    ("not_contains", "London", "Paris.", "London, not Paris."),
    ("regex", r"\bParis\b", "It is Paris.", "Parisian food."),
    ("equals", "Paris.", "  Paris.\n", "Paris!"),
    ("starts_with", "The", "The capital is Paris.", "Paris is the capital."),
    ("max_words", 3, "Paris is it.", "Paris is the capital."),
    ("max_chars", 6, "Paris.", "Paris, France."),
    ("is_json", True, '```json\n{"city": "Paris"}\n```', "city: Paris"),
    ("is_json", False, "Paris.", '{"city": "Paris"}'),
    (
        "json_schema",
        {"type": "object", "required": ["city"], "properties": {"city": {"type": "string"}}},
        '{"city": "Paris"}',
        '{"city": 3}',
    ),
    ("refusal", True, "I'm sorry, but I can't help with that.", "Sure: Paris."),
    ("refusal", False, "Paris.", "I cannot assist with this request."),
]


@pytest.mark.parametrize(("name", "value", "good", "bad"), CASES)
def test_every_check_passes_and_fails(name: str, value: Any, good: str, bad: str) -> None:
    ok, reason = run_check(name, value, good)
    assert ok, reason
    ok, reason = run_check(name, value, bad)
    assert not ok and reason


def test_reasons_are_factual_and_labels_readable() -> None:
    assert run_check("max_words", 2, "one two three") == (False, "3 words > 2")
    assert run_check("json_schema", {"required": ["a"]}, "{}")[1] == "$: missing required key 'a'"
    assert check_label("contains", "Paris") == 'contains "Paris"'
    assert looks_like_refusal("As an AI, I cannot do that")


SUITE = """\
name: checks
providers:
  fake: {{type: openai, base_url: "{url}"}}
candidates:
  - {{name: bot, model: fake/m}}
scenarios:
  - name: capital
    prompt: "What is the capital of France?"
    expect:
{checks}
"""


def _write(tmp_path: Path, checks: str, url: str = "http://127.0.0.1:9/v1") -> Path:
    path = tmp_path / "suite.yaml"
    path.write_text(SUITE.format(url=url, checks=checks))
    return path


@pytest.mark.parametrize(
    ("checks", "message"),
    [
        ("      - contain: Paris", "contain"),
        ("      - {contains: Paris, max_words: 3}", "exactly one check per entry"),
        ("      - regex: '(['", "does not compile"),
        ("      - max_words: -1", "max_words"),
    ],
)
def test_a_bad_check_is_a_one_line_error_with_its_place(
    tmp_path: Path, checks: str, message: str
) -> None:
    path = _write(tmp_path, checks)
    with pytest.raises(SpecError) as exc:
        load_suite(path)
    text = str(exc.value)
    assert message in text
    assert f"{path}:10:" in text or f"{path}:9:" in text  # the expect entry's line


def _run(path: Path, *extra: str) -> tuple[int, dict[str, Any]]:
    out = path.parent / "out.json"
    with pytest.raises(SystemExit) as exc:
        main(["run", str(path), "--quiet", "--output", str(out), *extra])
    return int(exc.value.code or 0), json.loads(out.read_text())


def test_checks_run_without_a_model_call_and_are_shown_stored_and_counted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    checks = "      - contains: 'Answer to'\n      - max_words: 3\n      - refusal: false"
    with FakeServer() as server:
        path = _write(tmp_path, checks, server.base_url)
        code, data = _run(path, "--no-judge")
        calls = server.calls
    out = " ".join(capsys.readouterr().out.split())
    assert code == 0
    assert calls == 1  # the answer only: checks call no model
    (response,) = data["responses"]
    records = {j["criterion"]: j for j in response["judgments"]}
    assert records['contains "Answer to"']["passed"] is True
    assert records['contains "Answer to"']["score"] == 10
    assert records["max_words 3"]["passed"] is False
    assert records["max_words 3"]["reasoning"].endswith("words > 3")
    assert records["refusal false"]["passed"] is True
    assert all(j["evaluator"] == "expect" for j in response["judgments"])
    assert 'check PASS contains "Answer to": 1/1' in out
    assert "check FAIL max_words 3: 0/1" in out
    assert "[FAIL]" in out  # a failed check fails the cell


def test_checks_beside_a_judge_count_toward_pass_fail(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    with FakeServer() as server:
        text = SUITE.format(url=server.base_url, checks="      - icontains: answer")
        text = text.replace("    expect:", '    criteria: ["Is correct"]\n    expect:')
        text += "judge: {model: fake/judge}\n"
        path = tmp_path / "suite.yaml"
        path.write_text(text)
        code, data = _run(path, "--no-calibration")
        assert server.calls == 2  # the answer and one judge call
    (response,) = data["responses"]
    assert sorted(j["evaluator"] for j in response["judgments"]) == ["criteria", "expect"]
    assert "[PASS]" in capsys.readouterr().out
