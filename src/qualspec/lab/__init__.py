"""The Lab: iterative answer refinement (generate, evaluate, feed back, keep the best).

Example::

    from qualspec.lab import generate_answer
    result = generate_answer(instruct="Explain quantum computing",
                             resp_format="3 paragraphs for high-school students",
                             eval_crit="Uses analogies, no jargon, one practical example",
                             iter_max=5, score_threshold=0.85)
    print(result.final_answer, result.final_score, result.success)
"""

from qualspec.lab._lab import (
    LAB_SUITE,
    IterationFn,
    agenerate_answer,
    best_iteration,
    generate_answer,
    request_from,
    run_lab,
)
from qualspec.lab._models import (
    DEFAULT_ITER_MAX,
    DEFAULT_MODEL,
    DEFAULT_THRESHOLD,
    MAX_ITER,
    GenerateAnswerRequest,
    GenerateAnswerResponse,
    IterationData,
    LabEvaluation,
)
from qualspec.lab._prompts import (
    EVALUATION_SCHEMA,
    evaluation_messages,
    feedback_text,
    generation_messages,
    read_evaluation,
)
from qualspec.lab._terms import BASE_URL_ENV, provider_named, reworded

__all__ = [
    "BASE_URL_ENV",
    "DEFAULT_ITER_MAX",
    "DEFAULT_MODEL",
    "DEFAULT_THRESHOLD",
    "EVALUATION_SCHEMA",
    "LAB_SUITE",
    "MAX_ITER",
    "GenerateAnswerRequest",
    "GenerateAnswerResponse",
    "IterationData",
    "IterationFn",
    "LabEvaluation",
    "agenerate_answer",
    "best_iteration",
    "evaluation_messages",
    "feedback_text",
    "generate_answer",
    "generation_messages",
    "provider_named",
    "read_evaluation",
    "request_from",
    "reworded",
    "run_lab",
]
