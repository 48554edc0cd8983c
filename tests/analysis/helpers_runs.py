"""Constructed runs for the analysis tests: responses with known scores and checks."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from qualspec.store import JudgmentRecord, ResponseRecord, RunRecord, RunSummary


class RunBuilder:
    """Responses with per-criterion scores; keys made up from the cell and run."""

    def __init__(self) -> None:
        self.responses: list[ResponseRecord] = []
        self.judgments: list[JudgmentRecord] = []

    def add(
        self,
        temperature: float | None,
        scores: dict[str, float | None],
        *,
        candidate: str = "gpt",
        role: str | None = None,
        scenario: str = "s",
        run_index: int = 0,
        text: str = "an answer",
        checks: dict[str, bool] | None = None,
    ) -> None:
        key = f"{candidate}|{role}|{scenario}|{temperature}|{run_index}"
        self.responses.append(
            ResponseRecord(
                key=key,
                candidate=candidate,
                role=role,
                scenario=scenario,
                input_id=None,
                temperature=temperature,  # type: ignore[arg-type]  # None: provider default
                effective_temperature=temperature,
                run_index=run_index,
                provider="fake",
                model="m",
                text=text,
            )
        )
        for criterion, score in scores.items():
            self.judgments.append(
                JudgmentRecord(
                    response_key=key,
                    criterion=criterion,
                    judge_key=f"j|{key}|{criterion}",
                    judge_model="judge",
                    threshold=7.0,
                    score=score,
                    passed=None if score is None else score >= 7.0,
                )
            )
        for label, ok in (checks or {}).items():
            self.judgments.append(
                JudgmentRecord(
                    response_key=key,
                    criterion=label,
                    judge_key=f"x|{key}|{label}",
                    judge_model=None,
                    threshold=None,
                    score=10.0 if ok else 0.0,
                    passed=ok,
                    evaluator="expect",
                )
            )

    def run(self, **metadata: Any) -> RunRecord:
        summary = RunSummary(
            id="r1",
            suite_name="suite",
            suite_hash="h",
            status="finished",
            started_at=datetime(2026, 1, 1, tzinfo=UTC),
            finished_at=None,
            metadata=metadata,
        )
        return RunRecord(summary=summary, responses=self.responses, judgments=self.judgments)
