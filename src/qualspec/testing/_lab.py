"""Scripted answers and scores for the Lab on the fake server (tests and demos).

Example::

    script = LabScript(scores=[0.4, 0.9])
    with FakeServer(judge_reply=script.evaluate, answer=script.generate) as server:
        ...  # generate_answer(..., model="fake/gen", providers={"fake": ...})
    assert "Rated 0.4" in script.generation_prompts[1]
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from typing import Any

__all__ = ["LabScript"]


def _last_user(body: dict[str, Any]) -> str:
    for message in reversed(body.get("messages") or []):
        if isinstance(message, dict) and message.get("role") == "user":
            return str(message.get("content", ""))
    return ""


class LabScript:
    """The Lab's generator and evaluator on a :class:`FakeServer`, with known scores.

    Args:
        scores: The evaluator's score for each evaluation call, in order (the last one
            repeats); a string is sent as the evaluator's raw answer instead (say, an
            unreadable verdict).
        answers: The generator's answer for each generation call (default ``Answer N``);
            the last one repeats.
    """

    def __init__(self, scores: Sequence[float | str], answers: Sequence[str] = ()) -> None:
        self.scores = list(scores)
        self.answers = list(answers)
        self.generation_prompts: list[str] = []
        self.evaluation_prompts: list[str] = []
        self._lock = threading.Lock()

    def generate(self, body: dict[str, Any]) -> str:
        """The fake server's ``answer``: the next scripted answer."""
        with self._lock:
            self.generation_prompts.append(_last_user(body))
            n = len(self.generation_prompts)
        if not self.answers:
            return f"Answer {n}"
        return self.answers[min(n, len(self.answers)) - 1]

    def evaluate(self, body: dict[str, Any]) -> str:
        """The fake server's ``judge_reply``: the next scripted verdict.

        A call without structured output (the generator, when its prompt happens to
        mention a score) is answered as a generation.
        """
        if "response_format" not in body and "tools" not in body:
            return self.generate(body)
        with self._lock:
            self.evaluation_prompts.append(_last_user(body))
            n = len(self.evaluation_prompts)
        score = self.scores[min(n, len(self.scores)) - 1]
        if isinstance(score, str):
            return score
        return json.dumps(
            {
                "score": score,
                "meets_criteria": score >= 0.8,
                "evaluation_reasoning": f"Verdict {n}: rated {score}.",
                "improvement_suggestions": [f"Suggestion {n}: add an example"],
            }
        )
