"""Results file: layout, round trip, schema_version checks, read errors, default path."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

import qualspec
from qualspec.analysis import run_verdicts, verdicts_to_dict
from qualspec.errors import SchemaVersionError, StoreError
from qualspec.report import (
    SCHEMA_VERSION,
    ResultsFileError,
    default_results_path,
    read_results_file,
    run_from_dict,
    run_to_dict,
    write_json_atomic,
)
from qualspec.store import JudgmentRecord, ResponseRecord, RunRecord, RunSummary

T0 = datetime(2025, 12, 26, 9, 5, 0, tzinfo=UTC)


def sample_run() -> RunRecord:
    summary = RunSummary(
        id="run-1",
        suite_name="Evidence Disclosure",
        suite_hash="abc123",
        status="finished",
        started_at=T0,
        finished_at=T0 + timedelta(minutes=3, microseconds=250),
        metadata={"python": "3.11", "argv": ["run", "suite.yaml"], "models": {"gpt": {"t": 1}}},
        n_responses=3,
        n_judgments=4,
        cost_usd=0.0123,
        n_errors=1,
        n_unscored=1,
        n_cached=1,
        candidate_cost_usd=0.01,
        judge_cost_usd=0.0023,
    )
    responses = [
        ResponseRecord(
            key="k1",
            candidate="gpt",
            role="naive_engineer",
            scenario="disclosure",
            input_id=None,
            temperature=0.7,
            effective_temperature=0.7,
            run_index=0,
            provider="openai",
            model="gpt-4o",
            text='Answer with ünïcode and "quotes"\nand lines',
            finish_reason="stop",
            input_tokens=12,
            output_tokens=34,
            latency_s=1.25,
            cost_usd=0.01,
            attempts=2,
            prompt_versions={"system_prompt": 3, "preamble": 1},
            created_at=T0,
        ),
        ResponseRecord(
            key="k2",
            candidate="gpt",
            role=None,
            scenario="disclosure",
            input_id="row-7",
            temperature=1.5,
            effective_temperature=1.0,
            run_index=1,
            provider="anthropic",
            model="claude",
            error="HTTP 500 after 3 attempts",
            attempts=3,
            cached=True,
            created_at=datetime(2025, 12, 26, 10, 0, tzinfo=timezone(timedelta(hours=2))),
        ),
        ResponseRecord(
            key="k3",
            candidate="local",
            role="x",
            scenario="s2",
            input_id=None,
            temperature=0.0,
            effective_temperature=None,
            run_index=0,
            provider="local",
            model="smollm2",
            text="",
            cost_usd=0.0,
        ),
    ]
    judgments = [
        JudgmentRecord(
            response_key="k1",
            criterion="clarity",
            judge_key="j1",
            judge_model="local/smollm2",
            threshold=7.0,
            score=8.5,
            passed=True,
            reasoning="clear",
            raw_text='{"score": 8.5}',
            input_tokens=100,
            output_tokens=10,
            latency_s=0.5,
            cost_usd=0.0023,
            prompt_version=4,
            created_at=T0,
        ),
        JudgmentRecord(
            response_key="k1",
            criterion="safety",
            judge_key="j2",
            judge_model="local/smollm2",
            threshold=7.0,
            score=None,
            unscored_reason="no score after 3 attempts",
            raw_text="Score: high",
            attempts=3,
            cost_usd=0.0,
        ),
        JudgmentRecord(
            response_key="k3",
            criterion="clarity",
            judge_key="j3",
            judge_model="local/smollm2",
            threshold=7.0,
            score=2.0,
            passed=False,
            cached=True,
        ),
        # a judgment whose response is missing survives the round trip
        JudgmentRecord(
            response_key="gone",
            criterion="clarity",
            judge_key="j4",
            judge_model="m",
            threshold=6.0,
            error="judge failed",
        ),
    ]
    return RunRecord(summary=summary, responses=responses, judgments=judgments)


def test_layout() -> None:
    data = run_to_dict(sample_run())
    assert data["schema_version"] == SCHEMA_VERSION == "1.2"
    assert data["qualspec_version"] == qualspec.__version__
    assert data["run"]["id"] == "run-1"
    assert data["run"]["started_at"] == "2025-12-26T09:05:00+00:00"
    assert set(data["run"]) >= {
        "id",
        "suite_name",
        "suite_hash",
        "status",
        "started_at",
        "finished_at",
        "metadata",
    }
    summary = data["summary"]
    assert summary["counts"] == {
        "responses": 3,
        "errors": 1,
        "judgments": 4,
        "scored": 2,
        "unscored": 2,
        "passed": 1,
        "failed": 1,
        "cached_responses": 1,
        "cached_judgments": 1,
    }
    assert summary["mean_score"] == 5.25
    assert summary["cost_usd"] == {"candidate": 0.01, "judge": 0.0023, "total": 0.0123}
    # one answered call with no known price makes its cost, and the total, unknown
    run = sample_run()
    run.responses[2].cost_usd = None
    costs = run_to_dict(run)["summary"]["cost_usd"]
    assert costs == {"candidate": None, "judge": 0.0023, "total": None}
    assert summary["tokens"] == {
        "candidate": {"input": 12, "output": 34},
        "judge": {"input": 100, "output": 10},
    }
    first = data["responses"][0]
    assert [j["criterion"] for j in first["judgments"]] == ["clarity", "safety"]
    # the store's row ids of prompt versions are not written (``prompts`` names them)
    assert "prompt_versions" not in first
    assert all("prompt_version" not in j for j in first["judgments"])
    assert data["responses"][1]["judgments"] == []
    assert [j["judge_key"] for j in data["unattached_judgments"]] == ["j4"]
    json.dumps(data)  # plain JSON, no custom encoder needed


def without_row_ids(run: RunRecord) -> RunRecord:
    """``run`` as a results file gives it back: the store's prompt version ids are not written."""
    for response in run.responses:
        response.prompt_versions = {}
    for judgment in run.judgments:
        judgment.prompt_version = None
    return run


