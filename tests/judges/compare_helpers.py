"""A suite with candidates x roles, answers that differ by model, and a judge that reads
the answers it is shown by their labels (for the comparison tests)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from qualspec.cli import main
from qualspec.testing import FakeServer

CRITERION_REPLY = '{"score": 8, "reasoning": "Meets the criterion."}'

# Names that must never reach the judge: none of them occurs in a prompt or an answer.
CANDIDATES = {"cand_north": "model-nx1", "cand_south": "model-sx2"}
ROLES = {"role_novice": "I just started learning this.", "role_expert": "I teach this."}
ANSWERS = {
    "model-nx1": "Tides come from the pull of the moon and the sun on the oceans, twice a day.",
    "model-sx2": "Tides come from the moon.",
}

SUITE = """
name: comparisons
providers:
  fake: {type: openai, base_url: "%(url)s"}
candidates:
  - {name: cand_north, model: fake/model-nx1}
  - {name: cand_south, model: fake/model-sx2}
roles:
  - {name: role_novice, preamble: "I just started learning this."}
  - {name: role_expert, preamble: "I teach this."}
scenarios:
  - {name: tides, prompt: "Why are there tides?", criteria: ["explains the cause"]}
temperatures: %(temps)s
judge: {model: fake/judge}
comparisons:
%(comparisons)s
"""

_RESPONSE = re.compile(r"Response ([A-Z]\d*):\n<<<\n(.*?)\n>>>", re.DOTALL)


def answer_by_model(body: dict[str, Any]) -> str:
    """Each candidate model's own answer (the same whatever the prompt)."""
    return ANSWERS[str(body["model"])]


def user_text(body: dict[str, Any]) -> str:
    return next(m["content"] for m in reversed(body["messages"]) if m["role"] == "user")


def shown(body: dict[str, Any]) -> list[tuple[str, str]]:
    """``(label, answer)`` as a comparison request shows them, in order."""
    return _RESPONSE.findall(user_text(body))


def is_comparison(body: Any) -> bool:
    return isinstance(body, dict) and bool(shown(body))


def by_content(body: dict[str, Any]) -> str:
    """A fair judge: the longer answer scores higher, whatever its label or place."""
    answers = shown(body)
    if not answers:
        return CRITERION_REPLY
    scores = {label: min(10, len(text.split())) for label, text in answers}
    best = max(scores.values())
    top = [label for label, s in scores.items() if s == best]
    winner = top[0] if len(top) == 1 else "tie"
    return json.dumps({"scores": scores, "winner": winner, "reasoning": "The longer one."})


def comparison_requests(server: FakeServer) -> list[dict[str, Any]]:
    return [body for _, _, body in server.request_log if is_comparison(body)]


def run_suite(
    tmp_path: Path,
    server: FakeServer,
    comparisons: str,
    *extra: str,
    temps: str = "[0.0]",
    name: str = "out.json",
) -> tuple[int, dict[str, Any]]:
    suite = tmp_path / "suite.yaml"
    suite.write_text(SUITE % {"url": server.base_url, "temps": temps, "comparisons": comparisons})
    out = tmp_path / name
    with pytest.raises(SystemExit) as exc:
        main(["run", str(suite), "--quiet", "--output", str(out), "--no-calibration", *extra])
    return int(exc.value.code or 0), json.loads(out.read_text())


def records(data: dict[str, Any]) -> list[dict[str, Any]]:
    """The comparison records of a results file."""
    return [
        j
        for j in data.get("unattached_judgments", [])
        if (j.get("details") or {}).get("type") == "comparison"
    ]
