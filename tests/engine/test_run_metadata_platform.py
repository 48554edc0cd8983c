"""A run records the platform it ran on as ``platform.platform()`` names it, without the
``uname -p`` process the standard library starts for it on Linux (8-10 ms before a run's
first call, for a processor name it leaves out there)."""

from __future__ import annotations

import platform
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import qualspec
from qualspec.testing import FakeServer

SUITE = """\
name: platform
providers:
  fake: {type: openai, base_url: "URL", api_key_env: FAKE_PLATFORM_KEY}
candidates: [{name: a, model: fake/model}]
scenarios:
  - name: s
    prompt: hi
    expect: [{contains: a}]
"""


@pytest.mark.skipif(sys.platform != "linux", reason="the process is started on Linux")
def test_the_platform_is_recorded_as_the_standard_library_names_it_and_no_process_is_started(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = platform.platform()
    # what the standard library found is forgotten: asked again, it would start `uname -p`
    monkeypatch.setattr(platform, "_platform_cache", {})
    monkeypatch.setattr(platform, "_uname_cache", None)
    started: list[Any] = []

    def no_process(*args: Any, **kwargs: Any) -> Any:
        started.append(args)
        raise OSError("no process in this test")

    monkeypatch.setenv("FAKE_PLATFORM_KEY", "sk-platform")
    with FakeServer() as server:
        suite = tmp_path / "suite.yaml"
        suite.write_text(SUITE.replace("URL", server.base_url), encoding="utf-8")
        monkeypatch.setattr(subprocess, "Popen", no_process)
        outcome = qualspec.run(str(suite), db=f"sqlite:///{tmp_path / 'q.db'}")
    assert outcome.record.summary.metadata["platform"] == expected
    assert started == []