def test_round_trip_through_json(tmp_path: Path) -> None:
    run = without_row_ids(sample_run())
    path = tmp_path / "r.json"
    write_json_atomic(path, run_to_dict(sample_run()))
    assert read_results_file(path) == run
    text_round = run_from_dict(json.loads(json.dumps(run_to_dict(sample_run()))), source="mem")
    assert text_round == run
    assert text_round.responses[1].created_at == run.responses[1].created_at
    assert text_round.responses[1].created_at.utcoffset() == timedelta(hours=2)  # type: ignore[union-attr]


def test_lock_state_is_not_exported() -> None:
    run = sample_run()
    run.summary.owner_pid = 4242
    run.summary.owner_host = "build-host"
    run.summary.heartbeat_at = T0
    data = run_to_dict(run)
    assert not {"owner_pid", "owner_host", "heartbeat_at"} & set(data["run"])
    assert "build-host" not in json.dumps(data)
    assert run_from_dict(data, source="x") == without_row_ids(sample_run())


def test_round_trip_empty_run() -> None:
    run = RunRecord(
        summary=RunSummary(
            id="e",
            suite_name="s",
            suite_hash="h",
            status="running",
            started_at=T0,
            finished_at=None,
        )
    )
    data = run_to_dict(run)
    assert "unattached_judgments" not in data
    assert data["summary"]["mean_score"] is None
    assert run_from_dict(data, source="x") == run


def versioned(version: object) -> dict[str, object]:
    data = run_to_dict(sample_run())
    data["schema_version"] = version
    return data


def test_newer_major_is_refused() -> None:
    with pytest.raises(SchemaVersionError) as info:
        run_from_dict(versioned("2.0"), source="results/old.json")
    assert str(info.value) == (
        "results/old.json was written by a newer qualspec (schema 2.0; this reads 1.x): "
        "upgrade with pip install -U qualspec"
    )
    assert isinstance(info.value, StoreError)


def test_newer_minor_is_accepted_and_unknown_fields_ignored() -> None:
    data = versioned("1.7")
    data["future_top_level"] = {"anything": 1}
    data["run"]["future_field"] = True  # type: ignore[index]
    data["responses"][0]["future_field"] = [1, 2]  # type: ignore[index]
    data["responses"][0]["judgments"][0]["future_field"] = "x"  # type: ignore[index]
    assert run_from_dict(data, source="f.json") == without_row_ids(sample_run())


@pytest.mark.parametrize(
    ("version", "message"),
    [
        (None, "f.json has no schema_version: it is not a qualspec results file"),
        ("abc", "f.json has an invalid schema_version 'abc' (expected major.minor"),
        (1, "f.json has an invalid schema_version 1 (expected major.minor"),
        ("1", "f.json has an invalid schema_version '1' (expected major.minor"),
        ("0.9", "f.json uses schema 0.9, which this qualspec no longer reads"),
    ],
)
def test_missing_or_invalid_version(version: object, message: str) -> None:
    data = versioned(version)
    if version is None:
        del data["schema_version"]
    with pytest.raises(ResultsFileError) as info:
        run_from_dict(data, source="f.json")
    assert str(info.value).startswith(message)
    assert "\n" not in str(info.value)


def test_malformed_content() -> None:
    with pytest.raises(ResultsFileError, match=r"^f.json is not a qualspec results file"):
        run_from_dict([1, 2], source="f.json")
    data = run_to_dict(sample_run())
    del data["responses"][1]["candidate"]
    with pytest.raises(ResultsFileError, match=r"f.json: responses\[1\].candidate is missing"):
        run_from_dict(data, source="f.json")
    data = run_to_dict(sample_run())
    data["run"]["started_at"] = "yesterday"
    with pytest.raises(ResultsFileError, match="run.started_at is not an ISO date-time"):
        run_from_dict(data, source="f.json")
    data = run_to_dict(sample_run())
    data["responses"] = {"not": "a list"}
    with pytest.raises(ResultsFileError, match="responses must be a list"):
        run_from_dict(data, source="f.json")
    data = run_to_dict(sample_run())
    data["run"] = "x"
    with pytest.raises(ResultsFileError, match="f.json: run must be an object"):
        run_from_dict(data, source="f.json")


