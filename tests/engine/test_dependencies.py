"""Staged work with dependencies: reference answers (work items of kind ``reference``) that
an evaluator waits for, through a failure and resume, and across a SIGKILL and a resume.

The candidates and the reference model are on fake servers (the reference on a server of
its own where a test needs to count or break its calls alone). ``ReferenceProbe``
(``helpers_evaluators``) is an evaluator that records the dependencies it was given.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import pytest
from helpers_integration import (
    ServerProcess,
    cli_env,
    describe,
    fake_server_process,
    wait_for,
)

from qualspec import Candidate, Evaluation, EvaluatorConfig, ProviderConfig, RetryPolicy, Scenario
from qualspec.engine import (
    ExecuteOptions,
    Plan,
    RunOutcome,
    Session,
    check_plan,
    estimate,
    expand,
)
from qualspec.errors import ConfigError
from qualspec.spec import LoadedSuite, load_evaluation
from qualspec.store import JudgmentRecord, RunRecord, Store
from qualspec.testing import FakeServer

ENGINE_TESTS = Path(__file__).resolve().parent
PROBE = EvaluatorConfig(type="helpers_evaluators:reference_probe", name="probe")
CRITERIA = EvaluatorConfig(type="criteria", model="fake/judge")


@pytest.fixture
def servers(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[FakeServer, FakeServer]]:
    """The candidates' (and judge's) server, and the reference model's own server."""
    monkeypatch.setenv("FAKE_KEY", "sk-test-dependencies")
    with FakeServer(latency=0.01) as main, FakeServer(latency=0.01) as ref:
        yield main, ref


def _suite(main: FakeServer, ref: FakeServer, tmp_path: Path, n_inputs: int = 3) -> LoadedSuite:
    def provider(url: str) -> ProviderConfig:
        return ProviderConfig(type="openai", base_url=url, api_key_env="FAKE_KEY")

    evaluation = Evaluation(
        name="dependencies",
        candidates=[
            Candidate(name="a", model="fake/model-a"),
            Candidate(name="b", model="fake/model-b"),
        ],
        scenarios=[
            Scenario(
                name="s",
                prompt="question {{ i }}",
                criteria=["is an answer"],
                inputs=[{"id": f"r{i}", "i": str(i)} for i in range(n_inputs)],
            )
        ],
        judges=[CRITERIA, PROBE],
        providers={"fake": provider(main.base_url), "ref": provider(ref.base_url)},
    )
    return load_evaluation(evaluation, tmp_path)


def _run(suite: LoadedSuite, plan: Plan, db: str, resume: str | None = None) -> RunOutcome:
    options = ExecuteOptions(calibrate=False, retry=RetryPolicy(max_attempts=1))

    async def main() -> RunOutcome:
        async with Session(db=db, options=options) as session:
            return await session.run_plan(suite, plan, resume=resume)

    return asyncio.run(main())


def _by(record: RunRecord, evaluator: str) -> list[JudgmentRecord]:
    return [j for j in record.judgments if j.evaluator == evaluator]


def test_a_dependent_evaluator_gets_the_reference_answer_of_its_input(
    servers: tuple[FakeServer, FakeServer], tmp_path: Path
) -> None:
    main, ref = servers
    suite = _suite(main, ref, tmp_path)
    every_kind = EvaluatorConfig(
        type="helpers_evaluators:reference_probe",
        name="every_kind",
        options={"kinds": ["candidate", "reference"]},
    )
    evaluation = suite.evaluation.model_copy(update={"judges": [CRITERIA, PROBE, every_kind]})
    suite = load_evaluation(evaluation, tmp_path)
    plan = expand(suite).with_references("ref/big")
    # one reference per input (both candidates are sent the same prompt), asked first:
    # right before the candidates of its input (the plan is a stream, input by input)
    assert plan.reference_calls == 3
    assert [i.kind for i in plan.items] == ["reference", "candidate", "candidate"] * 3
    assert estimate(plan, None).reference_calls == 3
    assert estimate(plan, None).candidate_calls == 6

    outcome = _run(suite, plan, f"sqlite:///{tmp_path / 'q.db'}")
    assert outcome.status == "finished"
    assert outcome.stats.reference_calls == 3 and outcome.stats.candidate_calls == 6
    assert ref.calls == 3  # once per input, not once per candidate
    record = outcome.record
    refs = {r.input_id: r for r in record.responses if r.kind == "reference"}
    assert sorted(refs) == ["r0", "r1", "r2"]
    assert all(r.provider == "ref" and r.model == "big" and r.ok for r in refs.values())
    candidates = {r.key: r for r in record.responses if r.kind == "candidate"}
    assert len(candidates) == 6

    probes = _by(record, "probe")
    assert len(probes) == 6  # the candidates only: references are not evaluated
    for j in probes:
        answer = candidates[j.response_key]
        reference = refs[answer.input_id]
        assert j.details == {
            "references": {reference.key: reference.text},
            "kinds": ["reference"],
            "depends_on": [reference.key],
        }
        assert j.score == 10.0 and j.error is None
    # an evaluator that asks for the reference kind sees the references too (which depend
    # on nothing)
    every = {j.response_key: j for j in _by(record, "every_kind")}
    assert set(every) == set(candidates) | {r.key for r in refs.values()}
    assert all(every[r.key].details["references"] == {} for r in refs.values())
    # the criteria judge judges the candidates alone, never a reference answer
    criteria = _by(record, "criteria")
    assert len(criteria) == 6 and {j.response_key for j in criteria} == set(candidates)
    assert all(j.score == 8.0 for j in criteria)
    # reports and the results file take a run with references as it is
    import io

    from rich.console import Console

    from qualspec.report import render_run, run_to_dict

    out = io.StringIO()
    render_run(record, Console(file=out, width=200))
    assert "reference" in out.getvalue()
    data = run_to_dict(record)
    assert sorted(r["kind"] for r in data["responses"]) == ["candidate"] * 6 + ["reference"] * 3


