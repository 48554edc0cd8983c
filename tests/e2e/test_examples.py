"""Every example in examples/ runs: on the fake server with a model override (fast)."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from qualspec.cli import main
from qualspec.testing import FakeServer


@pytest.fixture
def workdir(
    tmp_path: Path, repo_root: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[Path, FakeServer]]:
    shutil.copytree(repo_root / "examples", tmp_path / "examples")
    monkeypatch.chdir(tmp_path)
    with FakeServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-examples")
        yield tmp_path, server


def _run(*args: str) -> int:
    with pytest.raises(SystemExit) as exc:
        main(list(args))
    return int(exc.value.code or 0)


@pytest.mark.parametrize(
    ("example", "extra", "answers"),
    [
        ("examples/quickstart.yaml", [], 8),
        ("examples/temperature_stability.yaml", [], 12),
        (
            "examples/evidence_disclosure.py",
            ["--roles", "naive_engineer,mental_health_professional", "--temps", "0,0.7"],
            12,
        ),
    ],
)
def test_example_runs_on_the_test_server(
    workdir: tuple[Path, FakeServer],
    capsys: pytest.CaptureFixture[str],
    example: str,
    extra: list[str],
    answers: int,
) -> None:
    tmp, server = workdir
    code = _run(
        "run",
        example,
        "--model",
        "openai/fake",
        "--judge",
        "openai/judge",
        "--quiet",
        "--output",
        "out.json",
        *extra,
    )
    out = capsys.readouterr().out
    assert code == 0, out
    assert "SCENARIO:" in out
    data = json.loads((tmp / "out.json").read_text())
    assert data["schema_version"].startswith("1.")
    assert len(data["responses"]) == answers
    assert all(r["error"] is None for r in data["responses"])
    judged = [j for r in data["responses"] for j in r["judgments"] if j["evaluator"] != "expect"]
    assert judged and all(j["score"] == 8 for j in judged)
    compared = [
        j
        for j in data.get("unattached_judgments", [])
        if (j.get("details") or {}).get("type") == "comparison"
    ]
    if "evidence" in example:  # 2 roles x 2 temperatures; 3 candidates x 2 temperatures
        assert len(compared) == 4 + 6 and all(j["scores"] for j in compared)
        assert "Comparisons:" in out
    # Identical judge calls (same answer, same criterion) may be served from the cache
    # when one finishes before the other starts, and an all-criteria judge makes one call
    # per answer: the calls the run reports are the calls the server saw.
    made = re.search(r"Calls: (\d+) candidate, (\d+) judge", out)
    assert made is not None, out
    assert int(made.group(1)) == answers
    if "temperature" in example:  # 3 temperatures x 2 runs: the temperature analysis
        for block in ("Temperature metrics", "Temperature stability:"):
            assert block in out, out
        # the test server's judge gives every answer 8, the known good and bad answers of
        # its calibration too: it fails calibration, and its scores make no finding
        assert "scores are NOT meaningful" in out
        assert "Recommended temperature: not meaningful: judge failed calibration" in out
        assert "holds its score" not in out and "Stability chart" not in out  # a chart of scores
        assert data["analysis"]["scores_meaningful"] is False
        assert data["analysis"]["recommended_temperature"] == {"smollm2": None}
        assert {c["stability"] for c in data["analysis"]["cells"]} == {1.0}  # same answers
    # a judge calibrated before the run (judge: {calibrate: N}) scores 2 answers per pair
    calibrated = data["run"]["metadata"].get("judge_calibration", {})
    calibration_calls = sum(2 * c["n_pairs"] for c in calibrated.values())
    assert server.calls == answers + int(made.group(2)) + calibration_calls


def test_examples_dry_run_counts(
    workdir: tuple[Path, FakeServer], capsys: pytest.CaptureFixture[str]
) -> None:
    _tmp, server = workdir
    assert _run("run", "examples/evidence_disclosure.py", "--dry-run") == 0
    out = capsys.readouterr().out
    # 3 candidates x 2 roles x 1 scenario x 1 temperature; 3 rubric criteria each
    assert "Candidate calls: 6" in out
    assert "Judge calls: 18" in out
    # side by side: the 3 candidates per role (2 groups), each candidate's 2 roles (3 groups,
    # both orders)
    assert "Comparison calls: 2 (compare_candidates_within_roles: 2 groups)" in out
    assert "Comparison calls: 6 (disclosure_by_role: 3 groups)" in out
    assert "Estimated cost" in out
    assert server.calls == 0


@pytest.mark.timeout(1800)
@pytest.mark.embedded_model
def test_temperature_example_on_the_embedded_model(
    tmp_path: Path,
    repo_root: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The example end to end on SmolLM2 (candidate and judge): its scenario with
    temperature-specific criteria at the two temperatures that have one (0 and 1), one run
    each; no judge calibration (the README test runs that). Its other scenario, its middle
    temperature and its second run per temperature add nothing here but model time (2
    answers and 4 judge calls, not 4 and 8): the whole example's matrix (3 temperatures x 2
    runs, both scenarios) is checked on the test server above."""
    shutil.copytree(repo_root / "examples", tmp_path / "examples")
    monkeypatch.chdir(tmp_path)
    code = _run(
        "run",
        "examples/temperature_stability.yaml",
        "--scenarios",
        "ibuprofen_dose",
        "--temps",
        "0,1",
        "--runs",  # one answer per temperature: the runs of one temperature are on the server
        "1",
        "--no-calibration",
        "--timeout",  # no call time limit a loaded machine could reach
        "600",
        "--quiet",
        "--output",
        "out.json",
    )
    captured = capsys.readouterr()
    out = captured.out
    assert code == 0, captured.err + out[-3000:]
    data = json.loads((tmp_path / "out.json").read_text())
    assert len(data["responses"]) == 2
    assert all(r["error"] is None and r["text"] for r in data["responses"])
    # the at_temperature criteria were judged at their temperatures only
    by_temp = {
        r["temperature"]: {j["criterion"] for j in r["judgments"]}
        for r in data["responses"]
        if r["scenario"] == "ibuprofen_dose"
    }
    assert "does not state a dangerous dose" in by_temp[1.0]
    assert "does not state a dangerous dose" not in by_temp[0.0]
    analysis = data["analysis"]
    assert [c["scenario"] for c in analysis["cells"]] == ["ibuprofen_dose"]
    for cell in analysis["cells"]:
        assert [p["temperature"] for p in cell["points"]] == [0.0, 1.0]
        assert 0.0 <= cell["stability"] <= 1.0  # two real answers compared
    assert analysis["similarity_method"] in out
    for block in ("Temperature metrics", "Temperature stability: smollm2", "Observations:"):
        assert block in out, out
    assert "Recommended temperature:" in out


