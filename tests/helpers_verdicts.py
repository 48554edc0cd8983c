"""Runs on the fake server whose verdicts are known, for the tests that read one run's
verdicts several ways (``tests/report``, ``tests/analysis``, ``tests/cli``): a candidate
that names a city, a judge that scores by content, and a reference-graded profile suite."""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Container
from pathlib import Path
from typing import Any

_EXACT_AND_DRIFTER = "[{name: exact, model: fake/exact}, {name: drifter, model: fake/drifter}]"


class CityAnswers:
    """``steady`` always names Paris; ``flaky`` names London in the calls at temperature
    1.5 whose number (from 1) is in ``london_calls`` (which runs those are is left to the
    scheduler: the counts are fixed)."""

    def __init__(self, london_calls: Container[int] = ()) -> None:
        self.london_calls = london_calls
        self.calls: Counter[tuple[str, Any]] = Counter()
        self.lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> str:
        model, temperature = str(body["model"]), body.get("temperature")
        with self.lock:
            self.calls[(model, temperature)] += 1
            n = self.calls[(model, temperature)]
        if model == "flaky" and temperature == 1.5 and n in self.london_calls:
            return "London, I believe."
        return "Paris is the capital of France."


def city_judge(body: dict[str, Any]) -> str:
    """A judge that scores 1 an answer naming London, 9 any other."""
    score = 1 if "London" in json.dumps(body["messages"]) else 9  # by content
    return json.dumps({"score": score, "reasoning": "Checked the city named."})


def profile_suite(
    path: Path, url: str, key_env: str, *, name: str = "profiles", candidates: str = ""
) -> Path:
    """Write a suite at ``path``: a company profile of Acme (``name`` critical, then
    ``industry``) graded by ``fake/grader`` against ``fake/ref``'s reference; by default
    the candidates ``exact`` and ``drifter`` (a YAML flow list in ``candidates``)."""
    candidates = (
        candidates or "[{name: exact, model: fake/exact}, {name: drifter, model: fake/drifter}]"
    )
    path.write_text(
        f"name: {name}\n"
        f"candidates: {candidates}\n"
        "scenarios:\n"
        "  - name: profile\n"
        '    prompt: "Profile of {{ company }} as JSON"\n'
        "    inputs: [{id: acme, company: Acme}]\n"
        "    reference: {model: fake/ref}\n"
        "    output_schema:\n"
        "      fields: [{name: name, critical: true}, {name: industry}]\n"
        "judge: fake/grader\n"
        "providers:\n"
        f'  fake: {{type: openai, base_url: "{url}", api_key_env: {key_env}}}\n',
        encoding="utf-8",
    )
    return path
