"""A judge's calibration is made at once, and alongside the run's calls (issue 18, item 7).

Its calls were made one after another before the run's first candidate call (16 calls
of latency before anything else). The results must not change: the measurement is still
recorded in the run's metadata (``judge_calibration``) and its calls in a run of their
own, ``calibration MODEL``.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from qualspec import Candidate, Evaluation, ExecuteOptions, Scenario, Session
from qualspec.judges import CriteriaJudge, calibrate, calibration_pairs
from qualspec.spec import ProviderConfig
from qualspec.testing import FakeServer

KNOWN = {p[side] for p in calibration_pairs() for side in ("good", "bad")}
GOOD = {p["good"] for p in calibration_pairs()}


def _graded_answer(body: dict[str, Any]) -> str | None:
    user = body["messages"][-1]["content"]
    if "Answer to grade:\n<<<\n" not in user:
        return None
    return str(user.split("Answer to grade:\n<<<\n", 1)[1].split("\n>>>", 1)[0])


def _graded(body: dict[str, Any]) -> str:
    """A judge that knows the answers: 9 for a good one, 2 for a bad one."""
    score = 9 if _graded_answer(body) in GOOD else 2
    return json.dumps({"score": score, "reasoning": "known pair"})


def _providers(server: FakeServer) -> dict[str, ProviderConfig]:
    return {"fake": ProviderConfig(type="openai", base_url=server.base_url, api_key_env="FAKE_KEY")}


def test_the_calibration_calls_are_made_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_KEY", "sk-test")
    judge = CriteriaJudge(name="criteria", model="fake/judge", threshold=7)
    with FakeServer(judge_reply=_graded) as server:
        # nothing is answered before all 16 calls arrived: made one after another, the
        # second would only come once the first was answered (after hold_timeout)
        server.hold_timeout = 5.0
        server.hold_responses(16)

        async def main() -> Any:
            async with Session(db=f"sqlite:///{tmp_path / 'q.db'}") as session:
                return await calibrate(session, judge, pairs=8, providers=_providers(server))

        result = asyncio.run(main())
        exchanges = server.exchanges
    assert len(exchanges) == 16
    last_arrived = max(arrived for arrived, _, _ in exchanges)
    first_sent = min(sent for _, _, sent in exchanges if sent is not None)
    assert last_arrived <= first_sent
    # the same measurement as one call after another: every pair separated, in order
    assert result.separation == 1.0 and result.n_errors == 0
    assert [p.id for p in result.pairs] == [p["id"] for p in calibration_pairs(8)]
    assert all(p.good == [9.0] and p.bad == [2.0] for p in result.pairs)


def test_a_run_calibrates_its_judge_alongside_its_calls(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_KEY", "sk-test")
    with FakeServer(judge_reply=_graded) as server:
        evaluation = Evaluation(
            name="alongside",
            candidates=[Candidate(name="c", model="fake/model-a")],
            scenarios=[Scenario(name="s", prompt="hello", criteria=["is an answer"])],
            judge="fake/judge",
            providers=_providers(server),
        )

        async def main() -> Any:
            options = ExecuteOptions(use_cache=False)
            async with Session(db=f"sqlite:///{tmp_path / 'q.db'}", options=options) as session:
                outcome = await session.run(evaluation)
                return outcome, session.store.list_runs()

        outcome, runs = asyncio.run(main())
        log = [body for _, _, body in server.request_log]
    graded = [_graded_answer(body) for body in log]
    calibration = [i for i, answer in enumerate(graded) if answer in KNOWN]
    candidate = [i for i, answer in enumerate(graded) if answer is None]
    assert len(calibration) == 16 and len(candidate) == 1
    # the candidate call is not kept waiting for the calibration
    assert candidate[0] < calibration[0]
    # and what the run records is unchanged
    measured = outcome.record.summary.metadata["judge_calibration"]["criteria"]
    assert measured["meaningful"] is True and measured["separation"] == 1.0
    assert outcome.status == "finished"
    assert any(r.suite_name == "calibration fake/judge" for r in runs)
