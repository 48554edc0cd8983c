"""``qualspec diff`` reads the run's own verdicts (issue 17, "one verdict everywhere"): a
cell the run report shows as PASS is PASS in the diff, under ``aggregation: majority`` too,
each FAIL says why (console, JSON, web), and a reference-graded run's reference answers are
not candidate cells. Runs are built on the fake server, with a judge that scores by content.
"""

from __future__ import annotations

import asyncio
import html
import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import pytest

from helpers_cli import run_cli_joined, work_in
from helpers_verdicts import CityAnswers, city_judge, profile_suite
from qualspec.testing import FakeServer

KEY_ENV = "FAKE_DIFF_VERDICT_KEY"


@pytest.fixture(autouse=True)
def _env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    work_in(tmp_path, monkeypatch, {KEY_ENV: "sk-diff-verdict", "COLUMNS": "250"})


SUITE = """\
name: diff verdicts
candidates: [{name: steady, model: fake/steady}, {name: flaky, model: fake/flaky}]
scenarios:
  - name: capital
    prompt: "What is the capital of France?"
    criteria: ["names the right city"]
    expect: [{icontains: paris}]
temperatures: [0, 1.5]
runs_per_temperature: 3
aggregation: majority
judge: fake/judge
providers:
  fake: {type: openai, base_url: "%(url)s", api_key_env: %(key)s}
"""


def _run(capsys: pytest.CaptureFixture[str], suite: Path, db: str, out: str) -> dict[str, Any]:
    args = ["run", str(suite), "--quiet", "--no-calibration", "--no-cache", "--db", db]
    code, console = run_cli_joined(capsys, *args, "-o", out)
    assert code == 0, console
    data: dict[str, Any] = json.loads(Path(out).read_text(encoding="utf-8"))
    return data


def _web_diff(db: str, a: str, b: str) -> tuple[str, dict[str, Any]]:
    """The web app's diff page and API answer for runs ``a`` and ``b``."""
    from qualspec.web import create_app

    async def fetch() -> tuple[str, dict[str, Any]]:
        app = create_app(db=db)
        transport = httpx.ASGITransport(app=app)
        try:
            async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as c:
                page = await c.get("/diff", params={"a": a, "b": b})
                api = await c.get("/api/diff", params={"a": a, "b": b})
        finally:
            await app.fastapi.state.web.aclose()
        assert page.status_code == 200 and api.status_code == 200
        return page.text, api.json()

    return asyncio.run(fetch())


def _cell_verdicts(data: dict[str, Any]) -> dict[tuple[str, float], dict[str, Any]]:
    """(candidate, temperature) -> the run's own verdict of the cell (results JSON)."""
    return {(c["candidate"], c["temperature"]): c for c in data["verdicts"]["cells"]}


def _changes(diff: dict[str, Any]) -> dict[tuple[str, float], dict[str, Any]]:
    return {(c["candidate"], c["temperature"]): c for c in diff["changes"]}


