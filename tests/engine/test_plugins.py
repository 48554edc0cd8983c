"""Evaluator plugins for real: the example plugin installed by pip and found through its
entry point, and a group evaluator (a dependent item) across a SIGKILL and a resume."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers_integration import (
    ServerProcess,
    background_cli,
    cli_env,
    describe,
    fake_server_process,
    open_store,
    run_cli,
    run_ids,
    wait_for,
)

ENGINE_TESTS = Path(__file__).resolve().parent
REPO = ENGINE_TESTS.parent.parent


@pytest.fixture
def server() -> Iterator[ServerProcess]:
    with fake_server_process(latency=0.05) as srv:
        yield srv


def _suite(path: Path, base_url: str, *, n_inputs: int, judges: str, extra: str = "") -> Path:
    rows = "\n".join(f"      - {{id: r{i:03d}, i: '{i:03d}'}}" for i in range(n_inputs))
    path.write_text(
        "name: plugin-test\n"
        "candidates: [{name: c, model: fake/model-a}]\n"
        "scenarios:\n"
        "  - name: s\n"
        '    prompt: "question {{ i }}"\n'
        "    criteria: [is an answer]\n"
        "    inputs:\n"
        f"{rows}\n"
        f"judges: {judges}\n"
        f"{extra}"
        "providers:\n"
        f'  fake: {{type: openai, base_url: "{base_url}", api_key_env: FAKE_KEY}}\n',
        encoding="utf-8",
    )
    return path


def test_the_example_plugin_installs_and_runs_through_its_entry_point(
    server: ServerProcess, tmp_path: Path
) -> None:
    target = tmp_path / "site"
    install = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "--target",
            str(target),
            str(REPO / "examples" / "plugin"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert install.returncode == 0, install.stderr
    suite = _suite(
        tmp_path / "suite.yaml",
        server.base_url,
        n_inputs=2,
        judges="[{type: criteria, model: fake/judge}, {type: consistency, threshold: 5}]",
        extra="temperatures: [0.0, 0.7]\nruns_per_temperature: 2\n",
    )
    home = tmp_path / "home"
    env = cli_env(home, PYTHONPATH=os.pathsep.join([str(target), os.environ.get("PYTHONPATH", "")]))
    # the plugin is one function under @qualspec.evaluator: its entry point names it
    probe = subprocess.run(
        [
            sys.executable,
            "-c",
            "import qualspec_consistency as p; print(type(p.consistency).__name__)",
        ],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert probe.stdout.split() == ["DecoratedEvaluator"], probe.stderr
    result = run_cli(["run", str(suite), "--quiet"], cwd=tmp_path, env=env)
    assert result.returncode == 0, describe(result)
    with open_store(home) as store:
        # the run itself (its judge's calibration calls are in a run of their own)
        (run_id,) = [r.id for r in store.list_runs() if r.suite_name == "plugin-test"]
        record = store.load_run(run_id)
    groups = [j for j in record.judgments if j.evaluator == "consistency"]
    assert len(groups) == 2  # one per input row, each over 2 temperatures x 2 runs
    for group in groups:
        assert group.subject is not None and len(group.subject) == 4
        assert group.score == 10.0  # the fake server answers the same text every time
        assert group.passed is True
    assert len([j for j in record.judgments if j.evaluator == "criteria"]) == 8


def test_a_group_evaluation_after_a_kill_and_resume_is_done_once_over_all_answers(
    server: ServerProcess, tmp_path: Path
) -> None:
    n, concurrency = 60, 4
    suite = _suite(
        tmp_path / "suite.yaml",
        server.base_url,
        n_inputs=n,
        judges="[{type: 'helpers_evaluators:group_probe', name: probe}]",
    )
    home = tmp_path / "home"
    env = cli_env(
        home, PYTHONPATH=os.pathsep.join([str(ENGINE_TESTS), os.environ.get("PYTHONPATH", "")])
    )
    args = ["run", str(suite), "--quiet", "--max-concurrency", str(concurrency)]
    start = server.calls()
    with background_cli(args, cwd=tmp_path, env=env) as process:

        def half_recorded() -> bool:
            ids = run_ids(home) if (home / "qualspec.db").exists() else []
            if not ids:
                return False
            with open_store(home) as store:
                return store.get_run(ids[0]).n_responses >= n // 2

        assert wait_for(half_recorded, timeout=120, interval=0.05)
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
    (run_id,) = run_ids(home)
    with open_store(home) as store:
        killed = store.load_run(run_id)
    assert killed.summary.status == "failed"  # SIGKILLed: its process is gone
    assert not [j for j in killed.judgments if j.evaluator == "probe"]  # it waits for all

    resumed = run_cli([*args, "--resume"], cwd=tmp_path, env=env, timeout=120)
    assert resumed.returncode == 0, describe(resumed)
    with open_store(home) as store:
        record = store.load_run(run_id)
    assert record.summary.status == "finished"
    keys = [r.key for r in record.responses]
    assert len(keys) == len(set(keys)) == n
    (group,) = [j for j in record.judgments if j.evaluator == "probe"]
    assert group.subject is not None and sorted(group.subject) == sorted(keys)
    assert group.details == {"answers": n}
    assert server.calls() - start <= n + concurrency
