"""A configuration error in library use is raised before any run is recorded."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

import qualspec
from qualspec.errors import ConfigError, QualspecError
from qualspec.store import Store

SUITE = """\
name: orphan
candidates: [{name: a, model: CANDIDATE}]
scenarios: [{name: x, prompt: hi, criteria: [c]}]
"""


def _runs(db: str) -> list[str]:
    with Store.open(db) as store:
        return [f"{r.id}:{r.status}" for r in store.list_runs()]


def test_missing_local_model_file_records_no_run(tmp_path: Path) -> None:
    suite = tmp_path / "s.yaml"
    suite.write_text(SUITE.replace("CANDIDATE", "local/nope.gguf"))
    db = f"sqlite:///{tmp_path / 'q.db'}"
    options = qualspec.ExecuteOptions(judge=False)
    with pytest.raises(QualspecError, match=r"nope\.gguf"):
        qualspec.run(str(suite), db=db, options=options)
    assert _runs(db) == []


def test_malformed_prices_record_no_run(tmp_path: Path) -> None:
    suite = tmp_path / "s.yaml"
    suite.write_text(SUITE.replace("CANDIDATE", "openai/gpt-4o"))
    prices = tmp_path / "prices.json"
    prices.write_text('{"openai/gpt-4o": {"input": "cheap"}}')
    db = f"sqlite:///{tmp_path / 'q.db'}"

    async def main() -> None:
        async with qualspec.Session(db=db, prices=prices) as session:
            await session.run(str(suite))

    with pytest.raises(ConfigError, match="prices.json"):
        asyncio.run(main())
    assert _runs(db) == []


PLUGIN = """
from qualspec.errors import ConfigError


class Broken:
    scope = "response"
    model = None

    def __init__(self, config):
        self.name, self.threshold = config.label, config.threshold

    def prompt(self):
        raise ConfigError("the broken judge's prompt file is missing")

    def group_of(self, item):
        return None

    def aspects(self, items):
        return ("x",)

    async def evaluate(self, subject, aspect, ctx):
        raise AssertionError("never called")
"""


def test_an_evaluator_whose_prompt_fails_records_no_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "broken_judge_plugin.py").write_text(PLUGIN)
    monkeypatch.syspath_prepend(str(tmp_path))
    suite = tmp_path / "s.yaml"
    suite.write_text(
        SUITE.replace("CANDIDATE", "openai/gpt-4o")
        + 'judges: [{type: "broken_judge_plugin:Broken"}]\n'
    )
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-used")
    db = f"sqlite:///{tmp_path / 'q.db'}"
    with pytest.raises(ConfigError, match="prompt file is missing"):
        qualspec.run(str(suite), db=db)
    assert _runs(db) == []
    sys.modules.pop("broken_judge_plugin", None)
