"""``judge-check`` with several ``--judge``: every judge of a panel is checked on the known
pairs, then the combined panel from their scores (no call of its own)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from helpers_cli import run_cli
from qualspec.judges import calibration_pairs
from qualspec.testing import FakeServer

PAIRS = calibration_pairs()
CHECKED = calibration_pairs(4)  # those judge-check --pairs 4 measures


def _half_right(pair: dict[str, str]) -> bool:
    """Whether the judge "half" scores ``pair`` the right way round."""
    index = CHECKED.index(pair) if pair in CHECKED else PAIRS.index(pair)
    return index % 2 == 0


def _judge(body: dict[str, Any]) -> str:
    """good: 9 for a good answer, 2 for a bad one; flat: 8 always; half: right on the
    pairs of even index (among the 4 judge-check measures, else among every known pair),
    the wrong way round on the others."""
    user = body["messages"][-1]["content"]
    answer = user.split("Answer to grade:\n<<<\n", 1)[1].split("\n>>>", 1)[0]
    pair = next((p for p in PAIRS if answer in (p["good"], p["bad"])), None)
    model = str(body["model"]).rsplit("/", 1)[-1]
    if pair is None:  # a run's own answer
        return json.dumps({"score": 7, "reasoning": "an answer"})
    good = answer in {p["good"] for p in PAIRS}
    if model == "flat":
        score = 8
    elif model == "half" and not _half_right(pair):
        score = 2 if good else 9
    else:
        score = 9 if good else 2
    return json.dumps({"score": score, "reasoning": "known pair"})


def test_every_member_and_the_combined_panel_are_checked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeServer(judge_reply=_judge) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-cal")
        db = f"sqlite:///{tmp_path / 'cal.db'}"
        args = ["judge-check", "--judge", "openai/good", "--judge", "openai/flat"]
        args += ["--judge", "openai/half", "--pairs", "4", "--db", db]
        code, out, err = run_cli(capsys, *args, "--json")
        assert code == 0, err
        assert server.calls == 3 * 8  # each judge: 4 pairs x 2 answers; the panel: none
        code, text, _ = run_cli(capsys, *args)  # every check cached now
        assert server.calls == 3 * 8
    found = json.loads(out)
    members = found["members"]
    assert [members[m]["separation"] for m in ("openai/good", "openai/flat", "openai/half")] == [
        1.0,
        0.0,
        0.5,
    ]
    # the median of (9, 8, x) against (2, 8, y): separated exactly where half is right
    panel = found["panel"]
    assert panel["separation"] == 0.5 and panel["n_pairs"] == 4 and panel["meaningful"] is False
    assert panel["judge"] == "panel median of openai/good, openai/flat, openai/half"
    flat = " ".join(text.split())
    assert "panel (median) 0.50" in flat and "openai/good 1.00" in flat
    assert "worse than its best judge (openai/good, 1.00): use that judge" in flat


def test_a_run_measures_each_member_and_reports_the_combined_panel(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from qualspec.judges import DEFAULT_PAIRS

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "400")
    with FakeServer(judge_reply=_judge) as server:
        monkeypatch.setenv("FAKE_CAL_KEY", "sk-cal")
        suite = tmp_path / "suite.yaml"
        suite.write_text(
            "name: calibrated\n"
            f'providers: {{fake: {{type: openai, base_url: "{server.base_url}", '
            "api_key_env: FAKE_CAL_KEY}}\n"
            "candidates: [{name: bot, model: fake/m}]\n"
            "scenarios: [{name: s, prompt: Hi, criteria: [Polite]}]\n"
            "judge: {panel: [{model: fake/good}, {model: fake/flat}, {model: fake/half}]}\n"
        )
        code, out, err = run_cli(capsys, "run", str(suite), "-o", "r.json", "--quiet")
        assert code == 0, out + err
        # each member on the quick subset, then 1 answer judged by 3 judges
        assert server.calls == 3 * 2 * DEFAULT_PAIRS + 1 + 3
    measured = json.loads((tmp_path / "r.json").read_text())["run"]["metadata"]
    panel = measured["judge_calibration"]["criteria"]
    chosen = calibration_pairs(DEFAULT_PAIRS)
    right = sum(_half_right(p) for p in chosen) / len(chosen)
    assert panel["judge"] == "panel median of fake/good, fake/flat, fake/half"
    assert panel["separation"] == right
    assert {m: s["separation"] for m, s in panel["members"].items()} == {
        "fake/good": 1.0,
        "fake/flat": 0.0,
        "fake/half": right,
    }
    flat = " ".join(out.split() + err.split())
    assert "judge fake/flat: scores are NOT meaningful" in flat