def test_company_profile_dry_run_counts(
    workdir: tuple[Path, FakeServer], capsys: pytest.CaptureFixture[str]
) -> None:
    _tmp, server = workdir
    assert _run("run", "examples/company_profile/suite.yaml", "--dry-run") == 0
    out = capsys.readouterr().out
    # 5 companies x 1 candidate; one reference answer per company; a grader call per answer
    assert "Candidate calls: 5" in out
    assert "Reference calls: 5" in out
    assert "Grader calls: at most 5" in out
    assert "grader       local/smollm2 (pass at 80/100)" in out
    assert server.calls == 0


@pytest.mark.timeout(1800)
@pytest.mark.embedded_model
def test_company_profile_example_on_the_embedded_model(
    tmp_path: Path,
    repo_root: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The reference-graded example end to end on SmolLM2 (candidate, reference and
    grader), on 1 of its 5 companies: the one with a non-English name (the dry run above
    counts all 5; a second company was one more candidate, reference and grader call,
    proving nothing more)."""
    shutil.copytree(repo_root / "examples", tmp_path / "examples")
    companies = tmp_path / "examples" / "company_profile" / "companies.csv"
    lines = companies.read_text(encoding="utf-8").splitlines()
    kept = [lines[0], next(line for line in lines if line.startswith("soren_muller"))]
    companies.write_text("\n".join(kept) + "\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    code = _run(
        "run",
        "examples/company_profile/suite.yaml",
        "--no-calibration",
        "--timeout",  # no call time limit a loaded machine could reach
        "600",
        "--quiet",
        "--output",
        "out.json",
    )
    captured = capsys.readouterr()
    out = captured.out
    assert code == 0, captured.err + out[-3000:]
    data = json.loads((tmp_path / "out.json").read_text())
    kinds = sorted(r["kind"] for r in data["responses"])
    assert kinds == ["candidate", "reference"]
    assert all(r["error"] is None and r["text"] for r in data["responses"])
    grades = [
        j for r in data["responses"] for j in r["judgments"] if j["evaluator"] == "field_grader"
    ]
    assert len(grades) == 1
    fields = {"name", "industry", "founded_year", "headquarters"}
    for grade in grades:
        details = grade["details"]
        assert details["type"] == "field_grade" and set(details["fields"]) == fields
        assert grade["threshold"] == 80.0
        assert grade["score"] is None or 0.0 <= grade["score"] <= 100.0
        if grade["error"] is None and grade["score"] is not None:
            assert details["band"] in ("Excellent", "Good", "Acceptable", "Needs improvement")
    assert "Reference-graded fields (field_grader, pass >= 80)" in out
    assert "Cost per suite:" in out
    assert data["field_grades"]["overall"]["n"] == 1
