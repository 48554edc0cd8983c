"""diff_runs / format_diff on constructed runs: every status, noise, summary, three formats."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime

import pytest

from qualspec.analysis import (
    DIFF_SCHEMA_VERSION,
    STATUSES,
    RunDiff,
    TupleKey,
    diff_runs,
    format_diff,
)
from qualspec.errors import ConfigError
from qualspec.store import JudgmentRecord, ResponseRecord, RunRecord, RunSummary

# a cell: one list per run index; each a list of criterion scores (None = unscored),
# or the string "error" for a failed call
Cell = list[list[float | None] | str]


def make_run(run_id: str, cells: dict[TupleKey, Cell], threshold: float = 7.0) -> RunRecord:
    responses: list[ResponseRecord] = []
    judgments: list[JudgmentRecord] = []
    for (candidate, role, scenario, input_id, temp), runs in cells.items():
        for run_index, scores in enumerate(runs):
            key = f"{run_id}-{candidate}-{role}-{scenario}-{input_id}-{temp}-{run_index}"
            error = "HTTP 500" if scores == "error" else None
            responses.append(
                ResponseRecord(
                    key=key,
                    candidate=candidate,
                    role=role,
                    scenario=scenario,
                    input_id=input_id,
                    temperature=temp,
                    effective_temperature=temp,
                    run_index=run_index,
                    provider="fake",
                    model="m",
                    text=None if error else "answer",
                    error=error,
                )
            )
            if isinstance(scores, str):
                continue
            for n, score in enumerate(scores):
                judgments.append(
                    JudgmentRecord(
                        response_key=key,
                        criterion=f"c{n}",
                        judge_key=f"j-{key}-{n}",
                        judge_model="judge",
                        threshold=threshold,
                        score=score,
                        passed=None if score is None else score >= threshold,
                        unscored_reason="unparseable" if score is None else None,
                    )
                )
    summary = RunSummary(
        id=run_id,
        suite_name="suite",
        suite_hash="h",
        status="finished",
        started_at=datetime(2025, 1, 1, tzinfo=UTC),
        finished_at=None,
    )
    return RunRecord(summary=summary, responses=responses, judgments=judgments)


def key(scenario: str, candidate: str = "gpt", role: str | None = "eng") -> TupleKey:
    return (candidate, role, scenario, None, 0.0)


BEFORE: dict[TupleKey, Cell] = {
    key("unchanged_up"): [[7.0, 8.0]],  # 7.5 -> 7.8
    key("unchanged_down"): [[9.0], [9.0]],  # 9.0 -> 8.6
    key("boundary"): [[8.0]],  # 8.0 -> 7.5: exactly -noise is unchanged
    key("regressed"): [[9.5]],  # 9.5 -> 8.0, both pass
    key("improved"): [[8.0]],  # 8.0 -> 9.5
    key("new_fail"): [[7.2]],  # 7.2 -> 6.9: within noise, but crosses the threshold
    key("new_pass"): [[5.0]],  # 5.0 -> 8.0
    key("unscored"): [[8.0]],  # -> every judgment unscored
    key("errors"): [[6.0]],  # -> every call an error
    key("removed"): [[8.0]],
    (("gpt", None, "no_role", "row-1", 0.7)): [[3.0], [4.0]],  # 3.5 -> 2.0, both fail
}
AFTER: dict[TupleKey, Cell] = {
    key("unchanged_up"): [[7.6, 8.0]],
    key("unchanged_down"): [[8.4, None], [8.8]],
    key("boundary"): [[7.5]],
    key("regressed"): [[8.0]],
    key("improved"): [[9.5]],
    key("new_fail"): [[6.9]],
    key("new_pass"): [[8.0]],
    key("unscored"): [[None, None]],
    key("errors"): ["error", "error"],
    (("gpt", None, "no_role", "row-1", 0.7)): [[2.0], [2.0]],
    key("added"): [[9.0]],
}


@pytest.fixture
def diff() -> RunDiff:
    return diff_runs(make_run("A", BEFORE), make_run("B", AFTER))


def by_scenario(diff: RunDiff) -> dict[str, str]:
    return {c.scenario: c.status for c in diff.changes}


def test_every_status(diff: RunDiff) -> None:
    assert by_scenario(diff) == {
        "unchanged_up": "unchanged",
        "unchanged_down": "unchanged",
        "boundary": "unchanged",
        "regressed": "regressed",
        "improved": "improved",
        "new_fail": "new_fail",
        "new_pass": "new_pass",
        "unscored": "unscored",
        "errors": "error",
        "removed": "removed",
        "added": "added",
        "no_role": "regressed",
    }


def test_scores_aggregate_over_runs_and_criteria(diff: RunDiff) -> None:
    changes = {c.scenario: c for c in diff.changes}
    up = changes["unchanged_up"]
    assert up.score_a == 7.5
    assert up.score_b == pytest.approx(7.8) and up.delta == pytest.approx(0.3)
    # run 0: only 8.4 is scored (unscored never counts as zero); run 1: 8.8 -> mean 8.6
    down = changes["unchanged_down"]
    assert down.score_b == pytest.approx(8.6)
    assert down.delta == pytest.approx(-0.4)
    nf = changes["new_fail"]
    assert (nf.passed_a, nf.passed_b) == (True, False)
    assert nf.delta == pytest.approx(-0.3)
    assert changes["boundary"].delta == -0.5
    role_less = changes["no_role"]
    assert role_less.key == ("gpt", None, "no_role", "row-1", 0.7)
    assert (role_less.score_a, role_less.score_b) == (3.5, 2.0)
    assert (role_less.passed_a, role_less.passed_b) == (False, False)
    added, removed = changes["added"], changes["removed"]
    assert (added.score_a, added.score_b, added.delta, added.passed_b) == (None, 9.0, None, True)
    assert (removed.score_a, removed.score_b, removed.passed_a) == (8.0, None, True)
    assert changes["unscored"].score_b is None and changes["unscored"].delta is None
    assert changes["errors"].score_b is None and changes["errors"].passed_b is None
    # a side without a verdict carries the run report's label, an absent side none
    assert (changes["errors"].label_a, changes["errors"].label_b) == ("FAIL", "ERROR")
    # an answer that failed is an error, with its message, not "unscored"
    assert (changes["errors"].error_a, changes["errors"].error_b) == (None, "HTTP 500")
    assert changes["unscored"].error_b is None
    assert (changes["unscored"].label_b, added.label_a, added.label_b) == ("UNSCORED", None, "PASS")


def test_summary_counts_and_lists(diff: RunDiff) -> None:
    assert diff.counts == {
        "new_fail": 1,
        "regressed": 2,
        "error": 1,
        "unscored": 1,
        "removed": 1,
        "added": 1,
        "unchanged": 3,
        "improved": 1,
        "new_pass": 1,
    }
    assert [c.scenario for c in diff.new_failures] == ["new_fail"]
    assert [c.scenario for c in diff.new_passes] == ["new_pass"]
    # worst first: the larger drop comes first
    assert [c.scenario for c in diff.regressions] == ["no_role", "regressed"]
    assert [c.scenario for c in diff.improvements] == ["improved"]
    assert [c.scenario for c in diff.added] == ["added"]
    assert [c.scenario for c in diff.removed] == ["removed"]
    assert [STATUSES.index(c.status) for c in diff.changes] == sorted(
        STATUSES.index(c.status) for c in diff.changes
    )
    assert (diff.run_a, diff.run_b, diff.noise) == ("A", "B", 0.5)


def test_has_regression_semantics() -> None:
    same = diff_runs(make_run("A", BEFORE), make_run("B", BEFORE))
    assert not same.has_regression
    assert set(same.counts) == set(STATUSES)
    assert same.counts["unchanged"] == len(BEFORE)
    only_new_fail = diff_runs(
        make_run("A", {key("s"): [[7.0]]}), make_run("B", {key("s"): [[6.9]]})
    )
    assert only_new_fail.has_regression
    only_drop = diff_runs(make_run("A", {key("s"): [[9.0]]}), make_run("B", {key("s"): [[7.0]]}))
    assert only_drop.has_regression and only_drop.changes[0].status == "regressed"
    only_good = diff_runs(
        make_run("A", {key("s"): [[5.0]], key("t"): [[6.0]]}),
        make_run("B", {key("s"): [[9.0]], key("u"): [[1.0]]}),
    )
    # new passes, added (even failing) and removed tuples are not regressions
    assert not only_good.has_regression
    assert {c.status for c in only_good.changes} == {"new_pass", "added", "removed"}


def test_noise_threshold_is_configurable() -> None:
    a, b = make_run("A", BEFORE), make_run("B", AFTER)
    wide = diff_runs(a, b, noise=2.0)
    statuses = by_scenario(wide)
    assert statuses["regressed"] == "unchanged"  # -1.5 is within noise 2.0
    assert statuses["improved"] == "unchanged"
    assert statuses["new_fail"] == "new_fail"  # crossing the threshold still counts
    assert wide.has_regression
    tight = by_scenario(diff_runs(a, b, noise=0.0))
    assert tight["unchanged_up"] == "improved"
    assert tight["unchanged_down"] == "regressed"
    with pytest.raises(ConfigError, match="noise must be >= 0"):
        diff_runs(a, b, noise=-1)


def test_format_text(diff: RunDiff) -> None:
    text = format_diff(diff, "text")
    lines = text.splitlines()
    assert lines[0] == "qualspec diff A -> B (suite suite; noise 0.5)"
    header = lines[2].split()
    assert header == ["status", "candidate", "role", "scenario", "input", "temp"] + [
        "A",
        "B",
        "delta",
        "pass",
        "why",
    ]
    rows = lines[3 : 3 + len(diff.changes)]
    assert [r.split()[0] for r in rows] == [c.status for c in diff.changes]
    assert rows[0].split()[:9] == [
        "new_fail",
        "gpt",
        "eng",
        "new_fail",
        "-",
        "0.0",
        "7.20",
        "6.90",
        "-0.30",
    ]
    # the pass column, then why the failing side failed, as the run's report says
    assert re.search(r"  PASS -> FAIL +B: 6\.9/10 < 7$", rows[0])
    errors = next(r for r in rows if " errors " in r)
    assert errors.startswith("error ")
    assert re.search(r"  FAIL -> ERROR +A: 6/10 < 7 · B: error: HTTP 500$", errors)
    assert re.search(r"  PASS -> UNSCORED$", next(r for r in rows if " unscored  " in r))
    added = next(r for r in rows if r.startswith("added"))
    assert "-  " in added and "+" not in added and added.endswith("- -> PASS")
    assert lines[-1] == (
        "Summary: 12 tuples: 1 new_fail, 2 regressed, 1 error, 1 unscored, 1 removed, 1 added, "
        "3 unchanged, 1 improved, 1 new_pass; regression: yes"
    )
    # columns line up: every row's 'candidate' column starts at the same offset
    assert len({line.index(" gpt ") for line in rows}) == 1


def test_format_markdown(diff: RunDiff) -> None:
    md = format_diff(diff, "markdown")
    lines = md.splitlines()
    assert lines[0].startswith("## qualspec diff A -> B")
    table = [line for line in lines if line.startswith("|")]
    assert table[0] == (
        "| Status | Candidate | Role | Scenario | Input | Temp | A | B | Delta | Pass | Why |"
    )
    assert table[1] == "|---|---|---|---|---|---|---|---|---|---|---|"
    assert len(table) == 2 + len(diff.changes)
    assert table[2] == (
        "| new_fail | gpt | eng | new_fail | - | 0.0 | 7.20 | 6.90 | -0.30 | PASS -> FAIL "
        "| B: 6.9/10 < 7 |"
    )
    assert all(row.count("|") == 12 for row in table)
    assert lines[-1].startswith("**Summary: 12 tuples: 1 new_fail")


def test_markdown_escapes_pipes() -> None:
    runs: dict[TupleKey, Cell] = {("a|b", "r", "s", None, 0.0): [[8.0]]}
    md = format_diff(diff_runs(make_run("A", runs), make_run("B", runs)), "markdown")
    row = [line for line in md.splitlines() if line.startswith("| unchanged")][0]
    assert "a\\|b" in row


def test_format_json(diff: RunDiff) -> None:
    data = json.loads(format_diff(diff, "json"))
    assert data["schema_version"] == DIFF_SCHEMA_VERSION == "1.2"
    assert (data["run_a"], data["run_b"], data["noise"]) == ("A", "B", 0.5)
    assert data["has_regression"] is True
    expected: dict[str, int] = {status: n for status, n in diff.counts.items()}
    expected["total"] = 12
    assert data["summary"] == expected
    first = data["changes"][0]
    assert first == {
        "status": "new_fail",
        "candidate": "gpt",
        "role": "eng",
        "scenario": "new_fail",
        "input_id": None,
        "temperature": 0.0,
        "score_a": 7.2,
        "score_b": 6.9,
        "delta": pytest.approx(-0.3),
        "passed_a": True,
        "passed_b": False,
        "scale": 10,
        "reasons_a": [],
        "reasons_b": ["6.9/10 < 7"],
        "label_a": "PASS",
        "label_b": "FAIL",
        "error_a": None,
        "error_b": None,
    }
    errors = next(c for c in data["changes"] if c["scenario"] == "errors")
    assert (errors["status"], errors["label_b"], errors["error_b"]) == (
        "error",
        "ERROR",
        "HTTP 500",
    )
    assert data["aggregation"] == {"a": "mean_with_variance", "b": "mean_with_variance"}
    assert data["references"] == {"a": 0, "b": 0, "changed": 0}
    no_role = next(c for c in data["changes"] if c["scenario"] == "no_role")
    assert (no_role["role"], no_role["input_id"], no_role["temperature"]) == (None, "row-1", 0.7)


def test_empty_runs_and_unknown_format() -> None:
    empty = diff_runs(make_run("A", {}), make_run("B", {}))
    assert not empty.has_regression and empty.changes == []
    assert "No tuples in either run." in format_diff(empty, "text")
    assert json.loads(format_diff(empty, "json"))["summary"]["total"] == 0
    with pytest.raises(ConfigError, match="use text, json or markdown"):
        format_diff(empty, "html")  # type: ignore[arg-type]
