"""Constructed runs with field grades, as the reference field grader records them.

One ``field_grader`` record per graded candidate answer: ``score`` the weighted mean
accuracy, ``scores`` the accuracy per field, ``details`` of type ``field_grade`` (the shared
contract of issue 10), and the reference answer it was graded against as a response of kind
``reference``.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from qualspec.store import JudgmentRecord, ResponseRecord, RunRecord, RunSummary

CRITICAL = ("name", "industry")


def _band(score: float | None) -> str | None:
    if score is None:
        return None
    if score >= 90:
        return "Excellent"
    if score >= 80:
        return "Good"
    if score >= 70:
        return "Acceptable"
    return "Needs improvement"


class FieldRunBuilder:
    """Candidate answers with field accuracies; keys made up from the run and the cell."""

    def __init__(self, run_id: str = "r1", *, scenario: str = "company_profile") -> None:
        self.run_id = run_id
        self.scenario = scenario
        self.responses: list[ResponseRecord] = []
        self.judgments: list[JudgmentRecord] = []
        self._references: dict[str, str] = {}

    def _reference(self, input_id: str) -> str:
        key = self._references.get(input_id)
        if key is None:
            key = self._references[input_id] = f"{self.run_id}|ref|{input_id}"
            self.responses.append(self._response(key, "reference", input_id, "reference"))
        return key

    def _response(self, key: str, candidate: str, input_id: str, kind: str) -> ResponseRecord:
        return ResponseRecord(
            key=key,
            candidate=candidate,
            role=None,
            scenario=self.scenario,
            input_id=input_id,
            temperature=0.0,
            effective_temperature=0.0,
            run_index=0,
            provider="fake",
            model=f"{candidate}-model",
            text='{"name": "Acme"}',
            kind=kind,
        )

    def add(
        self,
        candidate: str,
        input_id: str,
        fields: dict[str, float | None],
        *,
        run_index: int = 0,
        flags: list[str] | None = None,
        threshold: float = 80.0,
    ) -> str:
        """One graded answer; returns its response key."""
        reference = self._reference(input_id)
        key = f"{self.run_id}|{candidate}|{input_id}|{run_index}"
        response = self._response(key, candidate, input_id, "candidate")
        response.run_index = run_index
        self.responses.append(response)
        weights = {f: 2.0 if f in CRITICAL else 1.0 for f in fields}
        scored = {f: v for f, v in fields.items() if v is not None}
        simple = sum(scored.values()) / len(scored) if scored else None
        weighted = (
            sum(v * weights[f] for f, v in scored.items()) / sum(weights[f] for f in scored)
            if scored
            else None
        )
        details: dict[str, Any] = {
            "type": "field_grade",
            "reference_key": reference,
            "reference_call_key": f"call-{reference}",
            "fields": {
                f: {
                    "accuracy": v,
                    "match": "exact" if v == 100 else "none" if not v else "partial",
                    "explanation": "constructed",
                    "confidence": 0.9,
                    "critical": f in CRITICAL,
                    "weight": weights[f],
                    "decided_by": "grader",
                }
                for f, v in fields.items()
            },
            "simple_mean": simple,
            "weighted_mean": weighted,
            "band": _band(weighted),
            "field_pass_rate": (
                sum(1 for v in scored.values() if v >= threshold) / len(scored) if scored else None
            ),
            "flags": list(flags or []),
            "reference_status": "unvalidated",
        }
        self.judgments.append(
            JudgmentRecord(
                response_key=key,
                criterion="fields",
                judge_key=f"fg|{key}",
                judge_model="fake/grader",
                threshold=threshold,
                score=weighted,
                passed=None if weighted is None else weighted >= threshold,
                evaluator="field_grader",
                scores=dict(fields),
                details=details,
            )
        )
        return key

    def run(self, **metadata: Any) -> RunRecord:
        summary = RunSummary(
            id=self.run_id,
            suite_name="profiles",
            suite_hash="h",
            status="finished",
            started_at=datetime(2026, 1, 1, tzinfo=UTC),
            finished_at=None,
            metadata=metadata,
        )
        return RunRecord(summary=summary, responses=self.responses, judgments=self.judgments)


COMPANY_INPUTS = ["acme", "bolt", "cyra", "dune", "eiko"]


def company_run(
    run_id: str, industry: float, founded: float = 90, models: tuple[str, ...] = ("gpt", "llama")
) -> RunRecord:
    """Each model on :data:`COMPANY_INPUTS`: ``name`` 100, ``industry`` from ``industry``
    up and ``founded_year`` from ``founded`` down (by one per input)."""
    builder = FieldRunBuilder(run_id)
    for candidate in models:
        for n, input_id in enumerate(COMPANY_INPUTS):
            builder.add(
                candidate,
                input_id,
                {"name": 100, "industry": industry + n, "founded_year": founded - n},
            )
    return builder.run()


def results_file(folder: Path, run: RunRecord) -> str:
    """Write ``run`` as its results JSON (``<run id>.json`` in ``folder``); its path."""
    from qualspec.report import run_to_dict, write_json_atomic

    path = folder / f"{run.summary.id}.json"
    write_json_atomic(path, run_to_dict(run))
    return str(path)