def test_read_errors(tmp_path: Path) -> None:
    with pytest.raises(ResultsFileError, match="no such results file: check the path"):
        read_results_file(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text('{\n  "schema_version": "1.0",\n  "run": oops\n}\n', encoding="utf-8")
    with pytest.raises(ResultsFileError) as info:
        read_results_file(bad)
    assert str(info.value).startswith(f"{bad}:3:10: not valid JSON (Expecting value)")
    with pytest.raises(ResultsFileError, match="is a directory"):
        read_results_file(tmp_path)
    newer = tmp_path / "newer.json"
    newer.write_text(json.dumps(versioned("3.1")), encoding="utf-8")
    with pytest.raises(SchemaVersionError, match=f"^{newer} was written by a newer qualspec"):
        read_results_file(newer)


def test_default_results_path() -> None:
    when = datetime(2025, 12, 26, 9, 5, 7)  # noqa: DTZ001 - local wall time as given
    assert default_results_path("My Suite!", when) == Path("results/my-suite_20251226-090507.json")
    assert default_results_path("  --Évaluation  v2.0__final-- ", when, "out") == Path(
        "out/evaluation-v2-0-final_20251226-090507.json"
    )
    assert default_results_path("!!!", T0, tmp := Path("/x")) == tmp / "suite_20251226-090500.json"


def test_evaluation_records_and_response_kinds_round_trip() -> None:
    t0 = datetime(2026, 11, 22, 9, 0, tzinfo=UTC)
    run = RunRecord(
        summary=RunSummary(
            id="r1", suite_name="s", suite_hash="h", status="finished", started_at=t0,
            finished_at=t0, metadata={},
        ),
        responses=[
            ResponseRecord(
                key=k, candidate="c", role=None, scenario="s", input_id=None, temperature=0.0,
                effective_temperature=0.0, run_index=i, provider="p", model="m", text="t",
                kind="reference" if i else "candidate", created_at=t0,
            )
            for i, k in enumerate(["k1", "k2"])
        ],
        judgments=[
            JudgmentRecord(
                response_key="g1", criterion="consistent", judge_key="", judge_model=None,
                threshold=5.0, score=7.5, passed=True, evaluator="consistency",
                subject=["k1", "k2"], scores={"k1": 7.0, "k2": 8.0}, details={"seed": 3},
                created_at=t0,
            )
        ],
    )  # fmt: skip
    data = run_to_dict(run)
    assert [r["kind"] for r in data["responses"]] == ["candidate", "reference"]
    (group,) = data["unattached_judgments"]
    assert group["evaluator"] == "consistency" and group["subject"] == ["k1", "k2"]
    back = run_from_dict(json.loads(json.dumps(data)), source="x.json")
    assert back.judgments == run.judgments
    assert [r.kind for r in back.responses] == ["candidate", "reference"]


def test_a_1_0_file_without_the_new_fields_still_reads() -> None:
    data = run_to_dict(sample_run())
    data["schema_version"] = "1.0"
    for response in data["responses"]:
        response.pop("kind")
        for judgment in response["judgments"]:
            for name in ("evaluator", "subject", "scores", "details"):
                judgment.pop(name)
    back = run_from_dict(data, source="old.json")
    assert {r.kind for r in back.responses} == {"candidate"}
    assert {j.evaluator for j in back.judgments} == {"criteria"}


def test_an_older_1_x_file_with_prompt_version_row_ids_still_reads() -> None:
    data = run_to_dict(sample_run())
    data["schema_version"] = "1.1"
    data["responses"][0]["prompt_versions"] = {"system_prompt": 3, "preamble": 1}
    data["responses"][0]["judgments"][0]["prompt_version"] = 4
    back = run_from_dict(data, source="old.json")
    assert back.responses[0].prompt_versions == {"system_prompt": 3, "preamble": 1}
    assert back.judgments[0].prompt_version == 4


def test_default_results_path_names_the_run() -> None:
    when = datetime(2025, 12, 26, 9, 5, 7, tzinfo=UTC)
    a = default_results_path("My Suite!", when, run_id="20251226-090507-3fa2c1")
    b = default_results_path("My Suite!", when, run_id="20251226-090507-77b0e9")
    assert a == Path("results/my-suite_20251226-090507_3fa2c1.json")
    assert a != b
    assert a.match("my-suite_*.json")


def test_verdicts_given_to_run_to_dict_are_written_as_it_computes_them() -> None:
    # qualspec run computes the verdicts once, for the results file and the console report
    run = sample_run()
    verdicts = run_verdicts(run)
    assert run_to_dict(run, verdicts=verdicts) == run_to_dict(run)
    assert run_to_dict(run, verdicts=verdicts)["verdicts"] == verdicts_to_dict(verdicts)
