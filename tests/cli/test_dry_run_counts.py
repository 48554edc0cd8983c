"""Issue 17, item 17: the dry run's call count is a range that holds what the run makes.

A judge that answers on a 0-1 scale is refused (correctly) and asked again, up to its
``parse_retries`` (2) more times; a criteria judge is calibrated on known pairs before the
run unless a measurement is cached or ``--no-calibration`` is given. The dry run said
"Judge calls: N" and nothing else: a suite planned at 400 calls made 848.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from helpers_cli import run_cli_words, work_in
from helpers_grading import calls_range
from qualspec.judges import DEFAULT_PAIRS
from qualspec.store import Store
from qualspec.testing import FakeServer

ZERO_TO_ONE = json.dumps({"score": 0.8, "reasoning": "good on a 0-1 scale"})
PRICES = {
    "fake/model-a": {"input": 1.0, "output": 2.0},
    "fake/judge": {"input": 1.0, "output": 1.0},
}


def _suite(path: Path, url: str, *, judge: str = "fake/judge") -> Path:
    rows = "\n".join(f"      - {{id: r{i}, i: '{i}'}}" for i in range(3))
    path.write_text(
        "name: counted\n"
        "candidates: [{name: c, model: fake/model-a}]\n"
        "scenarios:\n"
        "  - name: s\n"
        '    prompt: "question {{ i }}"\n'
        '    criteria: ["is an answer", "is short"]\n'
        "    inputs:\n"
        f"{rows}\n"
        f"judge: {judge}\n"
        "providers:\n"
        f'  fake: {{type: openai, base_url: "{url}", api_key_env: FAKE_COUNT_KEY}}\n',
        encoding="utf-8",
    )
    return path


def _dollars(dry: str) -> tuple[float, float]:
    found = re.search(r"Estimated cost: \$(\d+\.\d+)(?: to \$(\d+\.\d+))?", dry)
    assert found is not None, dry
    return float(found.group(1)), float(found.group(2) or found.group(1))


@pytest.fixture(autouse=True)
def _work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    work_in(tmp_path, monkeypatch, {"FAKE_COUNT_KEY": "sk-count", "COLUMNS": "400"})


def test_the_dry_run_range_holds_the_calls_of_a_judge_on_a_0_1_scale(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps(PRICES))
    db = f"sqlite:///{tmp_path / 'q.db'}"
    common = ["--db", db, "--prices", str(prices)]
    with FakeServer(judge_reply=ZERO_TO_ONE) as server:
        suite = _suite(tmp_path / "suite.yaml", server.base_url)
        dry = run_cli_words(capsys, "run", str(suite), "--dry-run", *common)
        assert server.calls == 0
        assert not (tmp_path / "q.db").exists()  # a dry run creates no database
        # 3 answers, 2 criteria each; 8 known pairs, 2 answers each; 3 asks at most
        assert "Candidate calls: 3" in dry
        assert "Judge calls: 6 (before parse retries), up to 18 with re-asks" in dry
        calibration = 2 * DEFAULT_PAIRS
        assert (
            f"Calibration calls: {calibration} (judge fake/judge on {DEFAULT_PAIRS} known pairs"
            in dry
        )
        assert f"up to {3 * calibration} with re-asks" in dry
        low, high = calls_range(dry)
        assert (low, high) == (3 + 6 + calibration, 3 + 18 + 3 * calibration)
        cost_low, cost_high = _dollars(dry)
        assert 0 < cost_low < cost_high

        out = tmp_path / "out.json"
        run_cli_words(capsys, "run", str(suite), "--quiet", "-o", str(out), *common)
        made = server.calls
        assert low <= made <= high, (low, made, high)
        assert made > low  # every verdict was refused and asked again
        assert made == high  # ... as often as allowed: the upper bound is reached, not passed
        # what the run and its calibration (a run of its own) cost is within the dollar range
        with Store.open(db) as store:
            spent = sum(r.cost_usd or 0.0 for r in store.list_runs())
        assert cost_low < spent <= cost_high, (cost_low, spent, cost_high)

        # the calibration is cached now (a 0-1 judge scores nothing, which is its result):
        # the next run makes none, and its dry run says so
        again = run_cli_words(capsys, "run", str(suite), "--dry-run", *common)
        assert "Calibration calls" not in again
        assert calls_range(again) == (3 + 6, 3 + 18)
        # and without calibration there is none to count either
        fresh = f"sqlite:///{tmp_path / 'fresh.db'}"
        skipped = run_cli_words(
            capsys, "run", str(suite), "--dry-run", "--db", fresh, "--no-calibration"
        )
        assert "Calibration calls" not in skipped and calls_range(skipped) == (9, 21)
        before = server.calls
        run_cli_words(
            capsys, "run", str(suite), "--quiet", "--db", fresh, "--no-calibration", "--no-cache"
        )
        assert server.calls - before == 21


def test_a_judge_that_reads_first_time_makes_the_low_end(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = f"sqlite:///{tmp_path / 'q.db'}"
    with FakeServer() as server:  # {"score": 8}: every verdict read the first time
        suite = _suite(tmp_path / "suite.yaml", server.base_url)
        dry = run_cli_words(capsys, "run", str(suite), "--dry-run", "--db", db)
        low, high = calls_range(dry)
        run_cli_words(capsys, "run", str(suite), "--quiet", "--db", db)
        assert server.calls == low < high


def test_an_all_criteria_judge_is_counted_one_call_per_answer(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = f"sqlite:///{tmp_path / 'q.db'}"
    with FakeServer(judge_reply=ZERO_TO_ONE) as server:
        judge = "{model: fake/judge, mode: all_criteria}"
        suite = _suite(tmp_path / "suite.yaml", server.base_url, judge=judge)
        dry = run_cli_words(capsys, "run", str(suite), "--dry-run", "--db", db)
        assert "Judge calls: 3 (before parse retries), up to 9 with re-asks" in dry
        low, high = calls_range(dry)
        assert (low, high) == (3 + 3 + 2 * DEFAULT_PAIRS, 3 + 9 + 6 * DEFAULT_PAIRS)
        run_cli_words(capsys, "run", str(suite), "--quiet", "--db", db)
        assert low < server.calls <= high
