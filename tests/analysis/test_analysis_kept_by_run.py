"""``qualspec run`` keeps the analysis it prints in the store, so the web app's first view
of the run (and ``stored_analysis``) reads it instead of computing it again."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from helpers_cli import run_suite
from qualspec.analysis import _stored, analysis_to_dict, stored_analysis
from qualspec.store import Store
from qualspec.testing import FakeServer

KEY_ENV = "FAKE_KEPT_ANALYSIS_KEY"
SUITE = """name: kept
candidates: [{{name: alpha, model: fake/model-a}}]
roles: [{{name: naive, preamble: "I am new."}}, {{name: expert, preamble: "I am an expert."}}]
scenarios:
  - {{name: s, prompt: "Say hello", criteria: ["is an answer"]}}
temperatures: [0.0, 0.7]
runs_per_temperature: 2
judge: fake/judge
providers:
  fake: {{type: openai, base_url: "{url}", api_key_env: {key}}}
"""


@pytest.fixture
def server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeServer]:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(KEY_ENV, "sk-kept")
    with FakeServer() as srv:
        yield srv


def test_the_analysis_printed_at_the_end_of_a_run_is_kept(
    server: FakeServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    suite = tmp_path / "suite.yaml"
    suite.write_text(SUITE.format(url=server.base_url, key=KEY_ENV), encoding="utf-8")
    from qualspec.analysis import _run_analysis

    for module in (_stored, _run_analysis):  # no embedding model to load
        monkeypatch.setattr(module, "similarity_method", lambda: "lexical")
    run_id = run_suite(capsys, suite)
    written = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))["analysis"]
    computed: list[Any] = []
    monkeypatch.setattr(_stored, "analyze_run", lambda *a, **kw: computed.append(a))
    with Store.open() as store:
        assert store.cache_stats()["kinds"]["analysis"]["entries"] == 1
        kept = stored_analysis(store, store.load_run(run_id))
    assert computed == []  # read, not computed
    assert analysis_to_dict(kept) == written
