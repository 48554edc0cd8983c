"""Judge panels end to end: three scripted judges on the fake server (scores by judge
model), one of which never gives a score. The combined scores, the spread, Krippendorff's
alpha (by hand and by the library) and the flags are exactly right in the console, the
results file, ``qualspec agreement``, ``qualspec insights`` and the HTML report."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import krippendorff
import pytest

from helpers_cli import run_cli, work_in
from qualspec.testing import FakeServer

QUESTIONS = ["q1", "q2", "q3", "q4", "q5", "q6"]
# the scores of j1 and j2 per criterion, question by question; j3 never gives a score
TABLE = {
    ("fake/j1", "Correct"): [8, 6, 9, 3, 7, 5],
    ("fake/j2", "Correct"): [8, 7, 9, 2, 5, 5],
    ("fake/j1", "Brief"): [9, 2, 8, 5, 7, 3],
    ("fake/j2", "Brief"): [3, 8, 4, 9, 6, 7],
}

SUITE = """
name: panel
providers:
  fake: {type: openai, base_url: "%(url)s", api_key_env: FAKE_PANEL_KEY}
candidates:
  - {name: bot, model: fake/m}
scenarios:
  - name: quiz
    prompt: "Question {{ q }}"
    criteria: ["Correct", "Brief"]
    inputs: %(inputs)s
judge:
  panel:
    - {model: fake/j1}
    - {model: fake/j2}
    - {model: fake/j3, name: silent}
  combine: %(combine)s
  threshold: 7
"""


def _judge(body: dict[str, Any]) -> str:
    """A judge that answers by its model: j1 and j2 from TABLE, j3 never with a score."""
    model = "fake/" + str(body["model"]).rsplit("/", 1)[-1]
    if model == "fake/j3":
        return "I would rather not say."
    user = body["messages"][-1]["content"]
    question = re.search(r"Answer to: Question (q\d)", user)
    criterion = re.search(r"Criterion: (\w+)", user)
    assert question and criterion
    score = TABLE[(model, criterion.group(1))][QUESTIONS.index(question.group(1))]
    return json.dumps({"score": score, "reasoning": f"{model} gives {score}"})


@pytest.fixture(autouse=True)
def _work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    work_in(tmp_path, monkeypatch, {"FAKE_PANEL_KEY": "sk-panel", "COLUMNS": "400"})


def _run(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, server: FakeServer, combine: str
) -> tuple[str, dict[str, Any]]:
    suite = tmp_path / "suite.yaml"
    inputs = json.dumps([{"id": q, "q": q} for q in QUESTIONS])
    suite.write_text(SUITE % {"url": server.base_url, "inputs": inputs, "combine": combine})
    out = tmp_path / "out.json"
    code, stdout, stderr = run_cli(
        capsys, "run", str(suite), "--quiet", "--no-calibration", "-o", str(out)
    )
    assert code == 0, stdout + stderr
    return stdout, json.loads(out.read_text())


def _hand_interval(a: list[float], b: list[float]) -> float:
    """Krippendorff's alpha of two raters without missing values, interval, by hand."""
    values = a + b
    n = len(values)
    observed = sum(2 * (x - y) ** 2 for x, y in zip(a, b, strict=True)) / n
    expected = 2 * (n * sum(v * v for v in values) - sum(values) ** 2) / (n * (n - 1))
    return 1 - observed / expected


def _hand_nominal(a: list[int], b: list[int]) -> float:
    values = a + b
    n = len(values)
    observed = sum(2 * (x != y) for x, y in zip(a, b, strict=True)) / n
    expected = (n * n - sum(c * c for c in Counter(values).values())) / (n * (n - 1))
    return 1 - observed / expected


def _judgments(data: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(r["input_id"], j["criterion"]): j for r in data["responses"] for j in r["judgments"]}


