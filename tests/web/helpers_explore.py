"""A run written straight to a store for the run page's tests: known failures, each with a
known cause, and prompts recorded as the engine records them (by prompt version)."""

from __future__ import annotations

from datetime import UTC, datetime
from itertools import product
from typing import Any

from qualspec.store import JudgmentRecord, ResponseRecord, Store

THRESHOLD = 7.0
CANDIDATES = ("alpha", "beta")
ROLES = ("naive", "expert")
TEMPERATURES = (0.0, 1.0)
RUNS = 2
SYSTEM = "You are a careful geography tutor."
PREAMBLES = {"naive": "I am new to this.", "expert": "I teach geography."}
PROMPT = "What is the capital of France?"
CHECK = "icontains paris"


def scores_for(candidate: str, role: str, temperature: float, run_index: int) -> dict[str, float]:
    """The judge's scores of one answer (clarity, accuracy).

    * alpha, naive, T 1: clarity 4, accuracy 9 (mean 6.5 < 7: FAIL on the score);
    * alpha, expert: T 0 at 7.5 and T 1 at 6.5 (the row's mean is 7, and it FAILs at 1);
    * beta: every criterion 9 (its T 1 answers fail the check instead: see ``text_for``).
    """
    if candidate == "alpha" and role == "naive" and temperature == 1.0:
        return {"clarity": 4.0, "accuracy": 9.0}
    if candidate == "alpha" and role == "expert":
        return (
            {"clarity": 7.5, "accuracy": 7.5}
            if temperature == 0.0
            else {"clarity": 6.5, "accuracy": 6.5}
        )
    if candidate == "alpha":
        return {"clarity": 8.0, "accuracy": 8.0}
    return {"clarity": 9.0, "accuracy": 9.0}


def text_for(candidate: str, role: str, temperature: float, run_index: int) -> str:
    """beta at T 1 forgets the city (its check fails although every criterion is 9)."""
    if candidate == "beta" and temperature == 1.0:
        return f"It is a lovely city on the Seine (beta {role} run {run_index + 1})."
    return f"The capital is Paris ({candidate} {role} T {temperature:g} run {run_index + 1})."


def seed_explore_run(db: str, *, inputs: int = 0, suite: str = "Capitals") -> str:
    """Write the run (2 candidates x 2 roles x 2 temperatures x 2 runs of scenario
    ``capital``; with ``inputs`` > 0, also ``inputs`` rows of scenario ``rows``); returns
    its id."""
    when = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
    scenarios = {"capital": [None]}
    if inputs:
        scenarios["rows"] = [f"row{i:05d}" for i in range(inputs)]
    meta: dict[str, Any] = {
        "judge": {"model": "fake/judge", "threshold": THRESHOLD},
        "aggregation": "mean_with_variance",
        "dimensions": {
            "candidates": list(CANDIDATES),
            "roles": list(ROLES),
            "scenarios": list(scenarios),
            "temperatures": list(TEMPERATURES),
            "runs": RUNS,
            "inputs": {"rows": scenarios["rows"]} if inputs else {},
        },
    }
    with Store.open(db) as store:
        run_id = store.create_run(suite, "h", meta)
        parts = [("system_prompt:candidate:alpha", SYSTEM), ("scenario_prompt:capital", PROMPT)]
        parts += [("scenario_prompt:rows", "Describe {name}.")]
        parts += [(f"preamble:{r}", t) for r, t in PREAMBLES.items()]
        ids = dict(zip(parts, store.prompt_versions_many(parts), strict=True))
        responses: list[ResponseRecord] = []
        judgments: list[JudgmentRecord] = []
        cells = [
            (scenario, input_id, role, candidate, t, run_index)
            for scenario, rows in scenarios.items()
            for input_id, role, candidate, t, run_index in product(
                rows, ROLES, CANDIDATES, TEMPERATURES, range(RUNS)
            )
        ]
        for scenario, input_id, role, candidate, t, run_index in cells:
            key = f"{scenario}|{input_id}|{role}|{candidate}|{t:g}|{run_index}"
            prompt = next(p for p in parts if p[0] == f"scenario_prompt:{scenario}")
            versions = {
                f"preamble:{role}": ids[(f"preamble:{role}", PREAMBLES[role])],
                f"scenario_prompt:{scenario}": ids[prompt],
            }
            if candidate == "alpha":
                versions["system_prompt:candidate:alpha"] = ids[parts[0]]
            text = text_for(candidate, role, t, run_index)
            responses.append(
                ResponseRecord(
                    key=key,
                    candidate=candidate,
                    role=role,
                    scenario=scenario,
                    input_id=input_id,
                    temperature=t,
                    effective_temperature=t,
                    run_index=run_index,
                    provider="fake",
                    model=f"model-{candidate}",
                    text=text,
                    finish_reason="stop",
                    input_tokens=20,
                    output_tokens=12,
                    latency_s=0.25 + 0.01 * run_index,
                    cost_usd=0.001,
                    prompt_versions=versions,
                    created_at=when,
                )
            )
            for criterion, score in scores_for(candidate, role, t, run_index).items():
                judgments.append(
                    JudgmentRecord(
                        response_key=key,
                        criterion=criterion,
                        judge_key=f"j-{key}-{criterion}",
                        judge_model="fake/judge",
                        threshold=THRESHOLD,
                        score=score,
                        passed=score >= THRESHOLD,
                        reasoning=f"{criterion} rated {score:g}: judged by the book",
                        created_at=when,
                    )
                )
            ok = "paris" in text.lower()
            judgments.append(
                JudgmentRecord(
                    response_key=key,
                    criterion=CHECK,
                    judge_key=f"c-{key}",
                    judge_model=None,
                    threshold=None,
                    score=10.0 if ok else 0.0,
                    passed=ok,
                    reasoning="found 'paris'" if ok else "'paris' not found in the answer",
                    evaluator="expect",
                    created_at=when,
                )
            )
        store.record_responses(run_id, responses)
        store.record_judgments(run_id, judgments)
        store.finish_run(run_id, "finished")
    return run_id
