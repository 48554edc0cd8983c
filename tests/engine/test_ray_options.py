"""The Ray executor's settings, and what a run without it never does (import ``ray``).

The executor itself runs on a real 2-node cluster in ``tests/e2e/test_ray_cluster.py``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from tests.helpers_cli import run_cli

import qualspec
from qualspec.errors import ConfigError, SpecError
from qualspec.spec import load_suite
from qualspec.testing import FakeServer

SUITE = """name: no-ray
candidates: [{name: c, model: fake/model-a}]
scenarios:
  - {name: s, prompt: "question {{ i }}", inputs: [{i: '1'}, {i: '2'}]}
providers:
  fake: {type: openai, base_url: "%s"}
"""

RUN = "from qualspec.cli import main\nmain()\n"


def test_a_run_without_the_ray_executor_never_imports_ray(tmp_path: Path) -> None:
    with FakeServer() as server:
        suite = tmp_path / "suite.yaml"
        suite.write_text(SUITE % server.base_url)
        args = ["run", str(suite), "--no-judge", "--quiet", "-o", str(tmp_path / "r.json")]
        done = subprocess.run(
            # -X importtime: every module imported, on stderr as it is (the CLI exits early)
            [
                sys.executable,
                "-X",
                "importtime",
                "-c",
                RUN,
                *args,
                "--db",
                f"sqlite:///{tmp_path}/q.db",
            ],
            cwd=tmp_path,
            env=dict(os.environ),
            capture_output=True,
            text=True,
            timeout=240,
        )
        assert done.returncode == 0 and server.calls == 2, done.stdout + done.stderr[-3000:]
    imported = [line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines()]
    assert "qualspec.engine._execute" in imported  # the run did run, and was watched
    assert [m for m in imported if m == "ray" or m.startswith("ray.")] == []


def test_ray_flags_without_the_ray_executor_are_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = tmp_path / "suite.yaml"
    suite.write_text(SUITE % "http://127.0.0.1:9/v1")
    for flag, value in (("--ray-address", "auto"), ("--ray-actors", "2")):
        code, out, err = run_cli(capsys, "run", str(suite), "--no-judge", flag, value)
        assert code != 0
        assert f"{flag} is for the Ray executor: add --executor ray" in out + err
        assert "Traceback" not in out + err


def test_the_executor_and_its_settings_are_checked() -> None:
    with pytest.raises(ConfigError, match="executor: expected 'local' or 'ray', got 'spark'"):
        qualspec.ExecuteOptions(executor="spark")
    with pytest.raises(ConfigError, match="ray_address is for executor='ray'"):
        qualspec.ExecuteOptions(ray_address="auto")
    with pytest.raises(ConfigError, match="ray_actors"):
        qualspec.ExecuteOptions(executor="ray", ray_actors=0)
    with pytest.raises(ConfigError, match="ray_num_cpus"):
        qualspec.ExecuteOptions(executor="ray", ray_num_cpus=-1)
    session = qualspec.Session(executor="ray", ray_address="auto")
    assert (session.options.executor, session.options.ray_address) == ("ray", "auto")


def test_a_providers_ray_option_is_read_and_checked_with_its_line(tmp_path: Path) -> None:
    suite = tmp_path / "suite.yaml"
    good = SUITE % "http://127.0.0.1:9/v1"
    suite.write_text(good.replace('"}\n', '"' + ", ray: {actors: 3, num_cpus: 0.5}}\n"))
    config = load_suite(suite).evaluation.providers["fake"]
    assert config.ray is not None
    assert (config.ray.actors, config.ray.num_cpus) == (3, 0.5)
    suite.write_text(good.replace('"}\n', '"' + ", ray: {actors: 0}}\n"))
    with pytest.raises(SpecError) as bad:
        load_suite(suite)
    assert "suite.yaml:6:" in str(bad.value) and "actors" in str(bad.value)
