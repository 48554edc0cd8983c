"""One verdict everywhere (issue 17, items 4, 10 and 12): one run, built on the fake server
with a judge that scores by content, read four ways (the console of ``qualspec run``, its
results JSON, its HTML report, the web app's run page and API) gives the same PASS/FAIL,
the same counts and the same reasons, honouring ``aggregation``; the cache is counted
once; a reference-graded run is scored by its field grades and names its reference."""

from __future__ import annotations

import asyncio
import html
import json
import re
from pathlib import Path
from typing import Any

import httpx
import pytest

from helpers_cli import run_cli_joined, work_in
from helpers_verdicts import CityAnswers, city_judge, profile_suite
from qualspec.store import Store
from qualspec.testing import FakeServer

KEY_ENV = "FAKE_VERDICT_KEY"


@pytest.fixture(autouse=True)
def _env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    work_in(tmp_path, monkeypatch, {KEY_ENV: "sk-verdict", "COLUMNS": "250"})


SUITE = """\
name: verdicts
candidates: [{name: steady, model: fake/steady}, {name: flaky, model: fake/flaky}]
scenarios:
  - name: capital
    prompt: "What is the capital of France?"
    criteria: ["names the right city"]
    expect: [{icontains: paris}]
temperatures: [0, 1.5]
runs_per_temperature: 3
aggregation: %(aggregation)s
judge: fake/judge
providers:
  fake: {type: openai, base_url: "%(url)s", api_key_env: %(key)s}
"""


def _build_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], aggregation: str
) -> tuple[str, dict[str, Any], str, str, str]:
    """(console, results JSON, HTML report, database URL, run id) of one run."""
    db = f"sqlite:///{tmp_path / 'verdicts.db'}"
    with FakeServer(answer=CityAnswers(london_calls={3}), judge_reply=city_judge) as server:
        suite = tmp_path / "suite.yaml"
        text = SUITE % {"aggregation": aggregation, "url": server.base_url, "key": KEY_ENV}
        suite.write_text(text, encoding="utf-8")
        args = ["run", str(suite), "--quiet", "--no-calibration", "--db", db]
        code, console = run_cli_joined(capsys, *args, "-o", "r.json", "--html", "r.html")
    assert code == 0, console
    data = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    return console, data, page, db, data["run"]["id"]


def _web(db: str, run_id: str) -> tuple[str, dict[str, Any]]:
    """The web app's run page and API answer for the run."""
    from qualspec.web import create_app

    async def fetch() -> tuple[str, dict[str, Any]]:
        app = create_app(db=db)
        transport = httpx.ASGITransport(app=app)
        try:
            async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as c:
                page = await c.get(f"/runs/{run_id}")
                api = await c.get(f"/api/runs/{run_id}")
        finally:
            await app.fastapi.state.web.aclose()
        assert page.status_code == 200 and api.status_code == 200
        return page.text, api.json()

    return asyncio.run(fetch())


def _console_rows(console: str) -> dict[str, tuple[str, str, str]]:
    """Candidate -> (label, score, rest of the line) of the console's nested lines."""
    rows = {}
    for m in re.finditer(r"^\s+- (\w+):\s+\[(\w+)\]\s+(\S+)(.*)$", console, re.MULTILINE):
        rows[m.group(1)] = (m.group(2), m.group(3), m.group(4))
    return rows


def _html_rows(page: str) -> dict[str, tuple[str, str]]:
    """Candidate -> (verdict, reasons) of the HTML matrix's verdict column."""
    rows = {}
    pattern = (
        r'<tr class="mrow" data-candidate="([^"]+)">.*?<td class="verdict [^"]*"[^>]*'
        r'data-verdict="([A-Z]+)">(.*?)</td>'
    )
    for m in re.finditer(pattern, page, re.DOTALL):
        why = re.search(r'<span class="why">\((.*?)\)</span>', m.group(3), re.DOTALL)
        rows[html.unescape(m.group(1))] = (m.group(2), html.unescape(why.group(1)) if why else "")
    return rows


def _fact(page: str, label: str) -> str:
    found = re.search(rf"<dt>{label}</dt><dd>(.*?)</dd>", page, re.DOTALL)
    assert found is not None, label
    return html.unescape(re.sub(r"<[^>]+>", " ", found.group(1)))


