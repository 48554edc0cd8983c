"""``qualspec run``'s progress shows calls/s, the time left and the cost so far (issue 20,
scope 4), driven here with a fake clock and known counts."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from qualspec.cli import LazyProgress, pace_text
from qualspec.engine import Plan, expand
from qualspec.spec import load_suite


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _plan(tmp_path: Path, rows: int) -> Plan:
    (tmp_path / "rows.csv").write_text(
        "id,q\n" + "".join(f"r{i},x{i}\n" for i in range(rows)), encoding="utf-8"
    )
    path = tmp_path / "s.yaml"
    path.write_text(
        "name: pace\n"
        "candidates: [{name: bot, model: fake/bot}]\n"
        "scenarios:\n"
        "  - name: q\n"
        "    prompt: 'Say {{ q }}'\n"
        "    inputs: rows.csv\n"
        "    criteria: [ok]\n"
        "providers:\n"
        "  fake: {type: openai, base_url: 'http://127.0.0.1:9', api_key_env: K}\n",
        encoding="utf-8",
    )
    return expand(load_suite(path))


def test_the_pace_line_has_the_rate_the_time_left_and_the_cost() -> None:
    assert pace_text(100, 900, 10.0, 0.25) == "10.0 calls/s · ETA 0:01:30 · $0.2500 so far"
    assert pace_text(7_200, 36_000, 2.0, None) == "3,600.0 calls/s · ETA 0:00:10"
    assert pace_text(0, 10, 0.0, 0.0) == "0.0 calls/s · ETA - · $0.0000 so far"
    assert pace_text(10, 36_000, 10.0, 1.5).startswith("1.0 calls/s · ETA 10:00:00")


def test_the_progress_counts_answers_and_judgments_against_a_fake_clock(tmp_path: Path) -> None:
    clock = Clock()
    spent = [0.0]
    progress = LazyProgress(
        _plan(tmp_path, 1000), judge=True, quiet=False, cost=lambda: spent[0], clock=clock
    )
    with progress as shown:
        assert shown is progress
        progress("candidate", 150)  # the bars start here (answers: 1,000 planned)
        progress("total:judge", 1000)
        progress("judge", 50)
        clock.now += 20.0
        spent[0] = 0.125
        # 200 calls in 20 s: 10/s; 850 answers and 950 judgments left: 180 s
        assert progress.pace() == "10.0 calls/s · ETA 0:03:00 · $0.1250 so far"
        progress("candidate", 850)
        progress("judge", 950)
        clock.now += 180.0
        assert progress.pace() == "10.0 calls/s · ETA 0:00:00 · $0.1250 so far"


def test_quiet_draws_nothing(tmp_path: Path) -> None:
    with LazyProgress(_plan(tmp_path, 3), judge=False, quiet=True) as shown:
        assert shown is None


def test_bars_that_no_terminal_shows_are_written_once_at_the_end_not_redrawn(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Written to a file or a pipe, the bars are drawn once, when the run ends: no thread
    redraws them ten times a second beside the run's calls."""

    def refreshing() -> list[threading.Thread]:
        return [t for t in threading.enumerate() if type(t).__name__ == "_RefreshThread"]

    progress = LazyProgress(_plan(tmp_path, 10), judge=False, quiet=False)
    with progress:
        progress("candidate", 4)
        assert refreshing() == []
        progress("candidate", 6)
    written = capsys.readouterr().err
    assert "answers" in written
    assert "10/10" in written  # the final state


def test_a_total_told_before_the_first_call_is_kept_until_the_bars_are_drawn(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The run tells the judge total as it schedules its work, before its first call: the
    bars (and the modules that draw them) wait for the first finished call."""
    plan = _plan(tmp_path, 10)
    with LazyProgress(plan, judge=True, quiet=False) as progress:
        assert progress is not None
        progress("total:judge", 7)
    assert capsys.readouterr().err == ""  # nothing finished: no bars
    with LazyProgress(plan, judge=True, quiet=False) as progress:
        assert progress is not None
        progress("total:judge", 7)
        progress("candidate", 3)
    written = capsys.readouterr().err
    assert "3/10" in written and "0/7" in written


def test_the_counts_are_given_to_the_bars_as_often_as_they_are_redrawn(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A thousand calls finished within one redraw (a tenth of a second) update the bars
    once, not a thousand times; the bars end with every call counted."""
    from rich.progress import Progress

    updates: list[dict[str, Any]] = []
    real_update, real_advance = Progress.update, Progress.advance

    def update(self: Progress, task: Any, **fields: Any) -> None:
        updates.append(fields)
        real_update(self, task, **fields)

    def advance(self: Progress, task: Any, n: float = 1) -> None:
        updates.append({"advance": n})
        real_advance(self, task, n)

    monkeypatch.setattr(Progress, "update", update)
    monkeypatch.setattr(Progress, "advance", advance)
    clock = Clock()
    with LazyProgress(_plan(tmp_path, 1000), judge=False, quiet=False, clock=clock) as progress:
        assert progress is not None
        for _ in range(999):
            progress("candidate", 1)
        clock.now += 0.1
        progress("candidate", 1)
    counted = [u for u in updates if "completed" in u or "advance" in u]
    assert len(counted) <= 3  # the first, the one after 0.1 s, the last
    assert "1000/1000" in capsys.readouterr().err