def test_three_judges_combine_and_their_agreement_is_measured_and_flagged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeServer(judge_reply=_judge) as server:
        console, data = _run(capsys, tmp_path, server, "median")
        # each (answer, criterion): j1 and j2 once, j3 asked and re-asked (2 parse retries)
        assert server.calls == 6 + 12 * (1 + 1 + 3)
    judged = _judgments(data)
    assert len(judged) == 12
    for (question, criterion), j in judged.items():
        i = QUESTIONS.index(question)
        a, b = TABLE[("fake/j1", criterion)][i], TABLE[("fake/j2", criterion)][i]
        assert j["score"] == (a + b) / 2  # the median of the two that scored
        assert j["passed"] is ((a + b) / 2 >= 7)
        details = j["details"]
        assert details["panel_unscored"] == 1 and details["combine"] == "median"
        assert details["spread"] == [min(a, b), max(a, b)]
        members = details["panel"]
        assert [m["judge"] for m in members] == ["fake/j1", "fake/j2", "silent"]
        assert set(members[0]) == {
            "judge", "model", "score", "passed", "reasoning", "unscored_reason"
        }  # fmt: skip
        assert members[0] == {
            "judge": "fake/j1",
            "model": "fake/j1",
            "score": float(a),
            "passed": a >= 7,
            "reasoning": f"fake/j1 gives {a}",
            "unscored_reason": None,
        }
        assert members[2]["model"] == "fake/j3" and members[2]["score"] is None
        assert members[2]["passed"] is None and members[2]["unscored_reason"]
    # the console: each line's combined score and the judges' spread (2 of 3 scored)
    flat = " ".join(console.split())
    # q2: combined Correct 6.5 and Brief 5 (mean 5.75); alone, j1 gave it 4 (6 and 2) and
    # j2 7.5 (7 and 8)
    assert "INPUT: q2 - bot: [FAIL] 5.8/10 (4-7.5, 2 of 3 judges)" in flat
    # q3: combined 9 and 6 (7.5); j1 8.5 (9, 8), j2 6.5 (9, 4)
    assert "INPUT: q3 - bot: [PASS] 7.5/10 (6.5-8.5, 2 of 3 judges)" in flat
    _check_agreement(data, flat)


def _check_agreement(data: dict[str, Any], console: str) -> None:
    (panel,) = data["judge_agreement"]
    assert panel["judges"] == ["fake/j1", "fake/j2", "silent"]
    assert panel["scored"] == {"fake/j1": 12, "fake/j2": 12, "silent": 0} and panel["items"] == 12
    by_criterion = {c["criterion"]: c for c in panel["criteria"]}
    for criterion in ("Correct", "Brief"):
        a, b = TABLE[("fake/j1", criterion)], TABLE[("fake/j2", criterion)]
        hand = _hand_interval([float(x) for x in a], [float(x) for x in b])
        library = krippendorff.alpha([a, b], level_of_measurement="interval")
        found = by_criterion[criterion]["scores"]
        assert found["alpha"] == round(hand, 4) == round(library, 4)
        assert found["n_items"] == 6 and found["ci_low"] <= found["alpha"] <= found["ci_high"]
        pa, pb = [int(x >= 7) for x in a], [int(x >= 7) for x in b]
        assert by_criterion[criterion]["verdicts"]["alpha"] == round(_hand_nominal(pa, pb), 4)
        (pair,) = [p for p in by_criterion[criterion]["pairs"] if p["b"] == "fake/j2"]
        assert pair["n"] == 6
        assert pair["exact"] == round(sum(x == y for x, y in zip(a, b, strict=True)) / 6, 4)
        assert pair["within_one"] == round(
            sum(abs(x - y) <= 1 for x, y in zip(a, b, strict=True)) / 6, 4
        )
    assert by_criterion["Correct"]["scores"]["alpha"] == 0.9012
    assert by_criterion["Brief"]["scores"]["alpha"] == -0.6575
    assert panel["flagged"] == ["Brief"]
    assert not by_criterion["Correct"]["flagged"] and by_criterion["Brief"]["flagged"]
    assert "Brief: scores -0.66 [" in console and "FLAGGED" in console
    assert "Correct: scores 0.90 [" in console


