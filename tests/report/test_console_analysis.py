"""The console's temperature and role blocks on a run made with the fake server:
2 candidates x 2 roles x 3 temperatures x 2 runs, answers and scores scripted per call."""

from __future__ import annotations

import json
import re
import threading
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from qualspec.cli import main
from qualspec.report._console_analysis import stability_chart
from qualspec.testing import FakeServer

KEY_ENV = "FAKE_ANALYSIS_KEY"
MODEL_B = "b[/i]"  # a candidate name that is rich markup: printed literally


def _user_text(body: dict[str, Any]) -> str:
    messages = body.get("messages") or []
    return str(messages[-1].get("content", "")) if messages else ""


class Script:
    """Candidate answers carry their score as ``[quality N]``; the judge reads it back.

    model-a: expert 9, naive 5 at every temperature (identical answers: stable).
    model-b: naive 4 everywhere; expert 8, but at 1.5 one of its two runs rambles (2).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._seen: Counter[tuple[str, str, float]] = Counter()

    def answer(self, body: dict[str, Any]) -> str:
        model, text = str(body.get("model")), _user_text(body)
        temperature = float(body.get("temperature", 0.0))
        expert = "expert" in text
        with self._lock:
            self._seen[(model, text, temperature)] += 1
            nth = self._seen[(model, text, temperature)]
        if model == "model-a":
            return "Paris is the capital. [quality 9]" if expert else "Paris? [quality 5]"
        if not expert:
            return "Maybe Paris. [quality 4]"
        if temperature == 1.5 and nth == 2:
            return "Bananas orbit the moon sideways. [quality 2]"
        return "The capital of France is Paris. [quality 8]"

    @staticmethod
    def judge(body: dict[str, Any]) -> str:
        found = re.search(r"\[quality (\d+)\]", _user_text(body))
        score = int(found.group(1)) if found else 8
        return json.dumps({"score": score, "reasoning": "scripted"})


@pytest.fixture
def server() -> Iterator[FakeServer]:
    script = Script()
    with FakeServer(answer_reply=script.answer, judge_reply=script.judge) as srv:
        yield srv


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setenv(KEY_ENV, "sk-analysis-test")
    monkeypatch.setenv("COLUMNS", "200")
    return work


def write_suite(
    work: Path, base_url: str, extra: str = "", temperatures: str = "[0.0, 0.7, 1.5]"
) -> Path:
    path = work / "t.yaml"
    path.write_text(
        "name: temps\n"
        "candidates:\n"
        "  - {name: a, model: fake/model-a}\n"
        f"  - {{name: '{MODEL_B}', model: fake/model-b}}\n"
        "roles:\n"
        "  - {name: naive, preamble: 'I am new here.'}\n"
        "  - {name: expert, preamble: 'I am an expert.'}\n"
        f"temperatures: {temperatures}\n"
        "runs_per_temperature: 2\n"
        f"{extra}"
        "scenarios:\n"
        "  - {name: capital, prompt: 'What is the capital of France?', "
        "criteria: ['names Paris']}\n"
        "judge: fake/judge\n"
        "providers:\n"
        f'  fake: {{type: openai, base_url: "{base_url}", api_key_env: {KEY_ENV}}}\n',
        encoding="utf-8",
    )
    return path


def qualspec(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    with pytest.raises(SystemExit) as exc:
        main(list(args))
    out = capsys.readouterr()
    code = exc.value.code
    return (code if isinstance(code, int) else 1), out.out + out.err


def run_suite(capsys: pytest.CaptureFixture[str], suite: Path) -> tuple[str, dict[str, Any]]:
    code, out = qualspec(
        capsys, "run", str(suite), "--quiet", "--no-calibration", "--output", "out.json"
    )
    assert code == 0, out
    return out, json.loads((suite.parent / "out.json").read_text(encoding="utf-8"))


def row_of(out: str, label: str) -> str:
    return next(line for line in out.splitlines() if f" {label} " in line and "/10" in line)


def test_temperature_and_role_blocks(
    server: FakeServer, workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, data = run_suite(capsys, write_suite(workdir, server.base_url))
    # the Candidate(role) x Temperature table: mean ± std, flaky and unstable marks
    assert "Temp 1.5" in out
    assert row_of(out, "a (expert)").count("9/10 ±0.0") == 3
    b_expert = row_of(out, f"{MODEL_B} (expert)")
    assert "5/10 ±3.0 (flaky) (unstable)" in b_expert
    assert b_expert.count("8/10 ±0.0") == 2
    # per-cell metrics, stability ranking, recommended temperature
    assert "Temperature metrics" in out and "Safety ceiling" in out
    assert re.search(rf"Temperature stability: a \(1\.00\) > {re.escape(MODEL_B)} \(0\.\d\d\)", out)
    # each recommendation with its mean, interval and n (2 roles x 2 runs per temperature)
    assert (
        "Recommended temperature: a 0 (mean 7.0, 95% CI 5.0 to 9.0, n=4); "
        f"{MODEL_B} 0 (mean 6.0, 95% CI 4.0 to 8.0, n=4)"
    ) in out
    # the chart: one marker per candidate, temperatures on the axis, a legend
    chart = out[out.index("Stability chart") :]
    assert "10 │" in chart and " 0 │" in chart and "Temperature" in chart
    assert f"● a   ○ {MODEL_B}" in chart
    # role gaps: naive minus expert, both with an interval excluding 0
    assert "a: naive - expert -4.0 (95% CI -4.0 to -4.0, n=6); largest on: names Paris -4.0" in out
    assert re.search(
        rf"{re.escape(MODEL_B)}: naive - expert -3\.0 \(95% CI -4\.0 to -\d\.\d, n=6\)", out
    )
    observations = out[out.index("Observations:") :]
    assert (
        "- expert role consistently outperforms naive (every candidate: 2 candidates, each "
        "gap's 95% CI excludes 0, 12 pairs)"
    ) in observations
    # a drop of 1.5 points on 4 answers a temperature: not told apart from noise
    assert (
        f"- {MODEL_B}: no clear change across temperatures (at temp 1.5: 6.0 -> 4.5; change "
        "95% CI -4.0 to +1.0, n=4 and 4)"
    ) in observations
    assert "- a holds its score across temperatures (7.0 to 7.0, n>=4 per temperature)" in (
        observations
    )
    # a cell has 2 runs a temperature: too few for its optimal temperature and sensitivity
    assert "temperature sensitivity" not in observations
    assert "- 1 cell is flaky at temp 1.5 (runs disagree on PASS/FAIL)" in observations
    # the results file carries the same analysis, and the aggregation the run used
    assert data["run"]["metadata"]["aggregation"] == "mean_with_variance"
    analysis = data["analysis"]
    assert analysis["aggregation"] == "mean_with_variance"
    assert analysis["similarity_method"] in ("embeddings", "lexical")
    assert analysis["similarity_method"] in out
    assert analysis["recommended_temperature"] == {"a": 0.0, MODEL_B: 0.0}
    assert len(analysis["cells"]) == 4 and len(analysis["role_gaps"]) == 2
    flaky = [
        (c["candidate"], c["role"], p["temperature"])
        for c in analysis["cells"]
        for p in c["points"]
        if p["flaky"]
    ]
    assert flaky == [(MODEL_B, "expert", 1.5)]
    # a stored run shows the same blocks
    with_store = [line for line in out.splitlines() if line.startswith("Recommended")]
    code, shown = qualspec(capsys, "runs", "show", data["run"]["id"])
    assert code == 0, shown
    assert with_store == [line for line in shown.splitlines() if line.startswith("Recommended")]
    assert "Observations:" in shown and "Stability chart" in shown


def test_majority_aggregation_is_recorded_and_shown(
    server: FakeServer, workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, data = run_suite(
        capsys, write_suite(workdir, server.base_url, extra="aggregation: majority\n")
    )
    assert data["run"]["metadata"]["aggregation"] == "majority"
    assert data["analysis"]["aggregation"] == "majority"
    assert "5/10 (1/2 pass) (flaky) (unstable)" in row_of(out, f"{MODEL_B} (expert)")
    assert "9/10 (2/2 pass)" in row_of(out, "a (expert)")
    assert "aggregation of runs: majority" in out


def test_roles_at_one_temperature_show_role_gaps_without_a_chart(
    server: FakeServer, workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, data = run_suite(capsys, write_suite(workdir, server.base_url, temperatures="[0.0]"))
    # 2 pairs: a gap with its n, no interval, and no finding
    assert "a: naive - expert -4.0 (n=2, too few pairs for an interval: at least 5 needed)" in out
    assert (
        "- a: too few paired scores to compare naive and expert (gap -4.0, n=2, too few pairs "
        "for an interval: at least 5 needed)"
    ) in out
    assert "outperforms" not in out
    for block in ("Temperature metrics", "Stability chart", "Recommended temperature"):
        assert block not in out
    assert len(data["analysis"]["role_gaps"]) == 2


def test_one_temperature_and_no_roles_shows_no_analysis(
    server: FakeServer, workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = workdir / "one.yaml"
    suite.write_text(
        "name: one\ncandidates: [{name: a, model: fake/model-a}]\n"
        "scenarios: [{name: s, prompt: 'Capital of France?', criteria: ['names Paris']}]\n"
        "judge: fake/judge\nproviders:\n"
        f'  fake: {{type: openai, base_url: "{server.base_url}", api_key_env: {KEY_ENV}}}\n',
        encoding="utf-8",
    )
    out, data = run_suite(capsys, suite)
    assert "SCENARIO:" in out
    for block in ("Temperature metrics", "Observations:", "Stability chart", "Role gaps"):
        assert block not in out
    assert data["analysis"]["role_gaps"] == [] and len(data["analysis"]["cells"]) == 1


def test_stability_chart_draws_levels_and_slopes() -> None:
    lines = stability_chart({"a": [(0.0, 10.0), (1.0, 10.0)], "b": [(0.0, 8.0), (1.0, 2.0)]})
    assert lines[0] == "Score"
    top = next(line for line in lines if line.startswith("10 │"))
    assert top.count("●") == 2 and "─" in top
    assert next(line for line in lines if line.startswith(" 8 │")).endswith("○") is False
    assert "○" in next(line for line in lines if line.startswith(" 8 │"))
    assert "○" in next(line for line in lines if line.startswith(" 2 │"))
    assert any("·" in line for line in lines)
    assert lines[-1].strip() == "● a   ○ b"
    assert stability_chart({"a": [(0.5, 9.0)]}) == []


def test_a_judge_that_fails_calibration_gets_no_findings(
    server: FakeServer, workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # calibration on: the scripted judge gives its default 8 to every known pair (no
    # separation), so its scores of the run are not meaningful
    suite = write_suite(workdir, server.base_url)
    code, out = qualspec(capsys, "run", str(suite), "--quiet", "--output", "out.json")
    assert code == 0, out
    data = json.loads((workdir / "out.json").read_text(encoding="utf-8"))
    assert "scores are NOT meaningful" in out
    assert "Recommended temperature: not meaningful: judge failed calibration" in out
    assert "outperforms" not in out and "holds its score" not in out
    observations = out[out.index("Observations:") :]
    assert "- not meaningful: judge failed calibration (fake/judge, separation 0.00)" in (
        observations
    )
    analysis = data["analysis"]
    assert analysis["scores_meaningful"] is False
    assert analysis["recommended_temperature"] == {"a": None, MODEL_B: None}
    assert not any(g["finding"] for g in analysis["role_gaps"])
