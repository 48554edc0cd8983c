"""A score just under the pass mark never reads as the pass mark in the HTML report (issue
19, item 1): a cell whose mean is 6.96 where 7 passes shows ``6.96``, not a red ``7``, and
the mean over temperatures says in its title why the candidate failed."""

from __future__ import annotations

import html
import re
from datetime import UTC, datetime

from qualspec.report import render_html
from qualspec.store import JudgmentRecord, ResponseRecord, RunRecord, RunSummary

WHEN = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


def _run(scores: dict[float, list[float]]) -> RunRecord:
    responses, judgments = [], []
    for t, values in scores.items():
        for i, score in enumerate(values):
            key = f"k-{t:g}-{i}"
            responses.append(
                ResponseRecord(
                    key=key,
                    candidate="c",
                    role=None,
                    scenario="s",
                    input_id=None,
                    temperature=t,
                    effective_temperature=t,
                    run_index=i,
                    provider="fake",
                    model="m",
                    text="an answer",
                    created_at=WHEN,
                )
            )
            judgments.append(
                JudgmentRecord(
                    response_key=key,
                    criterion="helpful",
                    judge_key=f"j-{key}",
                    judge_model="fake/judge",
                    threshold=7.0,
                    score=score,
                    passed=score >= 7.0,
                    created_at=WHEN,
                )
            )
    summary = RunSummary(
        id="run-near",
        suite_name="near",
        suite_hash="h",
        status="finished",
        started_at=WHEN,
        finished_at=WHEN,
        metadata={"judge": {"threshold": 7.0}},
    )
    return RunRecord(summary=summary, responses=responses, judgments=judgments)


def test_a_mean_just_under_the_pass_mark_shows_its_decimals() -> None:
    page = render_html(_run({0.0: [7.5, 7.5], 1.0: [7.0, 6.92]}))
    row = re.search(r'<tr class="mrow" data-candidate="c">(.*?)</tr>', page, re.DOTALL)
    assert row is not None
    cells = re.findall(r'<td class="num (\w+)" title="([^"]*)">([^<]*)', row.group(1))
    assert [(css, text) for css, _title, text in cells] == [
        ("pass", "7.5"),
        ("fail", "6.96"),  # not "7" in red where 7 passes
        ("fail", "7.2"),  # the mean over temperatures: the candidate failed at 1
    ]
    assert "FAIL: at 1: 6.96/10 &lt; 7" in cells[2][1]
    assert "FAIL: 6.96/10 < 7" in html.unescape(cells[1][1])