def test_a_judges_entry_panel_votes_by_majority_and_every_report_flags_disagreement(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``judges:`` takes a panel too; ``majority`` passes on more pass votes than fail
    votes (a 1-1 split fails: the unscored judge does not vote), its score the median."""
    suite_text = SUITE.replace("judge:\n  panel:", "judges:\n  - name: trio\n    panel:")
    suite_text = suite_text.replace("\n    - {model", "\n      - {model")
    suite_text = suite_text.replace("  combine:", "    combine:").replace(
        "  threshold: 7", "    threshold: 7"
    )
    with FakeServer(judge_reply=_judge) as server:
        suite = tmp_path / "suite.yaml"
        inputs = json.dumps([{"id": q, "q": q} for q in QUESTIONS])
        suite.write_text(
            suite_text % {"url": server.base_url, "inputs": inputs, "combine": "majority"}
        )
        code, out, err = run_cli(
            capsys, "run", str(suite), "--quiet", "--no-calibration", "-o", str(tmp_path / "r.json")
        )
        assert code == 0, out + err
    data = json.loads((tmp_path / "r.json").read_text())
    for (question, criterion), j in _judgments(data).items():
        assert j["evaluator"] == "trio"
        i = QUESTIONS.index(question)
        a, b = TABLE[("fake/j1", criterion)][i], TABLE[("fake/j2", criterion)][i]
        assert j["score"] == (a + b) / 2
        assert j["passed"] is (a >= 7 and b >= 7)  # both pass; one each way is a tie: fail
    # majority: the flag is on the pass/fail alpha (Correct -> 0.39 and Brief -> -0.83)
    (panel,) = data["judge_agreement"]
    assert panel["basis"] == "verdicts" and panel["flagged"] == ["Brief", "Correct"]
    code, shown, _ = run_cli(capsys, "agreement", str(tmp_path / "r.json"))
    flat = " ".join(shown.split())
    assert code == 0
    assert "Judge vs judge: trio (majority of fake/j1, fake/j2, silent)" in flat
    assert "Correct 0.90 [" in flat and "Brief -0.66 [" in flat
    assert "Items scored of 12: fake/j1 12, fake/j2 12, silent 0" in flat
    assert "2 flagged: the judges do not agree enough on Brief, Correct" in flat
    code, shown, _ = run_cli(capsys, "agreement", str(tmp_path / "r.json"), "--format", "json")
    assert json.loads(shown)["judge_vs_judge"][0]["flagged"] == ["Brief", "Correct"]
    code, shown, _ = run_cli(capsys, "insights", str(tmp_path / "r.json"))
    flat = " ".join(shown.split())
    assert "The judges of 'trio' disagree on 2 of 2 criteria" in flat
    assert "Brief: alpha -0.83 [" in flat
    code, _, err = run_cli(
        capsys, "report", str(tmp_path / "r.json"), "--html", str(tmp_path / "r.html")
    )
    assert code == 0, err
    page = (tmp_path / "r.html").read_text()
    assert "<h2>Agreement between judges</h2>" in page and 'class="flagged"' in page
    assert "<summary>3 judges</summary>" in page
    assert "fake/j1 gives 8" in page and "unscored: no score found" in page


def test_a_panel_is_written_one_way(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A panel of one, a panel beside model:, a member twice: one line each, at its field."""
    cases = {
        "judge: {panel: [{model: fake/a}]}": "a panel needs at least two judges",
        "judge: {model: fake/a, panel: [{model: fake/a}, {model: fake/b}]}": "not both",
        "judge: {panel: [{model: fake/a}, {model: fake/a}]}": "lists 'fake/a' twice",
        "judge: {model: fake/a, combine: mean}": "combine: needs a panel",
        "judge: {panel: [{model: fake/a}, {model: fake/b}], combine: mode}": "combine",
    }
    base = "name: s\ncandidates: [{name: c, model: fake/m}]\n"
    base += "scenarios: [{name: x, prompt: p, criteria: [ok]}]\n"
    for line, expected in cases.items():
        path = tmp_path / "suite.yaml"
        path.write_text(base + line + "\n")
        code, out, err = run_cli(capsys, "run", str(path), "--dry-run")
        assert code == 2, out + err
        assert "suite.yaml:4:" in err and expected in err and "Traceback" not in err


def test_the_dry_run_counts_every_members_calls_at_its_own_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = tmp_path / "suite.yaml"
    inputs = json.dumps([{"id": q, "q": q} for q in QUESTIONS])
    url = "http://127.0.0.1:9/v1"  # nothing is called
    suite.write_text(SUITE % {"url": url, "inputs": inputs, "combine": "mean"})
    code, out, err = run_cli(capsys, "run", str(suite), "--dry-run", "--no-calibration")
    assert code == 0, out + err
    flat = " ".join(out.split())
    assert "judge panel mean of fake/j1, fake/j2, silent (pass at 7/10)" in flat
    assert "Judge calls: 36 (before parse retries)" in flat  # 6 answers x 2 criteria x 3
    for model in ("fake/j1", "fake/j2", "fake/j3"):
        assert f"judge {model} 12 calls" in flat
