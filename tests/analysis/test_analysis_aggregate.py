"""cell_scores / run_totals: the aggregation rules shared by the diff and the reports."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from qualspec.analysis import cell_scores, response_score, run_totals
from qualspec.store import JudgmentRecord, ResponseRecord, RunRecord, RunSummary


def response(key: str, run_index: int = 0, **kw: object) -> ResponseRecord:
    fields: dict[str, object] = {
        "key": key,
        "candidate": "gpt",
        "role": "eng",
        "scenario": "s",
        "input_id": None,
        "temperature": 0.0,
        "effective_temperature": 0.0,
        "run_index": run_index,
        "provider": "fake",
        "model": "m",
        "text": "answer",
    }
    fields.update(kw)
    return ResponseRecord(**fields)  # type: ignore[arg-type]


def judgment(key: str, criterion: str, score: float | None, **kw: object) -> JudgmentRecord:
    fields: dict[str, object] = {
        "response_key": key,
        "criterion": criterion,
        "judge_key": f"j-{key}-{criterion}",
        "judge_model": "judge",
        "threshold": 7.0,
        "score": score,
        "passed": None if score is None else score >= 7.0,
    }
    fields.update(kw)
    return JudgmentRecord(**fields)  # type: ignore[arg-type]


def run_of(responses: list[ResponseRecord], judgments: list[JudgmentRecord]) -> RunRecord:
    summary = RunSummary(
        id="r",
        suite_name="s",
        suite_hash="h",
        status="finished",
        started_at=datetime(2025, 1, 1, tzinfo=UTC),
        finished_at=None,
    )
    return RunRecord(summary=summary, responses=responses, judgments=judgments)


def test_cell_mean_over_criteria_then_runs() -> None:
    run = run_of(
        [
            response("a0", 0),
            response("a1", 1),
            response("a2", 2, text=None, error="HTTP 500"),
            response("b0", 0, temperature=0.7, role=None, input_id="row-2"),
        ],
        [
            judgment("a0", "clarity", 10.0),
            judgment("a0", "safety", 6.0),  # run 0 -> 8.0
            judgment("a1", "clarity", 5.0),
            judgment("a1", "safety", None, unscored_reason="no score"),  # run 1 -> 5.0
            judgment("b0", "clarity", None),
        ],
    )
    cells = cell_scores(run)
    assert list(cells) == [("s", None, "eng", "gpt", 0.0), ("s", "row-2", None, "gpt", 0.7)]
    cell = cells[("s", None, "eng", "gpt", 0.0)]
    assert cell.mean == pytest.approx(6.5)  # mean of 8.0 and 5.0; the error run is skipped
    assert (cell.n_runs, cell.n_errors, cell.n_judgments, cell.n_unscored) == (3, 1, 4, 1)
    assert cell.threshold == 7.0 and cell.passed is False
    assert cell.criteria == {"clarity": 7.5, "safety": 6.0}
    nothing = cells[("s", "row-2", None, "gpt", 0.7)]
    assert (nothing.mean, nothing.passed, nothing.n_unscored) == (None, None, 1)
    assert nothing.criteria == {"clarity": None}


def test_pass_uses_recorded_threshold() -> None:
    run = run_of(
        [response("a")],
        [judgment("a", "x", 8.0, threshold=8.0), judgment("a", "y", 8.0, threshold=6.0)],
    )
    cell = next(iter(cell_scores(run).values()))
    assert (cell.mean, cell.threshold, cell.passed) == (8.0, 8.0, True)
    strict = run_of([response("a")], [judgment("a", "x", 8.0, threshold=8.5)])
    assert next(iter(cell_scores(strict).values())).passed is False


def test_response_score_ignores_unscored() -> None:
    assert response_score([judgment("a", "x", None), judgment("a", "y", 4.0)]) == 4.0
    assert response_score([judgment("a", "x", None)]) is None
    assert response_score([]) is None


def test_run_totals() -> None:
    run = run_of(
        [
            response("a", input_tokens=10, output_tokens=20, cost_usd=0.5, cached=True),
            response("b", text=None, error="timeout"),
        ],
        [
            judgment("a", "x", 9.0, input_tokens=100, output_tokens=5, cost_usd=0.25),
            judgment("a", "y", 3.0, cost_usd=0.25, cached=True),
            judgment("a", "z", None, cost_usd=0.0),
        ],
    )
    t = run_totals(run)
    assert (t.responses, t.errors, t.judgments, t.scored, t.unscored) == (2, 1, 3, 2, 1)
    assert (t.passed, t.failed, t.mean_score) == (1, 1, 6.0)
    assert (t.cached_responses, t.cached_judgments) == (1, 1)
    assert (t.candidate_cost_usd, t.judge_cost_usd, t.cost_usd) == (0.5, 0.5, 1.0)
    assert (t.candidate_input_tokens, t.candidate_output_tokens) == (10, 20)
    assert (t.judge_input_tokens, t.judge_output_tokens) == (100, 5)
    empty = run_totals(run_of([], []))
    assert (empty.responses, empty.mean_score, empty.cost_usd) == (0, None, 0.0)


def test_an_unknown_price_makes_the_cost_unknown() -> None:
    # answered, not cached, no cost: the price is unknown, never $0
    run = run_of(
        [response("a", cost_usd=0.5), response("b", input_tokens=3, output_tokens=4)],
        [judgment("a", "x", 9.0, cost_usd=0.25)],
    )
    t = run_totals(run)
    assert (t.candidate_cost_usd, t.judge_cost_usd, t.cost_usd) == (None, 0.25, None)
    # errors, cached answers and evaluators that call no model are not unpriced
    known = run_of(
        [
            response("a", cost_usd=0.5),
            response("b", text=None, error="x"),
            response("c", cached=True),
        ],
        [judgment("a", "x", 9.0, judge_model=None), judgment("a", "y", 2.0, cost_usd=0.0)],
    )
    t = run_totals(known)
    assert (t.candidate_cost_usd, t.judge_cost_usd, t.cost_usd) == (0.5, 0.0, 0.5)
    unpriced_judge = run_of([response("a", cost_usd=0.5)], [judgment("a", "x", 9.0)])
    assert run_totals(unpriced_judge).cost_usd is None


def test_cells_follow_the_suite_order() -> None:
    names = [("zeta", "zc"), ("alpha", "zc"), ("zeta", "ac"), ("alpha", "ac")]
    responses = [
        response(f"{s}-{c}-{i}", scenario=s, candidate=c, input_id=i, role=None)
        for s, c in names
        for i in ("r10", "r2")
    ]
    run = run_of(sorted(responses, key=lambda r: r.key), [])
    run.summary.metadata = {
        "dimensions": {"scenarios": ["zeta", "alpha"], "candidates": ["zc", "ac"], "roles": []}
    }
    keys = [(k[0], k[1], k[3]) for k in cell_scores(run)]
    assert keys == [
        ("zeta", "r2", "zc"),
        ("zeta", "r2", "ac"),
        ("zeta", "r10", "zc"),
        ("zeta", "r10", "ac"),
        ("alpha", "r2", "zc"),
        ("alpha", "r2", "ac"),
        ("alpha", "r10", "zc"),
        ("alpha", "r10", "ac"),
    ]
    # inputs in the order the plan recorded, when it did
    run.summary.metadata["dimensions"]["inputs"] = {"zeta": ["r10", "r2"]}
    keys = [(k[0], k[1]) for k in cell_scores(run)]
    assert keys[:4] == [("zeta", "r10"), ("zeta", "r10"), ("zeta", "r2"), ("zeta", "r2")]