def test_a_failed_reference_makes_its_evaluations_errors_and_resume_completes_both(
    servers: tuple[FakeServer, FakeServer], tmp_path: Path
) -> None:
    main, ref = servers
    suite = _suite(main, ref, tmp_path)
    plan = expand(suite).with_references("ref/big")
    db = f"sqlite:///{tmp_path / 'q.db'}"
    ref.set_fault_mode("fail", status=500)

    first = _run(suite, plan, db)
    record = first.record
    failed_refs = [r for r in record.responses if r.kind == "reference"]
    assert len(failed_refs) == 3 and all(r.error for r in failed_refs)
    probes = _by(record, "probe")
    assert len(probes) == 6
    for j in probes:
        assert j.score is None and j.error is not None
        assert j.error.startswith("reference answer failed: "), j.error
        assert j.unscored_reason == j.error
    # an evaluator that does not use dependencies is not held up by them
    assert [j.score for j in _by(record, "criteria")] == [8.0] * 6

    ref.clear_faults()
    main_before, ref_before = main.calls, ref.calls
    again = _run(suite, plan, db, resume=first.run_id)
    assert again.run_id == first.run_id and again.status == "finished"
    assert ref.calls - ref_before == 3  # the failed references, asked again
    assert main.calls == main_before  # answers and criteria judgments were done
    final = again.record
    keys = [r.key for r in final.responses]
    assert len(keys) == len(set(keys)) == 9
    assert all(r.ok for r in final.responses)
    judgment_keys = [(j.evaluator, j.response_key, j.criterion) for j in final.judgments]
    assert len(judgment_keys) == len(set(judgment_keys)) == 12
    assert all(j.error is None and j.score == 10.0 for j in _by(final, "probe"))


def test_a_plan_whose_dependency_is_missing_or_whose_reference_model_is_unknown_is_refused(
    servers: tuple[FakeServer, FakeServer], tmp_path: Path
) -> None:
    import dataclasses

    main, ref = servers
    suite = _suite(main, ref, tmp_path)
    plan = expand(suite).with_references("ref/big")
    orphan = dataclasses.replace(plan, items=[i for i in plan.items if i.kind == "candidate"])
    with pytest.raises(
        ConfigError, match="depends on .* which is not before it in its scenario and input row"
    ):
        check_plan(suite, orphan)
    with pytest.raises(ConfigError, match="nowhere"):
        check_plan(suite, expand(suite).with_references("nowhere/big"))
    with pytest.raises(ConfigError, match="Unknown scenario 'x'"):
        expand(suite).with_references("ref/big", scenarios=["x"])
    # adding references twice adds nothing more
    twice = plan.with_references("ref/big")
    assert [i.key for i in twice.items] == [i.key for i in plan.items]
    assert [i.depends_on for i in twice.items] == [i.depends_on for i in plan.items]


# ---------------------------------------------------------------- a kill and a resume

N_INPUTS = 40
CONCURRENCY = 4


def _yaml_suite(path: Path, base_url: str) -> Path:
    rows = "\n".join(f"      - {{id: r{i:03d}, i: '{i:03d}'}}" for i in range(N_INPUTS))
    path.write_text(
        "name: references-kill\n"
        "candidates: [{name: c, model: fake/model-a}]\n"
        "scenarios:\n"
        "  - name: s\n"
        '    prompt: "question {{ i }}"\n'
        "    criteria: [is an answer]\n"
        "    inputs:\n"
        f"{rows}\n"
        "judges: [{type: 'helpers_evaluators:reference_probe', name: probe}]\n"
        "providers:\n"
        f'  fake: {{type: openai, base_url: "{base_url}", api_key_env: FAKE_KEY}}\n'
        # the reference model is another name for the same server: one limit for both
        f'  ref: {{type: openai, base_url: "{base_url}", api_key_env: FAKE_KEY}}\n',
        encoding="utf-8",
    )
    return path


