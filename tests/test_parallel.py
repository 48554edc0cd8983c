"""The test command runs on every CPU (pytest-xdist, ``-n auto`` in pyproject.toml's addopts),
run here by pytest itself (``pytester``) on a small project with this suite's root conftest
and addopts: one worker per CPU, a module-scoped fixture made once (its module's tests stay
on one worker), the tests marked ``embedded_model`` on one worker, node IDs printed as pytest
takes them back (no ``@group`` suffix), the ten slowest still listed; ``-n0`` and
``-p no:xdist`` run in one process (docs/development.md)."""

from __future__ import annotations

import os
import shutil
import tomllib
from pathlib import Path

import pytest

pytest_plugins = ("pytester",)

REPO = Path(__file__).resolve().parent.parent

SHARED = """
import os
from pathlib import Path

import pytest


def _record(line):
    with Path(os.environ["QS_RECORD"]).open("a") as out:
        out.write(line + "\\n")


@pytest.fixture(scope="module")
def made():
    _record("made " + os.environ.get("PYTEST_XDIST_WORKER", "main"))
    return 1


@pytest.mark.parametrize("i", range(4))
def test_uses(made, i):
    _record("shared " + os.environ.get("PYTEST_XDIST_WORKER", "main"))


def test_slow(made):
    import time

    time.sleep(0.3)


def test_fails(made):
    assert made == 2
"""

FREE = """
import os
from pathlib import Path

import pytest


@pytest.mark.parametrize("i", range(8))
def test_free(i):
    line = "free {} {}".format(
        os.environ.get("PYTEST_XDIST_WORKER", "main"),
        os.environ.get("PYTEST_XDIST_WORKER_COUNT", "0"),
    )
    with Path(os.environ["QS_RECORD"]).open("a") as out:
        out.write(line + "\\n")
"""


MODEL = """
import os
from pathlib import Path

import pytest


@pytest.mark.embedded_model
@pytest.mark.parametrize("i", range(3))
def test_generates(i):
    with Path(os.environ["QS_RECORD"]).open("a") as out:
        out.write("model {}\\n".format(os.environ.get("PYTEST_XDIST_WORKER", "main")))
"""


def _cpus() -> int:
    """What the suite's conftest counts: the CPUs this process may use, capped by a cgroup
    v2 CPU quota."""
    cpus = len(os.sched_getaffinity(0))
    cpu_max = Path("/sys/fs/cgroup/cpu.max")
    if cpu_max.exists():
        quota, period = cpu_max.read_text().split()[:2]
        if quota != "max":
            cpus = min(cpus, max(1, -(-int(quota) // int(period))))
    return cpus


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Path:
    shutil.copy2(REPO / "tests" / "conftest.py", pytester.path / "conftest.py")
    options = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    ini = options["tool"]["pytest"]["ini_options"]
    markers = "".join(f"\n    {marker}" for marker in ini["markers"])
    pytester.makeini(f"[pytest]\naddopts = {ini['addopts']}\nmarkers ={markers}\n")
    pytester.makepyfile(test_shared=SHARED, test_free=FREE, test_model_a=MODEL, test_model_b=MODEL)
    record = pytester.path / "record.txt"
    monkeypatch.setenv("QS_RECORD", str(record))
    monkeypatch.delenv("PYTEST_XDIST_AUTO_NUM_WORKERS", raising=False)
    monkeypatch.delenv("PYTEST_ADDOPTS", raising=False)
    for name in ("PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT", "PYTEST_XDIST_TESTRUNUID"):
        monkeypatch.delenv(name, raising=False)  # this test may itself run on a worker
    return record


def test_the_default_run_uses_a_worker_per_cpu_and_groups_module_fixtures(
    pytester: pytest.Pytester, project: Path
) -> None:
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", timeout=600)
    result.assert_outcomes(passed=19, failed=1)
    lines = project.read_text().splitlines()
    free = [line.split() for line in lines if line.startswith("free ")]
    assert len(free) == 8
    assert {count for _, _, count in free} == {str(_cpus())}  # -n auto: one per CPU
    assert all(worker.startswith("gw") for _, worker, _ in free)
    # the module-scoped fixture is made once, and its module's tests ran beside it
    made = [line.split()[1] for line in lines if line.startswith("made ")]
    shared = {line.split()[1] for line in lines if line.startswith("shared ")}
    assert len(made) == 1 and shared == set(made), lines
    # the tests marked embedded_model, in two modules, ran on one worker (one at a time)
    model = [line.split()[1] for line in lines if line.startswith("model ")]
    assert len(model) == 6 and len(set(model)) == 1 and model[0].startswith("gw"), lines
    out = result.stdout.str()
    failed = [line for line in out.splitlines() if line.startswith("FAILED ")]
    assert failed and failed[0].startswith("FAILED test_shared.py::test_fails - "), out
    assert "@" not in failed[0], failed[0]
    durations = out.split("slowest 10 durations", 1)[1]
    assert "call     test_shared.py::test_slow\n" in durations, out


@pytest.mark.parametrize(
    "args", [("-n0",), ("-p", "no:xdist", "-o", "addopts=-ra --durations=10")], ids=str
)
def test_one_process_on_request(
    pytester: pytest.Pytester, project: Path, args: tuple[str, ...]
) -> None:
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", *args, timeout=600)
    result.assert_outcomes(passed=19, failed=1)
    lines = project.read_text().splitlines()
    assert {line.split()[1] for line in lines} == {"main"}, lines
    assert "FAILED test_shared.py::test_fails - " in result.stdout.str()
