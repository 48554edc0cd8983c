"""The Lab's prompts (``prompts/lab_generate.txt``, ``lab_evaluate.txt``), its evaluation
schema, the feedback handed to the next attempt, and the strict reading of a verdict.

A verdict is read only from a JSON object (the provider's structured output, the whole
answer, or a fenced or embedded object): ``score`` a finite number from 0 to 1,
``meets_criteria`` a boolean, ``evaluation_reasoning`` a string, ``improvement_suggestions``
a list of strings (may be absent: none). Anything else is unscored with a reason; nothing
is clamped, rescaled or defaulted.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from qualspec.judges import truncate_text, verdict_object
from qualspec.lab._models import LabEvaluation
from qualspec.prompts import load_template, render_template
from qualspec.providers import Message

__all__ = [
    "EVALUATE_PROMPT_NAME",
    "EVALUATION_SCHEMA",
    "GENERATE_PROMPT_NAME",
    "evaluation_messages",
    "feedback_text",
    "generation_messages",
    "read_evaluation",
]

GENERATE_PROMPT_NAME = "lab_generate"
EVALUATE_PROMPT_NAME = "lab_evaluate"
MAX_ANSWER_CHARS = 8000  # of the answer shown to the evaluator
MAX_REASONING_CHARS = 2000
MAX_SUGGESTIONS = 10

EVALUATION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "score": {"type": "number", "minimum": 0, "maximum": 1},
        "meets_criteria": {"type": "boolean"},
        "evaluation_reasoning": {"type": "string"},
        "improvement_suggestions": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["score", "meets_criteria", "evaluation_reasoning", "improvement_suggestions"],
    "additionalProperties": False,
}


def _sections(name: str) -> tuple[str, str]:
    text = load_template(name)
    system, _, user = text.partition("[user]\n")
    return system.removeprefix("[system]\n").strip(), user.rstrip() + "\n"


def generation_messages(
    instruct: str, resp_format: str, feedback: str | None = None
) -> tuple[Message, ...]:
    """The generator's messages; ``feedback`` (from :func:`feedback_text`) on a retry.

    Example:
        >>> _, user = generation_messages("Say hi", "One word", "Rated 0.2 of 1")
        >>> "Feedback on your previous attempt" in user.content
        True
    """
    system, user = _sections(GENERATE_PROMPT_NAME)
    block = ""
    if feedback:
        block = (
            "\nFeedback on your previous attempt (write a new answer that addresses it):\n"
            f"<<<\n{feedback.strip()}\n>>>\n"
        )
    values = {"instruct": instruct, "resp_format": resp_format, "feedback_block": block}
    return Message("system", system), Message("user", render_template(user, values))


def evaluation_messages(
    instruct: str, resp_format: str, eval_crit: str, answer: str, retry_note: str | None = None
) -> tuple[Message, ...]:
    """The evaluator's messages for one answer."""
    system, user = _sections(EVALUATE_PROMPT_NAME)
    values = {
        "instruct": instruct,
        "resp_format": resp_format,
        "eval_crit": eval_crit,
        "answer": truncate_text(answer, MAX_ANSWER_CHARS),
    }
    content = render_template(user, values)
    if retry_note:
        content = f"{content}\n{retry_note.strip()}\n"
    return Message("system", system), Message("user", content)


def feedback_text(evaluation: LabEvaluation) -> str:
    """What the next attempt is told about this one.

    Example:
        >>> e = LabEvaluation(score=0.4, meets_criteria=False, evaluation_reasoning="Vague.",
        ...                   improvement_suggestions=["Add an example"])
        >>> print(feedback_text(e))
        Rated 0.4 of 1.0 (does not meet the criteria).
        Evaluation: Vague.
        Improvement suggestions:
        1. Add an example
    """
    meets = "meets" if evaluation.meets_criteria else "does not meet"
    lines = [
        f"Rated {evaluation.score:g} of 1.0 ({meets} the criteria).",
        f"Evaluation: {evaluation.evaluation_reasoning}",
    ]
    if evaluation.improvement_suggestions:
        lines.append("Improvement suggestions:")
        lines += [f"{i}. {s}" for i, s in enumerate(evaluation.improvement_suggestions, 1)]
    return "\n".join(lines)


def read_evaluation(text: str, structured: object) -> tuple[LabEvaluation | None, str | None]:
    """The verdict in an evaluator's answer, or None and the reason it could not be read.

    Example:
        >>> ok = '{"score": 0.9, "meets_criteria": true, "evaluation_reasoning": "ok"}'
        >>> read_evaluation(ok, None)[0].score
        0.9
        >>> read_evaluation('{"score": 8, "meets_criteria": true, "evaluation_reasoning": "ok"}',
        ...                 None)[1]
        'score 8 is outside 0-1'
    """
    obj = verdict_object(text, structured, key="score")
    if obj is None:
        return None, "no JSON object with a score key in the evaluator's answer"
    return _validated(obj)


def _validated(obj: Mapping[str, Any]) -> tuple[LabEvaluation | None, str | None]:
    score = obj.get("score")
    if isinstance(score, bool) or not isinstance(score, int | float):
        return None, f"score is not a number: {repr(score)[:40]}"
    if not math.isfinite(score):
        return None, "score is not a finite number"
    if not 0 <= score <= 1:
        return None, f"score {score:g} is outside 0-1"
    meets = obj.get("meets_criteria")
    if not isinstance(meets, bool):
        return None, f"meets_criteria is not true or false: {repr(meets)[:40]}"
    reasoning = obj.get("evaluation_reasoning")
    if not isinstance(reasoning, str) or not reasoning.strip():
        return None, "no evaluation_reasoning text"
    suggestions = obj.get("improvement_suggestions", [])
    if not isinstance(suggestions, list) or not all(isinstance(s, str) for s in suggestions):
        return None, "improvement_suggestions is not a list of strings"
    return (
        LabEvaluation(
            score=float(score),
            meets_criteria=meets,
            evaluation_reasoning=reasoning.strip()[:MAX_REASONING_CHARS],
            improvement_suggestions=[s.strip() for s in suggestions if s.strip()][:MAX_SUGGESTIONS],
        ),
        None,
    )
