"""`qualspec grader-check`: the run's graded answers re-graded N times through the engine
(fresh calls, not the cache), the spread per item and overall, items over 5% flagged,
recorded for `qualspec insights`; against the fake server with a judge whose reply varies
from one call to the next."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from helpers_cli import run_cli, run_suite, work_in
from qualspec.store import Store
from qualspec.testing import FakeServer

KEY_ENV = "FAKE_GC_KEY"


@pytest.fixture(autouse=True)
def _work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    work_in(tmp_path, monkeypatch, {KEY_ENV: "sk-gc", "COLUMNS": "300"})


class VaryingJudge:
    """The n-th call with the same prompt gets the n-th reply of its sequence (the last
    one repeated): a grader that is consistent on some items and not on others."""

    def __init__(self, reply: Any) -> None:
        self.reply = reply
        self.seen: Counter[str] = Counter()

    def __call__(self, body: dict[str, Any]) -> str:
        text = body["messages"][-1]["content"]
        n = self.seen[text]
        self.seen[text] += 1
        return str(self.reply(text, n))


def _criteria_reply(text: str, n: int) -> str:
    if "Is polite" in text:  # recorded 8, then 6, 9, 7: spread 3 points of 10
        score = [8, 6, 9, 7][min(n, 3)]
    else:
        score = 8
    return json.dumps({"score": score, "reasoning": "ok"})


def _suite(tmp_path: Path, server: FakeServer, judging: str) -> Path:
    path = tmp_path / "suite.yaml"
    path.write_text(
        "name: consistency\n"
        "candidates: [{name: bot, model: fake/m}]\n"
        "scenarios:\n"
        '  - {name: capital, prompt: "What is the capital of France?", '
        "criteria: [Names Paris, Is polite]}\n"
        f"{judging}\n"
        "providers:\n"
        f'  fake: {{type: openai, base_url: "{server.base_url}", api_key_env: {KEY_ENV}}}\n',
        encoding="utf-8",
    )
    return path


def test_criteria_judgments_are_re_asked_and_the_inconsistent_one_is_flagged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    judge = VaryingJudge(_criteria_reply)
    with FakeServer(judge_reply=judge) as server:
        run_id = run_suite(capsys, _suite(tmp_path, server, "judge: {model: fake/judge}"))
        before = server.calls  # 1 answer + 2 judgments
        code, out, err = run_cli(capsys, "grader-check", run_id[:8], "--repeats", "3")
        assert code == 0, out + err
        assert server.calls == before + 2 * 3  # every repeat a real call: not the cache
        text = " ".join(out.split())
        assert f"Grader check: run {run_id} (criteria, 0-10); 3 re-grades of 2 items" in text
        polite = next(line for line in out.splitlines() if "Is polite" in line)
        assert "6, 9, 7" in polite and "3.0" in polite and "FLAGGED" in polite
        paris = next(line for line in out.splitlines() if "Names Paris" in line)
        assert "8, 8, 8" in paris and "FLAGGED" not in paris
        assert "INCONSISTENT: 1 of 2 items spread more than 0.5 points" in text
        assert "largest spread 3.0" in text

        # recorded on the run, for insights
        with Store.open() as store:
            recorded = store.get_run(run_id).metadata["grader_check"]
        assert recorded["flagged"] == 1 and recorded["items"] == 2 and recorded["repeats"] == 3
        assert recorded["largest_spread"] == 3.0

        # a second check reads the repeats back from the cache: no call, the same numbers
        code, again, _ = run_cli(capsys, "grader-check", run_id, "--repeats", "3")
        assert code == 0 and server.calls == before + 6
        assert again == out

    code, out, _ = run_cli(capsys, "insights", run_id)
    assert code == 0
    text = " ".join(out.split())
    assert "The grader is inconsistent" in text
    assert "1 of 2 items spread more than 0.5 over 3 re-grades" in text
    assert "bot capital 'Is polite' (criteria): recorded 8; 6, 9, 7 (spread 3.0)" in text

    # a wider limit: the same re-grades (from the cache), nothing flagged; the latest
    # check is the one recorded, so insights no longer report inconsistent grading
    with FakeServer(judge_reply=judge) as server:
        code, wide, _ = run_cli(capsys, "grader-check", run_id, "--max-spread", "3")
        assert code == 0 and server.calls == 0
    assert "Consistent: every item within 3 points" in " ".join(wide.split())
    assert "FLAGGED" not in wide
    code, out, _ = run_cli(capsys, "insights", run_id)
    assert code == 0 and "inconsistent" not in out


def _field_reply(text: str, n: int) -> str:
    # the same answer graded 90/100, then 90/100, 70/100, 90/96: industry spreads 20
    industry = [100, 100, 80, 96][min(n, 3)]
    return json.dumps({"fields": {"name": 90, "industry": industry}})


def test_field_grades_are_re_graded_on_the_same_answer_and_spread_per_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    judge = VaryingJudge(_field_reply)
    judging = (
        "judges: [{type: 'helpers_field_grader:create', name: field_grader, model: fake/grader}]"
    )
    with FakeServer(judge_reply=judge) as server:
        run_id = run_suite(capsys, _suite(tmp_path, server, judging))
        answer = "Answer to: What is the capital of France?"
        code, out, err = run_cli(capsys, "grader-check", run_id, "--format", "json")
        assert code == 0, out + err
    data = json.loads(out)
    assert data["source"] == "field_grades" and data["scale"] == 100
    assert data["items"] == 1 and data["repeats"] == 3
    (item,) = data["items_detail"]
    assert item["original"] == 95.0  # (90 + 100) / 2, as the run recorded it
    assert item["scores"] == [95.0, 85.0, 93.0]
    assert item["spread"] == 10.0 and item["flagged"] is True
    assert item["field_spreads"] == {"name": 0.0, "industry": 20.0}
    assert data["flagged"] == 1 and data["max_spread"] == 5.0
    # every grading call was about the run's own answer
    graded = [t for t in judge.seen if "Grade the answer" in t]
    assert len(graded) == 1 and answer in graded[0]
    assert judge.seen[graded[0]] == 4  # the run's grade and 3 re-grades


def test_a_run_without_graded_answers_or_suite_file_is_a_one_line_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeServer() as server:
        suite = _suite(tmp_path, server, "judge: {model: fake/judge}")
        code, out, err = run_cli(capsys, "run", str(suite), "--quiet", "--no-judge", "-o", "a.json")
        assert code == 0, out + err
        with Store.open() as store:
            plain = store.list_runs(limit=1)[0].id
        code, _, err = run_cli(capsys, "grader-check", plain)
        assert code == 2 and "has no graded answers to re-grade" in err
        assert len(err.strip().splitlines()) == 1
        judged = run_suite(capsys, suite)
    # an edited prompt: none of the run's answers is in the suite's plan any more
    original = suite.read_text()
    suite.write_text(original.replace("capital of France", "capital city of France"))
    code, _, err = run_cli(capsys, "grader-check", judged)
    assert code == 2 and "none of its 2 graded answers is in its suite's plan" in err
    suite.unlink()
    code, _, err = run_cli(capsys, "grader-check", judged)
    assert code == 2
    assert re.search(r"its suite file \(.*suite\.yaml\) is gone", err)
    assert "Traceback" not in err


def test_an_evaluator_that_raises_leaves_that_re_grade_unscored(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def reply(text: str, n: int) -> str:  # the plugin cannot read its second re-grade
        return "not json" if n == 2 else json.dumps({"fields": {"name": 90, "industry": 90}})

    judging = (
        "judges: [{type: 'helpers_field_grader:create', name: field_grader, model: fake/grader}]"
    )
    with FakeServer(judge_reply=VaryingJudge(reply)) as server:
        run_id = run_suite(capsys, _suite(tmp_path, server, judging))
        code, out, err = run_cli(capsys, "grader-check", run_id, "--repeats", "3")
    assert code == 0, out + err
    assert "90, unscored, 90" in out
    assert "unscored re-grades: 1" in " ".join(out.split())


FIELD_JUDGING = (
    "judges: [{type: 'helpers_field_grader:create', name: field_grader, model: fake/grader}]"
)


def test_the_recorded_grade_is_part_of_the_spread_and_scores_print_rounded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # issue 17 item 5: recorded 45.0, re-graded 41.4 / 37.1 / 37.1: the re-grades alone
    # spread 4.3 (within 5), but the grade the run recorded is 7.9 away from them
    def reply(text: str, n: int) -> str:
        name = [50, 42.8571, 34.2857][min(n, 2)]
        return json.dumps({"fields": {"name": name, "industry": 40}})

    with FakeServer(judge_reply=VaryingJudge(reply)) as server:
        run_id = run_suite(capsys, _suite(tmp_path, server, FIELD_JUDGING))
        code, out, err = run_cli(capsys, "grader-check", run_id)
    assert code == 0, out + err
    row = next(line for line in out.splitlines() if "field_grader)" in line)
    assert "41.4, 37.1, 37.1" in row and "42.857" not in out and "41.42" not in out
    assert " 45 " in row and "7.9" in row and "FLAGGED" in row
    assert "INCONSISTENT: 1 of 1 items" in " ".join(out.split())
    with FakeServer(judge_reply=VaryingJudge(reply)) as server:
        code, out, _ = run_cli(capsys, "grader-check", run_id, "--format", "json")
    (item,) = json.loads(out)["items_detail"]
    assert item["original"] == 45.0 and item["flagged"] is True
    assert item["spread"] == pytest.approx(45.0 - 37.14285)
    assert item["field_spreads"]["name"] == pytest.approx(50 - 34.2857)


def test_a_field_that_spreads_is_flagged_even_where_the_mean_does_not_move(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # every grade of the answer is 85, but its fields move 10 points between re-grades
    def reply(text: str, n: int) -> str:
        name = [90, 95, 85, 90][min(n, 3)]
        return json.dumps({"fields": {"name": name, "industry": 170 - name}})

    with FakeServer(judge_reply=VaryingJudge(reply)) as server:
        run_id = run_suite(capsys, _suite(tmp_path, server, FIELD_JUDGING))
        code, out, err = run_cli(capsys, "grader-check", run_id)
    assert code == 0, out + err
    text = " ".join(out.split())
    assert "Consistent" not in text
    assert "INCONSISTENT: 1 of 1 items spread more than 5 points" in text
    row = next(line for line in out.splitlines() if "field_grader)" in line)
    assert "85, 85, 85" in row and "0.0" in row and "industry 10.0" in row and "FLAGGED" in row
    with Store.open() as store:
        recorded = store.get_run(run_id).metadata["grader_check"]
    assert recorded["flagged"] == 1 and recorded["largest_field_spread"] == 10.0
    assert "field industry spreads 10.0" in recorded["flagged_items"][0]