def test_diff_pass_fail_is_the_run_reports_under_majority(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = f"sqlite:///{tmp_path / 'diff.db'}"
    answers = CityAnswers()
    with FakeServer(answer=answers, judge_reply=city_judge) as server:
        suite = tmp_path / "suite.yaml"
        suite.write_text(SUITE % {"url": server.base_url, "key": KEY_ENV}, encoding="utf-8")
        runs = {}
        for londons, out in ((0, "a.json"), (1, "b.json"), (2, "c.json")):
            answers.london_calls, answers.calls = range(1, londons + 1), Counter()
            runs[londons] = _run(capsys, suite, db, out)
    one_fails = _cell_verdicts(runs[1])[("flaky", 1.5)]
    # the run report: 2 of 3 runs passed, so the cell passes under majority (mean 6.3)
    assert one_fails["label"] == "PASS" and one_fails["runs_passed"] == 2

    code, out = run_cli_joined(capsys, "diff", "a.json", "b.json", "--format", "json")
    assert code == 0, out
    diff = json.loads(out)
    flaky = _changes(diff)[("flaky", 1.5)]
    assert (flaky["passed_a"], flaky["passed_b"]) == (True, True)
    assert flaky["status"] == "regressed"  # the score dropped (9 -> 6.3): no new failure
    assert flaky["score_b"] == pytest.approx(one_fails["score"])
    assert diff["summary"]["new_fail"] == 0
    for key, change in _changes(diff).items():
        for side, data in (("a", runs[0]), ("b", runs[1])):
            verdict = _cell_verdicts(data)[key]
            assert change[f"passed_{side}"] is (verdict["label"] == "PASS"), (key, change)
            assert change[f"reasons_{side}"] == verdict["reasons"]

    # two of three runs fail: a new failure, and the diff says why, as the run report does
    two_fail = _cell_verdicts(runs[2])[("flaky", 1.5)]
    assert two_fail["label"] == "FAIL"
    (reason,) = two_fail["reasons"]
    assert reason.startswith("majority: 2 of 3 runs failed (2 scored below 7, check ")
    code, out = run_cli_joined(capsys, "diff", "a.json", "c.json", "--format", "json")
    changed = _changes(json.loads(out))[("flaky", 1.5)]
    assert (changed["status"], changed["reasons_a"], changed["reasons_b"]) == (
        "new_fail",
        [],
        [reason],
    )
    code, text = run_cli_joined(capsys, "diff", "a.json", "c.json", "--fail-on-regression")
    assert code == 1
    (line,) = [row for row in text.splitlines() if row.startswith("new_fail")]
    assert line.split()[:2] == ["new_fail", "flaky"]
    assert "PASS -> FAIL" in line and line.endswith(f"B: {reason}")

    # the web app reads the same diff: its API is the JSON, its page shows the reasons
    page, api = _web_diff(db, runs[0]["run"]["id"], runs[2]["run"]["id"])
    assert _changes(api)[("flaky", 1.5)] == changed
    rows = re.findall(r'<tr class="tuple new_fail".*?</tr>', page, re.DOTALL)
    (row,) = [r for r in rows if "<td>flaky</td>" in r]
    sides = re.findall(r'<td class="side [^"]*" data-side="\d">(.*?)</td>', row, re.DOTALL)
    a_side, b_side = (" ".join(html.unescape(re.sub(r"<[^>]+>", " ", s)).split()) for s in sides)
    assert a_side.endswith("PASS") and "FAIL" in b_side and b_side.endswith(reason)


def _profile(drift: list[bool]) -> Any:
    def reply(body: dict[str, Any]) -> str:
        model = str(body["model"])
        if model == "grader":  # grades the fields rules could not decide: industry
            field = {"accuracy": 25, "match": "partial", "explanation": "x", "confidence": 0.9}
            return json.dumps({"fields": {"industry": field}})
        industry = "Software" if model == "drifter" and drift[0] else "SaaS"
        return json.dumps({"name": "Acme", "industry": industry})

    return reply


def test_a_reference_graded_diff_has_no_reference_cell_and_reads_the_field_grades(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = f"sqlite:///{tmp_path / 'ref.db'}"
    drift = [True]
    with FakeServer(judge_reply=_profile(drift), answer=_profile(drift)) as server:
        suite = profile_suite(tmp_path / "suite.yaml", server.base_url, KEY_ENV)
        before = _run(capsys, suite, db, "a.json")
        drift[0] = False  # the drifter now answers as the reference does
        after = _run(capsys, suite, db, "b.json")
    code, out = run_cli_joined(capsys, "diff", "a.json", "b.json", "--format", "json")
    assert code == 0, out
    diff = json.loads(out)
    # the reference model's answers are no candidate cell
    assert sorted(c["candidate"] for c in diff["changes"]) == ["drifter", "exact"]
    assert diff["summary"]["total"] == 2
    changes = {c["candidate"]: c for c in diff["changes"]}
    drifter = changes["drifter"]
    # scored by the field grades (0-100), as the run report is, and the FAIL says why
    (was,) = [c for c in before["verdicts"]["cells"] if c["candidate"] == "drifter"]
    assert was["label"] == "FAIL" and was["reasons"] == ["75/100 < 80"]
    assert (drifter["score_a"], drifter["score_b"], drifter["scale"]) == (75.0, 100.0, 100)
    assert (drifter["passed_a"], drifter["passed_b"], drifter["status"]) == (
        False,
        True,
        "new_pass",
    )
    assert drifter["reasons_a"] == ["75/100 < 80"] and drifter["reasons_b"] == []
    assert changes["exact"]["status"] == "unchanged"
    assert diff["references"] == {"a": 1, "b": 1, "changed": 0}
    (now,) = [c for c in after["verdicts"]["cells"] if c["candidate"] == "drifter"]
    assert now["label"] == "PASS"
    # the text names the reference apart, never as a candidate row
    code, text = run_cli_joined(capsys, "diff", "a.json", "b.json")
    rows = [line.split()[1] for line in text.splitlines() if line.startswith(("new_", "unch"))]
    assert sorted(rows) == ["drifter", "exact"]
    assert "Reference answers (not candidates): 1 in A, 1 in B, unchanged" in text
    assert "A: 75/100 < 80" in text
