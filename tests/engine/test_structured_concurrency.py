"""Structured concurrency in the executor (issue 18): its tasks live in one
``asyncio.TaskGroup``; the first failure (a refused key) cancels the others, the run waits
for them, and the failure comes out as itself, not as an exception group."""

from __future__ import annotations

import ast
import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

import qualspec
from qualspec import Candidate, Evaluation, ExecuteOptions, ProviderConfig, Scenario, Session
from qualspec.errors import AuthenticationError
from qualspec.testing import FakeServer

EXECUTE = Path(qualspec.__file__).resolve().parent / "engine" / "_execute.py"


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeServer]:
    monkeypatch.setenv("FAKE_KEY", "sk-the-wrong-one")
    with FakeServer(require_key="sk-the-right-one", latency=0.01) as srv:
        yield srv


def test_the_executor_starts_its_tasks_in_a_task_group() -> None:
    tree = ast.parse(EXECUTE.read_text(encoding="utf-8"))
    calls = {
        f"{n.value.id}.{n.attr}"
        for n in ast.walk(tree)
        if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)
    }
    assert "asyncio.TaskGroup" in calls
    # no tasks started by hand (then gathered and cancelled by hand)
    assert "asyncio.create_task" not in calls


@pytest.mark.asyncio
async def test_a_refused_key_ends_the_run_as_itself_with_no_task_left(
    server: FakeServer, tmp_path: Path
) -> None:
    evaluation = Evaluation(
        name="refused",
        candidates=[Candidate(name="c", model="fake/m")],
        scenarios=[
            Scenario(
                name="s",
                prompt="q {{ i }}",
                criteria=["answers"],
                inputs=[{"id": f"r{i}", "i": str(i)} for i in range(20)],
            )
        ],
        providers={
            "fake": ProviderConfig(type="openai", base_url=server.base_url, api_key_env="FAKE_KEY")
        },
        judge="fake/judge",
    )
    options = ExecuteOptions(calibrate=False, max_concurrency=4)
    before = asyncio.all_tasks()
    async with Session(db=f"sqlite:///{tmp_path / 'q.db'}", options=options) as session:
        with pytest.raises(AuthenticationError) as raised:
            await session.run(evaluation)
        assert not isinstance(raised.value, BaseExceptionGroup)
        # every task the run started has ended with it
        assert asyncio.all_tasks() - before == set()
        runs = session.store.list_runs()
    assert [r.status for r in runs if r.suite_name == "refused"] == ["failed"]
