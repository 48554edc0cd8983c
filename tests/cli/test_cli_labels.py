"""``qualspec labels export|import|list`` and ``qualspec agreement``: 200 human labels
imported from CSV and JSON Lines, bad rows reported by line with nothing imported, a
second import that changes nothing, the export -> fill in -> import round trip, and the
agreement against a computation written out here."""

from __future__ import annotations

import csv
import io
import json
import random
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from helpers_cli import run_cli, work_in
from qualspec.store import JudgmentRecord, ResponseRecord, Store

T0 = datetime(2026, 1, 2, tzinfo=UTC)
CANDIDATES = ("small", "large")
TEMPERATURES = (0.0, 0.7)
RUNS = 25  # 2 candidates x 2 temperatures x 25 runs = 100 answers, x 2 criteria = 200
CRITERIA = ("polite", "accurate")
THRESHOLD = 7.0


@pytest.fixture(autouse=True)
def _home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    work_in(tmp_path, monkeypatch, {"QUALSPEC_USER": "carol"})


def _answers() -> list[ResponseRecord]:
    out = []
    for candidate in CANDIDATES:
        for t in TEMPERATURES:
            for i in range(RUNS):
                out.append(
                    ResponseRecord(
                        f"{candidate}-{t}-{i}", candidate, "tutor", "greeting", "row1", t, t, i,
                        "openai", "gpt-x", text=f"answer {candidate} {t} {i}\nsecond line",
                        created_at=T0,
                    )
                )  # fmt: skip
    return out


def _scores() -> dict[tuple[str, str], tuple[float, float]]:
    """(answer, criterion) -> (judge's score, people's score), drawn once (seeded)."""
    draw = random.Random(21)
    out = {}
    for r in _answers():
        for criterion in CRITERIA:
            person = float(draw.randint(0, 10))
            spread = 1 if criterion == "polite" else 3
            judge = float(min(10, max(0, person + draw.randint(-spread, spread))))
            out[r.key, criterion] = (judge, person)
    return out


def _make_run() -> str:
    with Store.open() as store:
        run_id = store.create_run("labelled", "h", {"judge": {"threshold": THRESHOLD}})
        store.record_responses(run_id, [*_answers(), _error_answer()])
        store.record_judgments(
            run_id,
            [
                JudgmentRecord(
                    key, criterion, "jk", "openai/judge", THRESHOLD, judge, judge >= THRESHOLD,
                    created_at=T0,
                )
                for (key, criterion), (judge, _) in _scores().items()
            ],
        )  # fmt: skip
        store.finish_run(run_id, "finished")
    return run_id


def _error_answer() -> ResponseRecord:
    return ResponseRecord(
        "broken", "small", "tutor", "greeting", "row1", 0.0, 0.0, 99, "openai", "gpt-x",
        error="HTTP 500", created_at=T0,
    )  # fmt: skip


def _good_rows() -> list[dict[str, Any]]:
    """200 labels: half keyed by the answer id, half by where the answer sits."""
    rows = []
    for n, ((key, criterion), (_, person)) in enumerate(_scores().items()):
        candidate, t, i = key.split("-")
        row: dict[str, Any] = {"criterion": criterion, "score": person, "labeller": "ann"}
        if n % 2:
            row["response_key"] = key
        else:
            row.update(
                scenario="greeting", input="row1", role="tutor", candidate=candidate,
                temperature=t, run=int(i) + 1,
            )  # fmt: skip
        rows.append(row)
    return rows


_FIELDS = ("response_key", "scenario", "input", "role", "candidate", "temperature", "run")
_CSV_FIELDS = (*_FIELDS, "criterion", "score", "passed", "labeller")


