"""Large runs stay readable (issue 17, item 13): the console sums each comparison up
(wins per candidate of how many groups, mean scores, order disagreements) in a few lines
whatever the number of groups; each group's winner and reason is listed with --verbose,
and always in the HTML report."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from qualspec.cli import main
from qualspec.testing import FakeServer

KEY_ENV = "FAKE_CMP_KEY"
N_INPUTS = 12
_RESPONSE = re.compile(r"Response ([A-Z]\d*):\n<<<\n(.*?)\n>>>", re.DOTALL)


def _answer(body: dict[str, Any]) -> str:
    if body["model"] == "long":
        return "Tides come from the pull of the moon and the sun on the oceans."
    return "The moon."


def _judge(body: dict[str, Any]) -> str:
    """The longer answer wins, whatever its label or place."""
    text = str(body["messages"][-1]["content"])
    shown = _RESPONSE.findall(text)
    if not shown:
        return '{"score": 8, "reasoning": "Meets the criterion."}'
    scores = {label: min(10, len(answer.split())) for label, answer in shown}
    winner = max(scores, key=lambda label: scores[label])
    return json.dumps({"scores": scores, "winner": winner, "reasoning": "The longer one."})


def _run(tmp_path: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> str:
    rows = ", ".join(f"{{id: q{i}, topic: tides{i}}}" for i in range(N_INPUTS))
    with FakeServer(answer=_answer, judge_reply=_judge) as server:
        suite = tmp_path / "suite.yaml"
        suite.write_text(
            "name: many groups\n"
            "candidates: [{name: long, model: fake/long}, {name: short, model: fake/short}]\n"
            "scenarios:\n"
            '  - name: tides\n    prompt: "Explain {{ topic }}"\n'
            f"    inputs: [{rows}]\n"
            '    criteria: ["explains the cause"]\n'
            "judge: {model: fake/judge}\n"
            "comparisons:\n  - {compare: candidates, within: roles, debias: true}\n"
            f'providers:\n  fake: {{type: openai, base_url: "{server.base_url}", '
            f"api_key_env: {KEY_ENV}}}\n",
            encoding="utf-8",
        )
        with pytest.raises(SystemExit) as exc:
            main(["run", str(suite), "--quiet", "--no-calibration", "--html", "r.html", *extra])
    assert exc.value.code == 0
    return capsys.readouterr().out


@pytest.fixture(autouse=True)
def _env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(KEY_ENV, "sk-cmp")
    monkeypatch.setenv("COLUMNS", "250")


def _block(out: str) -> list[str]:
    start = out.index("  Comparisons:")
    end = out.index("\n\n", start) if "\n\n" in out[start:] else len(out)
    return out[start:end].splitlines()


def test_the_console_sums_comparisons_up_and_lists_groups_only_with_verbose(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = _run(tmp_path, capsys)
    block = _block(out)
    # a summary of a few lines, not two lines per group
    assert len(block) <= 8, block
    assert not any(": winner" in line for line in block), block
    text = "\n".join(block)
    assert f"wins: long {N_INPUTS}, short 0 (of {N_INPUTS} judged)" in text
    assert re.search(rf"mean scores: long \d+(\.\d)?, short \d+(\.\d)? \(n {N_INPUTS}\)", text)
    assert f"orders disagreed in 0 of {N_INPUTS} groups" in text
    assert f"each group's winner and reason ({N_INPUTS} groups): --verbose" in text
    # every group is in the HTML report
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert page.count('<details class="resp cmp">') == N_INPUTS


def test_verbose_lists_each_group(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = _run(tmp_path, capsys, "--verbose")
    winners = [line for line in _block(out) if ": winner long" in line]
    assert len(winners) == N_INPUTS
