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


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--run-live"):
        return
    skip = pytest.mark.skip(reason="calls a real remote API: pass --run-live to run")
    for item in items:
        if "live" in item.keywords:
            item.add_marker(skip)


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