def _csv(rows: list[dict[str, Any]]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=_CSV_FIELDS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


def _jsonl(rows: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(row) + "\n" for row in rows)


# five bad rows, put among the good ones at these places (0-based among the data rows)
_BAD_CSV = {
    10: {"response_key": "small-0.0-1", "criterion": "polite", "score": "eleven"},
    50: {"response_key": "small-0.0-2", "criterion": "polite", "score": "12"},
    90: {"response_key": "small-0.0-3", "criterion": "polite", "passed": "maybe"},
    130: {"response_key": "no-such-answer", "criterion": "polite", "score": "5"},
    170: {"response_key": "small-0.0-4", "criterion": "politeness", "score": "5"},
}


def _with_bad(rows: list[dict[str, Any]], bad: dict[int, Any]) -> list[Any]:
    out: list[Any] = list(rows)
    for at in sorted(bad):
        out.insert(at, bad[at])
    return out


def test_bad_csv_rows_are_reported_by_line_and_nothing_is_imported(
    capsys: pytest.CaptureFixture[str],
) -> None:
    run_id = _make_run()
    Path("bad.csv").write_text(_csv(_with_bad(_good_rows(), _BAD_CSV)), encoding="utf-8")
    code, out, err = run_cli(capsys, "labels", "import", run_id, "bad.csv")
    assert code == 2, out + err
    lines = err.strip().splitlines()
    # the header is line 1: data row k (0-based) is on line k + 2
    assert [line.split(": error: ")[0] for line in lines[:5]] == [
        f"bad.csv:{at + 2}:1" for at in sorted(_BAD_CSV)
    ]
    assert "score: 'eleven' is not a number" in lines[0]
    assert "score: 12 is outside 0-10" in lines[1]
    assert "passed: 'maybe' is not pass/fail" in lines[2]
    assert "response_key: no answer of run" in lines[3]
    assert "criterion: 'politeness' was not judged on this answer" in lines[4]
    assert "'polite'" in lines[4] and "'accurate'" in lines[4]  # the names to use
    assert "5 problems: nothing was imported" in lines[5] and len(lines) == 6
    with Store.open() as store:
        assert store.labels(run_id) == []


def test_bad_jsonl_rows_are_reported_by_line_and_nothing_is_imported(
    capsys: pytest.CaptureFixture[str],
) -> None:
    run_id = _make_run()
    text = _jsonl(_good_rows()).splitlines()
    bad = {
        3: '{"response_key": "small-0.0-1", "criterion": "polite", "score": 7',
        40: json.dumps({"candidate": "zzz", "scenario": "greeting", "temperature": 0,
                        "run": 1, "criterion": "polite", "score": 5}),
        80: json.dumps({"response_key": "small-0.0-2", "criterion": "polite", "score": 11}),
        120: json.dumps({"response_key": "broken", "criterion": "polite", "score": 5}),
        160: json.dumps({"response_key": "small-0.0-3", "score": 5}),
    }  # fmt: skip
    for at in sorted(bad):
        text.insert(at, bad[at])
    Path("bad.jsonl").write_text("\n".join(text) + "\n", encoding="utf-8")
    code, out, err = run_cli(capsys, "labels", "import", run_id, "bad.jsonl")
    assert code == 2, out + err
    lines = err.strip().splitlines()
    assert [line.split(": error: ")[0] for line in lines[:5]] == [
        f"bad.jsonl:{at + 1}:1" for at in sorted(bad)
    ]
    assert "not JSON" in lines[0]
    assert "no answer of run" in lines[1] and "candidate='zzz'" in lines[1]
    assert "11 is outside 0-10" in lines[2]
    assert "is an error (no text)" in lines[3]
    assert "criterion: empty" in lines[4]
    with Store.open() as store:
        assert store.labels(run_id) == []


def _hand_alpha(a: list[float], b: list[float]) -> float:
    """Krippendorff's interval alpha for two raters, from its definition: 1 - D_o / D_e,
    D_o the mean squared difference within answers (each pair both ways), D_e that over
    every pair of the 2n values."""
    values = a + b
    n = len(values)
    observed = sum(2 * (x - y) ** 2 for x, y in zip(a, b, strict=True)) / n
    expected = sum(
        (x - y) ** 2 for i, x in enumerate(values) for j, y in enumerate(values) if i != j
    )
    return 1 - observed / (expected / (n * (n - 1)))


def _agreement(capsys: pytest.CaptureFixture[str], run_id: str) -> dict[str, Any]:
    code, out, err = run_cli(capsys, "agreement", run_id, "--format", "json")
    assert code == 0, out + err
    return json.loads(out)["judge_vs_people"]  # type: ignore[no-any-return]


def test_200_labels_import_once_and_agreement_matches_the_hand_computation(
    capsys: pytest.CaptureFixture[str],
) -> None:
    run_id = _make_run()
    Path("human.csv").write_text(_csv(_good_rows()), encoding="utf-8")
    code, out, err = run_cli(capsys, "labels", "import", run_id, "human.csv")
    assert code == 0, out + err
    assert "200 labels added, 0 changed, 0 unchanged" in out
    with Store.open() as store:
        first = store.labels(run_id)
    assert len(first) == 200
    assert {(x.imported_by, x.source_name, x.labeller) for x in first} == {
        ("carol", "human.csv", "ann")
    }
    # again, and the same labels as JSON Lines: nothing changes
    code, out, _ = run_cli(capsys, "labels", "import", run_id, "human.csv", "--by", "dave")
    assert code == 0 and "0 labels added, 0 changed, 200 unchanged" in out
    Path("human.jsonl").write_text(_jsonl(_good_rows()), encoding="utf-8")
    code, out, _ = run_cli(capsys, "labels", "import", run_id, "human.jsonl")
    assert code == 0 and "0 labels added, 0 changed, 200 unchanged" in out
    with Store.open() as store:
        assert store.labels(run_id) == first

    people = _agreement(capsys, run_id)
    assert (people["labels"], people["answers"], people["labellers"]) == (200, 100, ["ann"])
    scores = _scores()
    for row in people["judges"]:
        pairs = [v for (_, c), v in scores.items() if c == row["criterion"]]
        a, b = [j for j, _ in pairs], [p for _, p in pairs]
        assert row["n"] == 100 and row["judge"] == "criteria"
        assert row["alpha"] == pytest.approx(_hand_alpha(a, b))
        assert row["exact"] == sum(x == y for x, y in pairs) / 100
        assert row["within_1"] == sum(abs(x - y) <= 1 for x, y in pairs) / 100
        low, high = row["alpha_ci"]
        assert low <= row["alpha"] <= high
        verdicts = [(x >= THRESHOLD, y >= THRESHOLD) for x, y in pairs]
        assert row["confusion"] == {
            "both_pass": sum(x and y for x, y in verdicts),
            "judge_only": sum(x and not y for x, y in verdicts),
            "people_only": sum(y and not x for x, y in verdicts),
            "both_fail": sum(not x and not y for x, y in verdicts),
        }
    # the text names whom to trust per criterion
    code, out, _ = run_cli(capsys, "agreement", run_id)
    assert code == 0
    assert "criterion polite" in out and "criterion accurate" in out
    assert out.count("-> trust") == 2


def test_export_fill_in_import_round_trip(capsys: pytest.CaptureFixture[str]) -> None:
    run_id = _make_run()
    code, out, err = run_cli(capsys, "labels", "export", run_id[:12], "-o", "sheet.csv")
    assert code == 0, out + err
    assert "wrote 200 rows (100 answers" in out
    raw = Path("sheet.csv").read_text(encoding="utf-8")
    assert raw.startswith("\ufeff")  # a spreadsheet reads it as UTF-8
    rows = list(csv.DictReader(io.StringIO(raw.lstrip("\ufeff"), newline="")))
    assert len(rows) == 200 and "broken" not in {r["response_key"] for r in rows}
    assert rows[0]["answer"].endswith("\nsecond line")  # the answer's text, whole
    assert rows[0]["score"] == rows[0]["passed"] == ""  # and no judge's score beside it
    scores = _scores()
    for row in rows[:150]:  # a person labels 150 of 200 and saves the sheet
        row["score"] = str(int(scores[row["response_key"], row["criterion"]][1]))
        row["passed"] = "pass" if float(row["score"]) >= THRESHOLD else "fail"
        row["labeller"] = "ann"
    good = rows[3]["score"]
    rows[3]["score"] = "eleven"  # a slip: the file says where, by line and by row
    _write_sheet(rows)
    code, out, err = run_cli(capsys, "labels", "import", run_id, "filled.csv")
    assert code == 2
    # each answer spans two lines: the 4th data row starts on line 8, a spreadsheet's row 5
    assert err.startswith("filled.csv:8:1: error: score: 'eleven' is not a number")
    assert "(spreadsheet row 5)" in err.splitlines()[0]
    rows[3]["score"] = good
    _write_sheet(rows)
    code, out, err = run_cli(capsys, "labels", "import", run_id, "filled.csv")
    assert code == 0, out + err
    assert "150 labels added" in out and "50 rows without a score or passed left out" in out
    code, out, _ = run_cli(capsys, "labels", "list", run_id)
    assert code == 0 and len(out.strip().splitlines()) == 150
    assert "imported by carol" in out and "from filled.csv" in out


def _write_sheet(rows: list[dict[str, str]]) -> None:
    """Save the sheet as a spreadsheet does: CSV UTF-8 with a byte-order mark, CRLF."""
    out_text = io.StringIO()
    writer = csv.DictWriter(out_text, fieldnames=list(rows[0]), lineterminator="\r\n")
    writer.writeheader()
    writer.writerows(rows)
    Path("filled.csv").write_text("\ufeff" + out_text.getvalue(), encoding="utf-8")


def test_agreement_without_labels_says_how_to_get_them(
    capsys: pytest.CaptureFixture[str],
) -> None:
    run_id = _make_run()
    code, out, _ = run_cli(capsys, "agreement", run_id)
    assert code == 0
    assert "no labels for this run" in out and f"qualspec labels export {run_id}" in out
