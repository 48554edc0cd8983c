"""A reference-graded suite on the fake server and a field grader's replies, for the tests
of the field grader's calibration (``tests/cli``, ``tests/judges``)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

from qualspec.judges import field_calibration_pairs

GOOD = {p["good"] for p in field_calibration_pairs()}
"""The equal-meaning values of the known field pairs."""
BAD = {p["bad"] for p in field_calibration_pairs()}
"""The clearly wrong values of the known field pairs."""
_BLOCK = re.compile(r"- (\w+):\n  reference <<<(.*?)>>>\n  answer <<<(.*?)>>>", re.DOTALL)


def graded_suite(path: Path, url: str, key_env: str) -> Path:
    """Write a suite at ``path``: ``fake/bot`` answers a profile of two fields, graded by
    ``fake/grader`` against ``fake/ref``'s reference, on the fake server at ``url``."""
    path.write_text(
        "name: graded\n"
        "candidates: [{name: bot, model: fake/bot}]\n"
        "scenarios:\n"
        "  - name: profile\n"
        '    prompt: "Profile of Acme as JSON"\n'
        "    reference: {model: fake/ref}\n"
        "    output_schema: {fields: [{name: name}, {name: industry}]}\n"
        "grader: {model: fake/grader}\n"
        "providers:\n"
        f'  fake: {{type: openai, base_url: "{url}", api_key_env: {key_env}}}\n',
        encoding="utf-8",
    )
    return path


def knowing_grade(answer: str, other: int) -> tuple[int, str]:
    """(accuracy, match) of a grader that knows the pairs: 90 for an equal-meaning value,
    5 for a wrong one, ``other`` for anything else."""
    if answer in GOOD:
        return 90, "semantic"
    if answer in BAD:
        return 5, "none"
    return other, "semantic"


def fields_reply(prompt: str, grade: Callable[[str], tuple[int, str]]) -> str:
    """The grader's JSON reply to ``prompt``: each field's (accuracy, match) by ``grade``
    of the answer's value."""
    fields = {}
    for name, _ref, answer in _BLOCK.findall(prompt):
        accuracy, match = grade(answer)
        fields[name] = {
            "accuracy": accuracy,
            "match": match,
            "explanation": "graded",
            "confidence": 0.9,
        }
    return json.dumps({"fields": fields})


def calls_range(dry: str) -> tuple[int, int]:
    """(at least, at most) of a dry run's ``Total calls:`` line."""
    found = re.search(r"Total calls: (\d+)(?: to (\d+))?", dry)
    assert found is not None, dry
    low = int(found.group(1))
    return low, int(found.group(2) or low)
