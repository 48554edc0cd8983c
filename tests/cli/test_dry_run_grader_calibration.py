"""Issue 17, item 17 (follow-up): the dry run counts the field grader's calibration too.

A reference-graded run measures its field grader on ``DEFAULT_FIELD_PAIRS`` known field
pairs before it starts (one call per value, two per pair, each re-asked up to the grader's
``parse_retries`` times); none when the store holds a measurement or with
``--no-calibration``. The printed range must hold what the run makes.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from helpers_cli import run_cli_words, work_in
from helpers_grading import calls_range, graded_suite
from qualspec.judges import DEFAULT_FIELD_PAIRS
from qualspec.testing import FakeServer

KEY_ENV = "FAKE_DRY_GRADER_KEY"


class Replies:
    """A reference and a candidate that word the profile differently (the grader decides
    both fields); a grader that answers readably or never."""

    def __init__(self, readable: bool) -> None:
        self.readable = readable
        self.grader_calls = 0

    def __call__(self, body: dict[str, Any]) -> str:
        if body["model"] == "ref":
            return json.dumps({"name": "Acme", "industry": "SaaS"})
        if body["model"] != "grader":
            return json.dumps({"name": "Acme Inc", "industry": "software as a service"})
        self.grader_calls += 1
        if not self.readable:
            return "The answer looks fine to me."
        names = re.findall(r"^- (\w+):$", body["messages"][-1]["content"], re.MULTILINE)
        grade = {"accuracy": 90, "match": "semantic", "explanation": "ok", "confidence": 0.9}
        return json.dumps({"fields": {name: grade for name in names}})


@pytest.fixture(autouse=True)
def _work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    work_in(tmp_path, monkeypatch, {KEY_ENV: "sk-dry-grader", "COLUMNS": "400"})


@pytest.mark.parametrize("readable", [False, True])
def test_the_dry_run_counts_the_field_graders_calibration(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], readable: bool
) -> None:
    db = f"sqlite:///{tmp_path / 'q.db'}"
    replies = Replies(readable)
    with FakeServer(judge_reply=replies) as server:
        suite = graded_suite(tmp_path / "suite.yaml", server.base_url, KEY_ENV)
        dry = run_cli_words(capsys, "run", str(suite), "--dry-run", "--db", db)
        assert server.calls == 0
        calibration = 2 * DEFAULT_FIELD_PAIRS  # one call per value, two values a pair
        assert (
            f"Calibration calls: {calibration} (grader fake/grader on "
            f"{DEFAULT_FIELD_PAIRS} known field pairs, before the run, once" in dry
        )
        assert f"up to {3 * calibration} with re-asks" in dry  # parse_retries 2
        low, high = calls_range(dry)
        # the candidate, the reference, one grading call (up to 3), and the calibration
        assert (low, high) == (3 + calibration, 2 + 3 + 3 * calibration)

        run_cli_words(capsys, "run", str(suite), "--quiet", "--db", db, "-o", "out.json")
        made = server.calls
        assert low <= made <= high, (low, made, high)
        # a grader that never answers readably is asked as often as allowed: the upper
        # bound is reached, not passed; one that reads the first time makes the low end
        assert made == (high if not readable else low)
        graded = replies.grader_calls

        # measured once: the next dry run counts no calibration, and the run makes none
        again = run_cli_words(capsys, "run", str(suite), "--dry-run", "--db", db)
        assert "Calibration calls" not in again
        assert calls_range(again) == (3, 5)
        run_cli_words(
            capsys, "run", str(suite), "--quiet", "--db", db, "--no-cache", "-o", "b.json"
        )
        assert replies.grader_calls - graded == (3 if not readable else 1)  # no calibration

        # without calibration there is none to count either
        fresh = f"sqlite:///{tmp_path / 'fresh.db'}"
        skipped = run_cli_words(
            capsys, "run", str(suite), "--dry-run", "--db", fresh, "--no-calibration"
        )
        assert "Calibration calls" not in skipped and calls_range(skipped) == (3, 5)
