"""The console and HTML reports follow the analysis' evidence (issue 17): a gap without an
interval says so, a judge that failed calibration makes no finding, and an effective
temperature is shown on the cell whose provider ran it, not on the shared column."""

from __future__ import annotations

import io
from datetime import UTC, datetime

from rich.console import Console

from qualspec.analysis import analysis_to_dict, analyze_run
from qualspec.report import render_html, render_run
from qualspec.store import JudgmentRecord, ResponseRecord, RunRecord, RunSummary

FAILED_CALIBRATION = {
    "criteria": {
        "judge": "local/smollm2",
        "separation": 0.0,
        "meaningful": False,
        "verdict": "judge local/smollm2: scores are NOT meaningful (separation 0.00)",
    }
}


def build(
    cells: list[tuple[str, str | None, float, int, float, float]], **metadata: object
) -> RunRecord:
    """(candidate, role, temperature, run, effective temperature, score) per answer."""
    responses, judgments = [], []
    for candidate, role, t, run, effective, score in cells:
        key = f"{candidate}|{role}|{t}|{run}"
        responses.append(
            ResponseRecord(
                key=key, candidate=candidate, role=role, scenario="s", input_id=None,
                temperature=t, effective_temperature=effective, run_index=run,
                provider="fake", model="m", text=f"answer {score}",
            )
        )  # fmt: skip
        judgments.append(
            JudgmentRecord(
                response_key=key, criterion="c", judge_key=f"j|{key}", judge_model="judge",
                threshold=7.0, score=score, passed=score >= 7.0,
            )
        )  # fmt: skip
    summary = RunSummary(
        id="r1", suite_name="suite", suite_hash="h", status="finished",
        started_at=datetime(2026, 1, 1, tzinfo=UTC), finished_at=None, metadata=dict(metadata),
    )  # fmt: skip
    return RunRecord(summary=summary, responses=responses, judgments=judgments)


def console_text(run: RunRecord) -> str:
    buffer = io.StringIO()
    console = Console(file=buffer, width=200, highlight=False, color_system=None)
    render_run(run, console)
    return buffer.getvalue()


NOT_MEANINGFUL = "not meaningful: judge failed calibration"  # qualspec.analysis.NOT_MEANINGFUL
ROLES = {"dimensions": {"roles": ["expert", "naive"]}}


def test_a_gap_of_one_pair_prints_its_n_and_no_interval_and_no_finding() -> None:
    run = build([("gpt", "expert", 0.0, 0, 0.0, 7.0), ("gpt", "naive", 0.0, 0, 0.0, 8.7)], **ROLES)
    out = console_text(run)
    assert "gpt: expert - naive -1.7 (n=1, too few pairs for an interval: at least 5 needed)" in out
    assert "CI -1.7 to -1.7" not in out
    assert "outperforms" not in out and "consistently" not in out
    page = render_html(run)
    assert "none: too few pairs (at least 5)" in page and 'class="clear"' not in page


def _two_roles_two_temperatures(**metadata: object) -> RunRecord:
    cells = []
    for run_index in range(6):
        for t in (0.0, 1.0):
            cells.append(("gpt", "expert", t, run_index, t, 9.0 - 3 * t))
            cells.append(("gpt", "naive", t, run_index, t, 4.0))
    return build(cells, **ROLES, **metadata)


def test_a_judge_that_failed_calibration_prints_not_meaningful_not_findings() -> None:
    good = console_text(_two_roles_two_temperatures())
    assert "expert role outperforms naive" in good
    assert "Recommended temperature: 0 (mean 6.5" in good

    run = _two_roles_two_temperatures(judge_calibration=FAILED_CALIBRATION)
    out = console_text(run)
    assert f"Recommended temperature: {NOT_MEANINGFUL}" in out
    assert f"{NOT_MEANINGFUL}: no gap below is a finding" in out
    assert "outperforms" not in out and "degrades" not in out and "holds its score" not in out
    assert "Stability chart" not in out  # a chart of scores that mean nothing
    observations = out[out.index("Observations:") :]
    assert f"- {NOT_MEANINGFUL} (local/smollm2, separation 0.00)" in observations
    page = render_html(run)
    assert f"gpt: <strong>{NOT_MEANINGFUL}</strong>" in page
    assert 'class="clear"' not in page and "outperforms" not in page
    assert analysis_to_dict(analyze_run(run))["scores_meaningful"] is False


def test_the_effective_temperature_is_shown_per_cell_not_on_the_column() -> None:
    # claude's provider clamps 1.5 to 1; gpt ran at 1.5 as asked
    cells = []
    for candidate, clamp in (("claude", 1.0), ("gpt", 1.5)):
        for t in (0.0, 1.5):
            cells.append((candidate, None, t, 0, min(t, clamp), 9.0))
    out = console_text(build(cells))
    assert "Temp 1.5 (eff" not in out and "Temp 1.5" in out
    claude = next(line for line in out.splitlines() if "│ claude" in line)
    gpt = next(line for line in out.splitlines() if "│ gpt" in line)
    assert "9/10 (eff 1)" in claude
    assert "eff" not in gpt
