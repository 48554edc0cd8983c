"""A changed reference prompt carries a warning into `compare` and `insights`, and the
review of the old reference is shown as not applying (issue 17 item 6); the compare
verdict never reads "no detectable change" beside an interval that excludes 0."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from helpers_cli import run_cli, run_suite
from qualspec.analysis import RunComparison, compare_paired, format_comparison, verdict_text
from qualspec.store import Store
from qualspec.testing import FakeServer

KEY_ENV = "FAKE_REFCHANGE_KEY"
_BLOCK = re.compile(r"- (\w+):\n  reference <<<(.*?)>>>\n  answer <<<(.*?)>>>", re.DOTALL)
COMPANIES = ("acme", "globex")


def _reply(body: dict[str, Any]) -> str:
    """The reference model's industry depends on the prompt's wording (v2 says "sector");
    the candidate always answers the same; the grader: 100 when equal, else 20."""
    model = str(body["model"])
    text = str(body["messages"][-1]["content"])
    if model == "grader":
        fields = {}
        for name, ref, answer in _BLOCK.findall(text):
            same = ref.strip().casefold() == answer.strip().casefold()
            fields[name] = {
                "accuracy": 100 if same else 20,
                "match": "exact" if same else "partial",
                "explanation": "compared",
                "confidence": 0.9,
            }
        return json.dumps({"fields": fields})
    company = text.rsplit(" ", 1)[-1]
    if model == "ref":
        industry = "Hardware" if "sector" in text else "SaaS"
        return json.dumps({"name": company, "industry": industry})
    return json.dumps({"name": company, "industry": "SaaS"})


@pytest.fixture(autouse=True)
def _work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeServer]:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(KEY_ENV, "sk-refchange")
    monkeypatch.setenv("QUALSPEC_USER", "erin")
    monkeypatch.setenv("COLUMNS", "300")
    with FakeServer(judge_reply=_reply) as server:
        yield server


def _suite(tmp_path: Path, server: FakeServer, prompt: str) -> Path:
    path = tmp_path / "suite.yaml"
    path.write_text(
        "name: profiles\n"
        "candidates: [{name: bot, model: fake/bot}]\n"
        "scenarios:\n"
        f'  - name: profile\n    prompt: "{prompt} {{{{ company }}}}"\n'
        f"    inputs: [{', '.join(f'{{id: {c}, company: {c}}}' for c in COMPANIES)}]\n"
        "    reference: {model: fake/ref}\n"
        "    output_schema: {fields: [{name: name}, {name: industry}]}\n"
        "grader: {model: fake/grader}\n"
        "providers:\n"
        f'  fake: {{type: openai, base_url: "{server.base_url}", api_key_env: {KEY_ENV}}}\n',
        encoding="utf-8",
    )
    return path


def test_a_changed_reference_prompt_is_warned_about_in_compare_insights_and_reference_list(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], _work: FakeServer
) -> None:
    server = _work
    v1 = run_suite(
        capsys, _suite(tmp_path, server, "Extract the company profile as JSON. Company:")
    )
    with Store.open() as store:
        old_keys = {a.input_id: a.call_key for a in store.reference_answers()}
    code, _, err = run_cli(capsys, "reference", "validate", old_keys["acme"][:12], "--notes", "ok")
    assert code == 0, err
    # graded again against the validated reference (everything from the cache)
    v1 = run_suite(
        capsys, _suite(tmp_path, server, "Extract the company profile as JSON. Company:")
    )

    # v2 of the prompt: the reference is asked anew (another call key) and answers otherwise
    v2 = run_suite(
        capsys, _suite(tmp_path, server, "Extract the company profile (sector) as JSON:")
    )

    code, out, err = run_cli(capsys, "compare", v1, v2)
    assert code == 0, out + err
    text = " ".join(out.split())
    assert (
        "WARNING: reference changed for 2 inputs (of 2 graded in both runs; 2 asked with a "
        "different prompt or model): profile/acme, profile/globex" in text
    )
    assert "1 had a person's review that does not apply to the new reference" in text
    code, out, _ = run_cli(capsys, "compare", v1, v2, "--format", "json")
    changes = json.loads(out)["reference_changes"]
    assert changes["inputs"] == 2 and changes["review_lost"] == 1
    assert {c["input"]: c["status_a"] for c in changes["changes"]} == {
        "profile/acme": "validated",
        "profile/globex": "unvalidated",
    }

    # a run compared with itself: the same references, no warning
    code, out, _ = run_cli(capsys, "compare", v2, v2)
    assert code == 0 and "reference changed" not in out

    code, out, _ = run_cli(capsys, "insights", v2)
    assert code == 0
    text = " ".join(out.split())
    assert f"Reference changed for 2 inputs since run {v1}" in text
    assert (
        "profile/acme: asked with a different prompt or model; the review (validated) "
        "does not apply any more" in text
    )
    code, out, _ = run_cli(capsys, "insights", v1)  # no earlier run: nothing to warn about
    assert code == 0 and "Reference changed" not in out

    # the new reference of acme is listed as needing review, naming the old one's review
    code, out, _ = run_cli(capsys, "reference", "list", "--status", "needs_review")
    assert code == 0
    text = " ".join(out.split())
    assert f"needs_review (another prompt's {old_keys['acme'][:12]} was validated)" in text
    with Store.open() as store:
        stale = store.reference_answers(status="needs_review")
    assert [a.input_id for a in stale] == ["acme"]
    assert stale[0].call_key != old_keys["acme"]


def test_a_verdict_never_says_no_change_beside_an_interval_that_excludes_0() -> None:
    # five pairs all up: the interval is above 0, but the exact test's smallest p is 0.0625
    result = compare_paired([60, 62, 58, 61, 59], [70, 80, 60, 75, 66])
    assert result.ci_low > 0 and result.p_value >= 0.05
    assert result.verdict == "no detectable change"  # the statistic, unchanged
    assert verdict_text(result) == "inconclusive (CI excludes 0, p >= 0.05)"
    comparison = RunComparison(
        run_a="a",
        run_b="b",
        suite_a="s",
        suite_b="s",
        source="field_grades",
        scale=100,
        overall=result,
    )
    text = " ".join(format_comparison(comparison).split())
    assert "no detectable change" not in text
    assert "Verdict: inconclusive (B-A +10.20 of 100" in text
    assert (
        "the permutation test does not reject no change (p >= 0.05), and the test decides" in text
    )
    assert "with 5 pairs p cannot go below 0.0625: compare more inputs" in text
    data = json.loads(format_comparison(comparison, "json"))
    assert data["overall"]["verdict_text"].startswith("inconclusive")
    # an interval across 0 still reads "no detectable change"
    flat = compare_paired([60, 62, 58, 61, 59], [62, 60, 59, 60, 60])
    assert verdict_text(flat) == "no detectable change"
