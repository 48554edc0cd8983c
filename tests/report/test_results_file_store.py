"""A run recorded in a real SQLite store survives export -> results file -> import."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from qualspec.analysis import diff_runs
from qualspec.report import export_run, read_results_file
from qualspec.store import JudgmentRecord, ResponseRecord, Store


def test_store_run_round_trips_through_results_file(tmp_path: Path) -> None:
    when = datetime(2026, 1, 2, 3, 4, 5, 123456, tzinfo=UTC)
    responses = [
        ResponseRecord(
            key=f"k{i}",
            candidate="small",
            role="tutor" if i else None,
            scenario="greeting",
            input_id="row-1" if i == 2 else None,
            temperature=0.7,
            effective_temperature=0.7,
            run_index=0,
            provider="openai",
            model="gpt-test",
            text=f"answer {i}" if i != 1 else None,
            error="HTTP 500" if i == 1 else None,
            input_tokens=12,
            output_tokens=34,
            cost_usd=0.001,
            created_at=when,
        )
        for i in range(3)
    ]
    judgments = [
        JudgmentRecord(
            response_key=key,
            criterion=criterion,
            judge_key=f"j-{key}-{criterion}",
            judge_model="judge-test",
            threshold=7.0,
            score=score,
            passed=None if score is None else score >= 7.0,
            unscored_reason=None if score is not None else "no score",
            cost_usd=0.002,
            created_at=when,
        )
        for key, criterion, score in [("k0", "a", 8.0), ("k0", "b", None), ("k2", "a", 5.5)]
    ]
    with Store.open(f"sqlite:///{tmp_path / 'q.db'}") as store:
        run_id = store.create_run("Greeting Suite", "hash", {"python": "3.11"})
        store.record_responses(run_id, responses)
        store.record_judgments(run_id, judgments)
        store.finish_run(run_id, "finished")
        run = store.load_run(run_id)
    assert len(run.responses) == 3 and len(run.judgments) == 3

    path = tmp_path / "results" / "greeting.json"
    export_run(run, "json", path)
    back = read_results_file(path)
    run.summary.owner_pid = back.summary.owner_pid  # live lock state is not exported
    run.summary.owner_host = back.summary.owner_host
    run.summary.heartbeat_at = back.summary.heartbeat_at
    assert back == run
    assert not diff_runs(run, back).has_regression
    # the answer that failed with HTTP 500 is an error on both sides (not "unscored")
    assert {c.status for c in diff_runs(run, back).changes} == {"unchanged", "error"}
