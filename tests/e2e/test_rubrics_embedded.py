"""Rubric mining end to end on the embedded model (SmolLM2-135M) over the test sessions.

A 135M model writes poor rubrics and poor scores: what must hold is that every step runs,
writes its files, and that every score is one the model wrote (1-5) or unscored.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from qualspec.store import Store

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "rubrics"))
from helpers_sessions import BETA_ID, beta_lines  # noqa: E402

from helpers_cli import run_cli

pytestmark = pytest.mark.embedded_model

FALLBACK = [
    {
        "id": "rubric_001",
        "name": "Clear Questions",
        "description": "The user asks clear, specific questions.",
        "scoring_criteria": "1: vague\n3: mostly clear\n5: precise and specific",
        "weight": 1.0,
    }
]


@pytest.mark.timeout(2400)  # the embedded model on a busy 2-core machine is slow
def test_rubric_pipeline_runs_on_the_embedded_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "sessions"
    folder.mkdir()
    (folder / f"{BETA_ID}.jsonl").write_text("\n".join(beta_lines()) + "\n")
    db = f"sqlite:///{tmp_path / 'q.db'}"
    # --timeout 600: no call time limit a loaded machine could reach (the default is 120 s);
    # --max-tokens 128: SmolLM2 echoes the prompt's template until the limit (500 tokens to
    # extract, 200 to judge by default, each asked twice): the same steps, files and checks
    # at a quarter of the model time (the readable answers are on the fake server:
    # tests/rubrics/test_pipeline.py)
    small = (
        "--model",
        "local/smollm2",
        "--retries",
        "1",
        "--timeout",
        "600",
        "--max-tokens",
        "128",
        "--db",
        db,
        "--quiet",
    )

    extracted = tmp_path / "extracted.json"
    code, _, err = run_cli(
        capsys,
        "rubrics",
        "extract",
        str(folder),
        "--min",
        "1",
        "--max",
        "3",
        "--out",
        str(extracted),
        *small,
    )
    assert code in (0, 1), err  # 1: the model wrote no valid rubric (said so, not invented)
    assert "Traceback" not in err
    data = json.loads(extracted.read_text())
    (entry,) = data["sessions"]
    assert entry["attempts"] in (1, 2)
    assert (code == 0) == bool(entry["rubrics"]) == (entry["error"] is None)

    rubrics_path = tmp_path / "rubrics.json"
    if entry["rubrics"]:
        code, _, err = run_cli(
            capsys, "rubrics", "summarize", str(extracted), "--out", str(rubrics_path), *small
        )
        assert code in (0, 1) and "Traceback" not in err, err
        summary = json.loads(rubrics_path.read_text())
        assert all(re.fullmatch(r"rubric_\d{3}", r["id"]) for r in summary["rubrics"])
        if not summary["rubrics"]:
            rubrics_path.write_text(json.dumps({"rubrics": FALLBACK}))
    else:
        rubrics_path.write_text(json.dumps({"rubrics": FALLBACK}))
    rubrics = json.loads(rubrics_path.read_text())["rubrics"][:1]  # keep the matrix tiny
    rubrics_path.write_text(json.dumps({"rubrics": rubrics}))

    scores_path = tmp_path / "scores.json"
    html = tmp_path / "sessions.html"
    code, out, err = run_cli(
        capsys,
        "rubrics",
        "judge",
        str(folder),
        "--rubrics",
        str(rubrics_path),
        "--out",
        str(scores_path),
        "--html",
        str(html),
        *small,
    )
    assert code == 0, err
    result = json.loads(scores_path.read_text())
    (session,) = result["sessions"]
    assert len(session["scores"]) == len(rubrics)
    with Store.open(db) as store:
        answers = [
            r.text or ""
            for run in store.list_runs()
            for r in store.load_run(run.id).responses
            if r.kind == "rubric_judge"
        ]
    for score in session["scores"]:
        if score["score"] is None:
            assert score["unscored_reason"]  # said why, no number made up
        else:
            assert 1 <= score["score"] <= 5
            # the number is one the model wrote on a SCORE line (or as a JSON score)
            wrote = re.compile(rf"(?i)score\W*{score['score']}\b")
            assert any(wrote.search(a) for a in answers), answers
    scored = [s["score"] for s in session["scores"] if s["score"] is not None]
    if scored:
        assert session["weighted_score"] is not None
    else:
        assert session["weighted_score"] is None
    assert BETA_ID in out and "Sessions judged by rubric" in html.read_text()