def _counts(db: Path) -> dict[str, int]:
    """Responses by kind, and evaluation records, committed so far."""
    if not db.exists():
        return {}
    conn = sqlite3.connect(db, timeout=30)
    try:
        out = dict(conn.execute("SELECT kind, count(*) FROM responses GROUP BY kind").fetchall())
        out["judgments"] = int(conn.execute("SELECT count(*) FROM judgments").fetchone()[0])
        return out
    except sqlite3.OperationalError:  # the schema is not there yet
        return {}
    finally:
        conn.close()


@contextmanager
def _background(
    args: Sequence[str], *, cwd: Path, env: dict[str, str]
) -> Iterator[subprocess.Popen[str]]:
    """A process (output captured) that is always killed and reaped when the block ends."""
    process = subprocess.Popen(
        list(args), cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        yield process
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGKILL)
        process.communicate(timeout=30)


@pytest.fixture
def server() -> Iterator[ServerProcess]:
    with fake_server_process(latency=0.05) as srv:
        yield srv


def test_a_kill_and_resume_with_reference_answers_completes_every_stage_once(
    server: ServerProcess, tmp_path: Path
) -> None:
    """SIGKILL once some references and candidates are recorded (1 s a call, 4 at a
    time: the 80 calls take 20 s at least, so the kill cannot come after the end). The
    plan is a stream: each input's reference comes right before its candidates."""
    server.control(latency=1.0)
    suite = _yaml_suite(tmp_path / "suite.yaml", server.base_url)
    db = tmp_path / "q.db"
    script = [sys.executable, str(ENGINE_TESTS / "helpers_reference_run.py")]
    args = [*script, str(suite), f"sqlite:///{db}", "ref/big", str(CONCURRENCY)]
    pythonpath = os.pathsep.join([str(ENGINE_TESTS), os.environ.get("PYTHONPATH", "")])
    env = cli_env(tmp_path / "home", PYTHONPATH=pythonpath)
    start = server.calls()

    def ready() -> bool:
        counts = _counts(db)
        return counts.get("reference", 0) >= 4 and counts.get("candidate", 0) >= 2

    with _background(args, cwd=tmp_path, env=env) as proc:
        assert wait_for(lambda: ready() or proc.poll() is not None, timeout=120, interval=0.02)
        assert proc.poll() is None, "the run ended before the kill: " + describe(
            subprocess.CompletedProcess(args, proc.returncode, *proc.communicate())
        )
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    server.control(latency=0.05)
    killed = _counts(db)
    assert 0 < killed["reference"] < N_INPUTS
    assert 0 < killed["candidate"] < N_INPUTS
    assert killed["judgments"] < N_INPUTS  # some dependent evaluations were not done
    with Store.open(f"sqlite:///{db}") as store:
        (run,) = store.list_runs()
        before = store.load_run(run.id)
    refs_before = {r.key: (r.text, r.created_at) for r in before.responses if r.kind == "reference"}

    at_resume = server.calls()
    resumed = subprocess.run(
        [*args, "--resume"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=180
    )
    assert resumed.returncode == 0, describe(resumed)
    assert resumed.stdout.split() == [run.id, "finished"]
    # only the answers not recorded were asked: no recorded reference again
    missing = 2 * N_INPUTS - killed["candidate"] - killed["reference"]
    assert server.calls() - at_resume == missing
    assert server.calls() - start <= 2 * N_INPUTS + CONCURRENCY

    with Store.open(f"sqlite:///{db}") as store:
        (only,) = store.list_runs()
        final = store.load_run(run.id)
    assert only.id == run.id and only.status == "finished"
    keys = [r.key for r in final.responses]
    assert len(keys) == len(set(keys)) == 2 * N_INPUTS
    assert all(r.ok for r in final.responses)
    refs_after = {r.key: (r.text, r.created_at) for r in final.responses if r.kind == "reference"}
    # the recorded ones kept as they were: not asked, not rewritten
    assert {k: v for k, v in refs_after.items() if k in refs_before} == refs_before
    probes = _by(final, "probe")
    assert len(probes) == len({j.response_key for j in probes}) == N_INPUTS
    by_key = {r.key: r for r in final.responses}
    for j in probes:
        assert j.error is None and j.score == 10.0
        assert by_key[j.response_key].kind == "candidate"
        (ref_key,) = j.details["depends_on"]
        assert j.details["references"] == {ref_key: by_key[ref_key].text}
