"""The Lab's request, evaluation, iteration and result models (the seed's shapes).

They are pydantic models so that the web app's JSON API validates requests and documents
its answers with the very same classes the library returns.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "DEFAULT_ITER_MAX",
    "DEFAULT_MODEL",
    "DEFAULT_THRESHOLD",
    "GenerateAnswerRequest",
    "GenerateAnswerResponse",
    "IterationData",
    "LabEvaluation",
    "MAX_ITER",
]

DEFAULT_MODEL = "local/smollm2"
DEFAULT_ITER_MAX = 3
DEFAULT_THRESHOLD = 0.8
MAX_ITER = 10


class GenerateAnswerRequest(BaseModel):
    """What to generate, how it must look, what it is checked against, and the limits.

    Example::

        GenerateAnswerRequest(instruct="Explain quantum computing",
                              resp_format="3 short paragraphs", eval_crit="No jargon",
                              iter_max=2)
    """

    model_config = ConfigDict(extra="forbid")

    instruct: str = Field(..., min_length=1, description="The question or instruction")
    resp_format: str = Field(..., min_length=1, description="Desired response format")
    eval_crit: str = Field(..., min_length=1, description="Evaluation criteria")
    iter_max: int = Field(
        default=DEFAULT_ITER_MAX, ge=1, le=MAX_ITER, strict=True, description="Max iterations"
    )
    score_threshold: float = Field(
        default=DEFAULT_THRESHOLD,
        ge=0.0,
        le=1.0,
        strict=True,
        allow_inf_nan=False,
        description="Minimum score (0-1) to accept an answer",
    )
    model: str | None = Field(
        default=None, min_length=1, description="provider/model that writes the answers"
    )
    judge_model: str | None = Field(
        default=None, min_length=1, description="provider/model that evaluates them"
    )


class LabEvaluation(BaseModel):
    """The evaluator's verdict on one answer, read strictly from its structured output."""

    score: float = Field(ge=0.0, le=1.0, description="How well the answer meets the criteria")
    meets_criteria: bool
    evaluation_reasoning: str
    improvement_suggestions: list[str] = Field(default_factory=list)


class IterationData(BaseModel):
    """One generate-then-evaluate round.

    ``evaluation`` is None when the evaluator's answer could not be read (``unscored_reason``
    says why; nothing is guessed) or its call failed (``error``).
    """

    iteration_number: int
    answer: str
    evaluation: LabEvaluation | None = None
    unscored_reason: str | None = None
    error: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = 0.0
    latency_s: float = 0.0


class GenerateAnswerResponse(BaseModel):
    """The Lab's result: the best answer (not the last), the whole history, and the costs.

    ``final_score`` is None when no answer could be scored. ``metadata`` holds ``run_id``,
    ``model``, ``judge_model``, ``threshold``, ``best_iteration``, ``calls``,
    ``input_tokens``, ``output_tokens``, ``cost_usd`` (None when a price is unknown) and
    ``latency_s`` (the sum over the calls).
    """

    final_answer: str
    iterations: list[IterationData]
    success: bool
    total_iterations: int
    final_score: float | None
    metadata: dict[str, Any] = Field(default_factory=dict)
