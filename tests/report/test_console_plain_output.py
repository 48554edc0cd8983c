"""The console report written to a file or a pipe (no colour system): the same characters
as rich's layout gives, without laying out every line (600 lines of a 200-row report took
30-60 ms to wrap and cut into styled segments): only a line too long for the width is
wrapped by rich; styled (a terminal), it is rich's layout as before."""

from __future__ import annotations

import io
from datetime import UTC, datetime
from typing import Any

import pytest
from rich.console import Console
from rich.text import Text

from qualspec.report import render_run
from qualspec.store import JudgmentRecord, ResponseRecord, RunRecord, RunSummary


def build(rows: int, *, answer: str = "an answer") -> RunRecord:
    responses, judgments = [], []
    for i in range(rows):
        key = f"k{i}"
        responses.append(
            ResponseRecord(
                key=key, candidate="gpt", role=None, scenario="s", input_id=f"row-{i}",
                temperature=0.0, effective_temperature=0.0, run_index=0,
                provider="fake", model="m", text=f"{answer} {i}",
            )
        )  # fmt: skip
        judgments.append(
            JudgmentRecord(
                response_key=key, criterion="answers the question", judge_key=f"j{key}",
                judge_model="judge", threshold=7.0, score=9.0 - i % 4, passed=i % 4 < 3,
                reasoning="fine",
            )
        )  # fmt: skip
    summary = RunSummary(
        id="r1", suite_name="suite", suite_hash="h", status="finished",
        started_at=datetime(2026, 1, 1, tzinfo=UTC), finished_at=None, metadata={},
    )  # fmt: skip
    return RunRecord(summary=summary, responses=responses, judgments=judgments)


def printed(run: RunRecord, **console: Any) -> str:
    buffer = io.StringIO()
    render_run(run, Console(file=buffer, highlight=False, **console), show_responses=True)
    return buffer.getvalue()


@pytest.fixture
def wraps(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Each time rich lays out a text: whether it was laid out to wrap at the width."""
    calls: list[bool] = []
    wrap = Text.wrap

    def noted(self: Text, *args: Any, **kwargs: Any) -> Any:
        calls.append(not kwargs.get("no_wrap"))
        return wrap(self, *args, **kwargs)

    monkeypatch.setattr(Text, "wrap", noted)
    return calls


def test_a_report_to_a_file_is_written_without_rich_laying_out_its_lines(
    wraps: list[bool],
) -> None:
    out = printed(build(200), width=200)
    assert "row-199" in out and "9/10" in out
    assert not any(wraps), "the report's lines were laid out (wrapped) by rich"
    # at 80 columns only the few lines longer than that are laid out, not the 200 rows
    narrow = printed(build(200), width=80)
    assert "row-199" in narrow
    assert 0 < sum(wraps) < 10


def test_the_plain_output_is_what_rich_lays_out() -> None:
    run = build(30, answer="une réponse, 回答 ")
    for width in (40, 80, 120):
        plain = printed(run, width=width)  # no colour system: the lines as they are
        # styled for a terminal, the styles then taken out: rich's layout of the same text
        styled = printed(run, width=width, color_system="truecolor", force_terminal=True)
        assert plain == Text.from_ansi(styled).plain
        assert "回答" in plain


def test_a_line_longer_than_the_width_is_wrapped_as_before(wraps: list[bool]) -> None:
    run = build(3, answer="word " * 60)
    out = printed(run, width=80)
    assert any(wraps)
    assert all(len(line) <= 80 for line in out.splitlines())
    styled = printed(run, width=80, color_system="truecolor", force_terminal=True)
    assert out == Text.from_ansi(styled).plain
