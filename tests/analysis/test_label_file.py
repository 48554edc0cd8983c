"""Reading label files: the forms a spreadsheet saves (``;`` and decimal commas, tabs),
answers found by place (``run`` from 1 or ``run_index`` from 0), repeated and conflicting
rows, rows not labelled yet, and the sheet's sample."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from qualspec.analysis import label_sheet, read_labels
from qualspec.errors import ConfigError, SpecError
from qualspec.store import JudgmentRecord, ResponseRecord, RunRecord, RunSummary

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def _run(n: int = 4) -> RunRecord:
    responses = [
        ResponseRecord(f"k{i}", "c", None, "s", None, None, None, i, "p", "m", text=f"a{i}")
        for i in range(n)
    ]
    judgments = [
        JudgmentRecord(f"k{i}", crit, "jk", "p/j", 7.0, 5.0, False)
        for i in range(n)
        for crit in ("polite", "clear")
    ]
    judgments.append(JudgmentRecord("k0", "cites", "x", None, None, 10.0, True, evaluator="expect"))
    return RunRecord(RunSummary("run-1", "suite", "h", "finished", T0, T0), responses, judgments)


def test_semicolons_decimal_commas_places_and_pass_words(tmp_path: Path) -> None:
    path = tmp_path / "l.csv"
    path.write_text(
        "Scenario;Candidate;Temperature;Run;Criterion;Score;Pass;Annotator\n"
        "s;c;default;1;polite;7,5;yes;ann\n"
        "s;c;default;2;clear;;FAIL;ann\n"
        "s;c;default;3;polite;;;ann\n",  # not labelled yet
        encoding="utf-8",
    )
    found = read_labels(path, _run())
    assert [(x.response_key, x.criterion, x.score, x.passed, x.labeller) for x in found.labels] == [
        ("k0", "polite", 7.5, True, "ann"),
        ("k1", "clear", None, False, "ann"),
    ]
    assert (found.rows, found.skipped, found.repeated) == (3, 1, 0)


def test_run_index_counts_from_zero_and_a_repeated_row_is_counted_once(tmp_path: Path) -> None:
    path = tmp_path / "l.tsv"
    rows = ["scenario\tcandidate\ttemperature\trun_index\tcriterion\tscore"]
    rows += ["s\tc\tdefault\t0\tpolite\t3"] * 2
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    found = read_labels(path, _run())
    assert [(x.response_key, x.score) for x in found.labels] == [("k0", 3.0)]
    assert found.repeated == 1


def test_a_conflicting_repeat_and_a_check_name_are_refused_by_line(tmp_path: Path) -> None:
    path = tmp_path / "l.jsonl"
    path.write_text(
        '{"scenario": "s", "candidate": "c", "temperature": null, "run": 1, '
        '"criterion": "polite", "score": 3}\n'
        "\n"
        '{"response_key": "k0", "criterion": "polite", "score": 4}\n'
        '{"response_key": "k0", "criterion": "cites", "passed": true}\n',
        encoding="utf-8",
    )
    with pytest.raises(SpecError) as info:
        read_labels(path, _run())
    got = [str(i) for i in info.value.issues]
    assert got[0].startswith(f"{path}:3:1: error: score: labels the answer and criterion of line 1")
    assert got[1].startswith(f"{path}:4:1: error: criterion: 'cites' was not judged")
    assert len(got) == 2


def test_a_file_without_a_criterion_column_or_rows_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "l.csv"
    path.write_text("response_key,score\nk0,5\n", encoding="utf-8")
    with pytest.raises(SpecError, match="no 'criterion' column"):
        read_labels(path, _run())
    path.write_text(
        "scenario,candidate,temperature,run,criterion,score\ns,c,,1,polite,5\n", encoding="utf-8"
    )
    with pytest.raises(SpecError, match="temperature: empty"):
        read_labels(path, _run())
    path.write_text("response_key,criterion,score\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="no rows"):
        read_labels(path, _run())
    with pytest.raises(ConfigError, match="cannot read"):
        read_labels(tmp_path / "missing.csv", _run())


def test_the_sheet_lists_judged_criteria_and_samples_whole_answers() -> None:
    rows = label_sheet(_run(10), labeller="ann")
    assert len(rows) == 20 and {r["criterion"] for r in rows} == {"polite", "clear"}
    assert rows[0]["temperature"] == "default" and rows[0]["run"] == 1
    assert {r["labeller"] for r in rows} == {"ann"} and {r["score"] for r in rows} == {""}
    sample = label_sheet(_run(10), sample=3, seed=1)
    assert len(sample) == 6 and len({r["response_key"] for r in sample}) == 3
    assert sample == label_sheet(_run(10), sample=3, seed=1)  # the same draw