@pytest.mark.parametrize(
    ("aggregation", "flaky", "rows_passed", "cells_passed"),
    [("majority", "PASS", 2, 4), ("mean_with_variance", "FAIL", 1, 3)],
)
def test_console_json_html_and_web_app_give_one_verdict(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    aggregation: str,
    flaky: str,
    rows_passed: int,
    cells_passed: int,
) -> None:
    console, data, page, db, run_id = _build_run(tmp_path, capsys, aggregation)
    web_page, api = _web(db, run_id)
    verdicts = data["verdicts"]
    assert verdicts["aggregation"] == aggregation
    # the JSON: per candidate line, with counts and reasons
    lines = {row["candidate"]: row for row in verdicts["candidates"]}
    assert lines["steady"]["label"] == "PASS"
    assert lines["flaky"]["label"] == flaky
    assert lines["flaky"]["runs_voted"] == 6 and lines["flaky"]["runs_passed"] == 5
    assert verdicts["totals"]["candidates"] == {
        "passed": rows_passed,
        "failed": 2 - rows_passed,
        "no_verdict": 0,
    }
    assert verdicts["totals"]["cells"]["passed"] == cells_passed
    if flaky == "FAIL":  # every FAIL names what failed
        reasons = lines["flaky"]["reasons"]
        assert "at 1.5: 6.3/10 < 7" in reasons
        assert any(re.fullmatch(r"at 1\.5: check '.*paris.*' failed in 1 of 3", r) for r in reasons)
    else:
        assert lines["flaky"]["reasons"] == []
    # the console: the same verdict, score, reasons and counts
    rows = _console_rows(console)
    for name, row in lines.items():
        label, score, rest = rows[name]
        assert label == row["label"], console
        assert score == f"{row['score']:.1f}/10".replace(".0/", "/"), console
        for reason in row["reasons"]:
            assert reason in rest, console
        if aggregation == "majority":
            assert f"{row['runs_passed']} of {row['runs_voted']} runs passed" in rest
    totals = verdicts["totals"]
    verdict_line = (
        f"Verdicts: {rows_passed} of 2 candidate lines passed (steady 1 of 1, flaky "
        f"{int(flaky == 'PASS')} of 1); cells: {cells_passed} of 4 passed; aggregation "
        f"{aggregation}"
    )
    assert verdict_line in console
    # the HTML report and the web app's run page (the report, from the store)
    for shown in (page, web_page):
        assert _html_rows(shown) == {
            name: (row["label"], "; ".join(row["reasons"])) for name, row in lines.items()
        }
        assert _fact(shown, "verdicts").startswith(f"{rows_passed} of 2 candidate lines passed")
        p, f = totals["cells"]["passed"], totals["cells"]["failed"]
        assert f"{p} of {p + f} cells with a verdict passed" in _fact(shown, "pass rate")
    # the web app's API: the results JSON's verdicts
    assert api["verdicts"] == verdicts


