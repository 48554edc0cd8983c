"""``params: {seed: N}`` with several runs: each run index sends its own seed (N + run index),
so repeated runs are repeated samples, not one answer copied (issue 17, item 21)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import qualspec
from qualspec import Candidate, Evaluation, ProviderConfig, Scenario
from qualspec.engine import call_key, expand
from qualspec.spec import load_evaluation
from qualspec.testing import FakeServer

KEY = "sk-seed-test-1b2c"


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeServer]:
    monkeypatch.setenv("FAKE_KEY", KEY)
    with FakeServer(latency=0.0, require_key=KEY) as srv:
        yield srv


def _evaluation(base_url: str, params: dict[str, Any], runs: int = 3) -> Evaluation:
    return Evaluation(
        name="seeded",
        candidates=[Candidate(name="c", model="fake/model-a", params=params)],
        scenarios=[Scenario(name="s", prompt="Tell a story.", criteria=["is a story"])],
        temperatures=[0.7],
        runs_per_temperature=runs,
        judge="fake/judge",
        providers={
            "fake": ProviderConfig(type="openai", base_url=base_url, api_key_env="FAKE_KEY")
        },
    )


def test_each_run_index_sends_its_own_seed(server: FakeServer, tmp_path: Path) -> None:
    evaluation = _evaluation(server.base_url, {"seed": 42, "max_tokens": 50})
    options = qualspec.ExecuteOptions(judge=False, calibrate=False)
    outcome = qualspec.run(evaluation, db=f"sqlite:///{tmp_path / 'q.db'}", options=options)
    assert outcome.status == "finished"
    sent = sorted(
        body["seed"]
        for _t, _h, body in server.request_log
        if isinstance(body, dict) and body["messages"][-1]["content"] == "Tell a story."
    )
    assert sent == [42, 43, 44]


def test_the_seed_is_part_of_each_runs_key_and_runs_without_one_keep_theirs() -> None:
    seeded = expand(load_evaluation(_evaluation("http://127.0.0.1:9/v1", {"seed": 42})))
    assert [i.params["seed"] for i in seeded.items] == [42, 43, 44]
    assert len({i.call_key for i in seeded.items}) == 3
    # run 0 sends the seed as written: its key (and cached answer) is the one it always had
    plain = expand(load_evaluation(_evaluation("http://127.0.0.1:9/v1", {"seed": 42}, runs=1)))
    assert plain.items[0].call_key == seeded.items[0].call_key
    # without a seed nothing changes: no seed is added, keys are as before
    unseeded = expand(load_evaluation(_evaluation("http://127.0.0.1:9/v1", {"max_tokens": 9})))
    assert all("seed" not in i.params for i in unseeded.items)
    assert [i.call_key for i in unseeded.items] == [
        call_key("fake", "model-a", i.messages, {"max_tokens": 9, "temperature": 0.7}, n)
        for n, i in enumerate(unseeded.items)
    ]


def test_a_seed_that_cannot_vary_is_refused_with_several_runs() -> None:
    from qualspec.errors import ConfigError

    with pytest.raises(ConfigError, match=r"candidate 'c': params.seed must be a whole number"):
        expand(load_evaluation(_evaluation("http://127.0.0.1:9/v1", {"seed": "42"})))
    one = expand(load_evaluation(_evaluation("http://127.0.0.1:9/v1", {"seed": "42"}, runs=1)))
    assert one.items[0].params["seed"] == "42"  # one run: sent as written


def test_a_plan_warning_is_among_the_run_outcomes_warnings(
    server: FakeServer, tmp_path: Path
) -> None:
    from qualspec.spec import AtTemperature

    evaluation = _evaluation(server.base_url, {}, runs=1)
    evaluation.scenarios[0].at_temperature.append(AtTemperature(temperature=1.5, criterion="x"))
    options = qualspec.ExecuteOptions(judge=False, calibrate=False)
    outcome = qualspec.run(evaluation, db=f"sqlite:///{tmp_path / 'q.db'}", options=options)
    assert any(
        "at_temperature 1.5 is not one of the run's temperatures" in w for w in outcome.warnings
    )
