"""The record of one evaluation: an evaluator's verdict on one aspect of a subject."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from qualspec.engine._evaluators import Evaluator, Subject, Verdict
from qualspec.store import JudgmentRecord

__all__ = ["judgment_record"]


def judgment_record(
    evaluator: Evaluator,
    subject: Subject,
    aspect: str,
    verdict: Verdict,
    *,
    blocked: str | None,
    judge_key: str,
    prompt_version: int | None,
    usage: Mapping[str, Any],
    served_by: str | None = None,
) -> JudgmentRecord:
    """What is stored of ``verdict``: no score or pass on an error (``blocked``: a
    dependency failed, nothing was called), a pass from the evaluator's threshold when
    the verdict gives a score only; ``served_by`` (the replica that answered its call) in
    its ``details``."""
    score = verdict.score
    passed = verdict.passed
    if passed is None and score is not None and evaluator.threshold is not None:
        passed = score >= evaluator.threshold
    error = verdict.error
    return JudgmentRecord(
        response_key=subject.key,
        criterion=aspect,
        judge_key=judge_key,
        judge_model=evaluator.model,
        threshold=evaluator.threshold,
        score=None if error else score,
        passed=None if error else passed,
        reasoning=verdict.reasoning,
        unscored_reason=(
            (blocked or f"judge call failed: {error}") if error else verdict.unscored_reason
        ),
        raw_text=verdict.raw_text,
        prompt_version=prompt_version,
        created_at=datetime.now(UTC),
        evaluator=evaluator.name,
        subject=None if subject.group is None else [i.key for i in subject.items],
        scores=verdict.scores,
        details=(
            verdict.details
            if served_by is None
            else {**(verdict.details or {}), "served_by": served_by}
        ),
        **usage,
    )