def test_the_cache_is_counted_once_the_same_everywhere(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A judge whose first answer is unreadable is asked again: on a rerun, more calls
    come from the cache than records. Every report counts the records, as the results file
    and the store do."""

    def judge(body: dict[str, Any]) -> str:
        if "could not be read" in json.dumps(body["messages"]):
            return json.dumps({"scores": {"1": 8, "2": 8}, "reasoning": "ok"})
        return "I think it is fine."

    db = f"sqlite:///{tmp_path / 'cache.db'}"
    with FakeServer(judge_reply=judge) as server:
        suite = tmp_path / "suite.yaml"
        suite.write_text(
            "name: cache\n"
            "candidates: [{name: c, model: fake/a}]\n"
            "scenarios:\n"
            '  - {name: s, prompt: "Say hi", criteria: ["is polite", "is short"]}\n'
            "judge: {model: fake/judge, mode: all_criteria}\n"
            f'providers:\n  fake: {{type: openai, base_url: "{server.base_url}", '
            f"api_key_env: {KEY_ENV}}}\n",
            encoding="utf-8",
        )
        args = ["run", str(suite), "--quiet", "--no-calibration", "--db", db]
        code, _ = run_cli_joined(capsys, *args, "-o", "a.json")
        assert code == 0
        code, console = run_cli_joined(capsys, *args, "-o", "b.json", "--html", "b.html")
    assert code == 0, console
    counts = json.loads((tmp_path / "b.json").read_text(encoding="utf-8"))["summary"]["counts"]
    answers, judgments = counts["cached_responses"], counts["cached_judgments"]
    assert answers == 1 and judgments >= 1
    phrase = f"1 answer and {judgments} judgment{'s' * (judgments != 1)} from cache"
    calls = next(line for line in console.splitlines() if line.startswith("Calls:"))
    assert phrase in calls, console
    assert f"Responses: 1, {answers} from cache" in console
    page = (tmp_path / "b.html").read_text(encoding="utf-8")
    assert _fact(page, "cache").startswith(phrase)
    with Store.open(db) as store:
        (latest, _first) = store.list_runs()
    assert latest.n_cached == answers + judgments


def _profile(body: dict[str, Any]) -> str:
    model, text = str(body["model"]), json.dumps(body["messages"])
    if model == "grader":  # grades the fields rules could not decide: industry
        return json.dumps(
            {
                "fields": {
                    "industry": {
                        "accuracy": 25,
                        "match": "partial",
                        "explanation": "a related industry",
                        "confidence": 0.9,
                    }
                }
            }
        )
    industry = "Software" if model == "drifter" else "SaaS"
    assert "Profile" in text
    return json.dumps({"name": "Acme", "industry": industry})


def test_a_reference_graded_run_is_scored_by_its_field_grades_and_names_its_reference(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = f"sqlite:///{tmp_path / 'ref.db'}"
    with FakeServer(judge_reply=_profile, answer=_profile) as server:
        suite = profile_suite(tmp_path / "suite.yaml", server.base_url, KEY_ENV)
        args = ["run", str(suite), "--quiet", "--no-calibration", "--db", db]
        code, console = run_cli_joined(capsys, *args, "-o", "r.json", "--html", "r.html")
    assert code == 0, console
    data = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    # exact: every field matches (100); drifter: industry 25, name 100, name critical (x2)
    rows = _console_rows(console)
    assert set(rows) == {"exact", "drifter"}, console  # the reference is no candidate
    assert rows["exact"][:2] == ("PASS", "100/100")
    assert rows["drifter"][:2] == ("FAIL", "75/100")
    assert "REFERENCE: fake/ref (1 reference answer)" in console
    assert "[ANSWERED]" not in console
    assert "run at 0" not in console  # the reference's temperature is not the candidates'
    lines = {row["candidate"]: row for row in data["verdicts"]["candidates"]}
    assert set(lines) == {"exact", "drifter"}
    assert lines["drifter"]["scale"] == 100
    assert lines["drifter"]["reasons"] == ["75/100 < 80"]
    assert rows["drifter"][2].strip().startswith("(75/100 < 80)")
    # the HTML: the same verdicts, the reference named as such, scored answers and the
    # per-model, band and field summary
    assert _html_rows(page) == {"exact": ("PASS", ""), "drifter": ("FAIL", "75/100 < 80")}
    assert "1 of 2 cells with a verdict passed" in _fact(page, "pass rate")
    assert "UNSCORED" not in page
    assert re.search(r"score 100/100 <span class=\"badge pass\">PASS</span>", page)
    assert 'data-candidate="reference"' not in page
    assert "Reference: <strong>fake/ref</strong>" in page
    assert '<section id="fields">' in page
    model_rows = re.findall(r'<tr data-model="([^"]+)"><td>[^<]*</td><td class="num">([^<]*)', page)
    assert dict(model_rows) == {"drifter": "75.0", "exact": "100.0"}
    assert '<tr data-field="industry">' in page
    assert data["field_grades"]["by_model"]["drifter"]["band"] in page
    # the web app's run page: the same verdicts, the failing answer saying why on its row
    web_page, _api = _web(db, data["run"]["id"])
    assert _html_rows(web_page) == _html_rows(page)
    assert '<td class="why">field grade 75/100 &lt; 80</td>' in web_page
