"""Shared fixtures: every test gets its own QUALSPEC_HOME and no real API keys."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

_KEY_VARS = (
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
    "OPENROUTER_API_KEY",
    "VLLM_API_KEY",
    "QUALSPEC_DATABASE_URL",
)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--run-live", action="store_true", help="run tests that call real APIs")


# tryfirst: before pytest-xdist's own hook reads the xdist_group marks (--dist loadgroup)
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.pluginmanager.hasplugin("xdist"):
        _group_embedded_model(items)
        _group_shared_fixtures(items)
    if config.getoption("--run-live"):
        return
    skip = pytest.mark.skip(reason="calls a real remote API: pass --run-live to run")
    for item in items:
        if "live" in item.keywords:
            item.add_marker(skip)


EMBEDDED_MODEL_GROUP = "embedded-model"


def _group_embedded_model(items: list[pytest.Item]) -> None:
    """Under pytest-xdist, the tests marked ``embedded_model`` (they generate with SmolLM2
    through llama.cpp, in-process or in a server they start) all run on one worker, one at a
    time: two models generating at once on a 2-core machine only slow each other down, past
    the calls' time limits."""
    for item in items:
        if item.get_closest_marker("embedded_model") is not None:
            item.add_marker(pytest.mark.xdist_group(EMBEDDED_MODEL_GROUP))


def _group_shared_fixtures(items: list[pytest.Item]) -> None:
    """Under pytest-xdist, a test that uses a module- or class-scoped fixture (a browser, a
    loaded model, a Ray cluster, a built wheel, a server for the module) runs on the same
    worker as the rest of its module, so that the fixture is made once, not once per worker.
    A test that already names an ``xdist_group`` keeps it."""
    for item in items:
        if item.get_closest_marker("xdist_group") is not None:
            continue
        info = getattr(item, "_fixtureinfo", None)  # pytest's; absent: no grouping
        defs = getattr(info, "name2fixturedefs", {})
        scopes = {d[-1].scope for d in defs.values() if d}
        if scopes & {"module", "class"}:
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::")[0]))
        elif "package" in scopes:
            item.add_marker(pytest.mark.xdist_group(item.path.parent.as_posix()))


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """The node ID a test is reported under, without the ``@group`` suffix that --dist
    loadgroup adds: what the summary and --durations print can be passed back to pytest.
    In the controlling process only, on a report that came from a worker (pytest-xdist sets
    its ``node``; a worker checks the ID against its test's)."""
    if getattr(report, "node", None) is None:
        return
    at = report.nodeid.rfind("@")
    if at > report.nodeid.rfind("]") and at > report.nodeid.find("::") >= 0:
        report.nodeid = report.nodeid[:at]


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """``-n auto`` (pyproject.toml's addopts): one worker per CPU this process may run on
    (its affinity, capped by a cgroup v2 CPU quota), so a 2-vCPU machine gets 2 workers even
    where its two vCPUs are one physical core. ``PYTEST_XDIST_AUTO_NUM_WORKERS`` overrides."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None  # pytest-xdist's own hook reads it
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    try:
        quota, period = Path("/sys/fs/cgroup/cpu.max").read_text().split()[:2]
        if quota != "max":
            cpus = min(cpus or 1, max(1, -(-int(quota) // int(period))))
    except (OSError, ValueError):
        pass
    return max(1, cpus or 1)


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    home = tmp_path / "qualspec-home"
    monkeypatch.setenv("QUALSPEC_HOME", str(home))
    for var in _KEY_VARS:
        monkeypatch.delenv(var, raising=False)
    # The embedded model on one thread: llama.cpp's threads wait for each other by spinning,
    # so on a 2-core machine with other work beside the tests two threads can take many
    # times longer than one (measured: 1.1-5.4 s against 1.5-1.6 s for the same answer).
    if "QUALSPEC_LOCAL_THREADS" not in os.environ:
        monkeypatch.setenv("QUALSPEC_LOCAL_THREADS", "1")
    yield home


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Debian's headless Chromium driven by Playwright (never a downloaded browser)."""
    chromium = os.environ.get("QUALSPEC_TEST_CHROMIUM", "/usr/bin/chromium")
    if shutil.which(chromium) is None:
        pytest.fail(
            f"{chromium} not found: install Debian's chromium (apt-get install -y chromium), "
            "or point QUALSPEC_TEST_CHROMIUM at a Chromium binary; never `playwright install`"
        )
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return Path(__file__).resolve().parent.parent


def pytest_report_header(config: pytest.Config) -> str:
    url = os.environ.get("QUALSPEC_TEST_POSTGRES_URL")
    return (
        f"qualspec: postgres tests {'against ' + url.split('@')[-1] if url else 'not configured'}"
    )
