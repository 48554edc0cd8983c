"""Runs written straight to a store for the diff page's tests: two runs of suite
``Capitals`` whose changes are known, and one run of another suite.

From A to B (scenario ``capital``, temperature 0, 2 runs per cell, threshold 7):

* ``alpha``: clarity 8 -> 5 (mean 8 -> 6.5): ``new_fail`` on the score;
* ``beta``: every answer of B failed with HTTP 500: ``error`` (not "unscored");
* ``gamma``: scores stay 9 but B forgets Paris: ``new_fail`` on the check;
* ``delta``: 7.5 -> 9: ``improved``;
* ``epsilon``: 8 in both, but B's first answer failed with HTTP 500: ``unchanged``, the
  error named beside B's PASS.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from qualspec.store import JudgmentRecord, ResponseRecord, Store

THRESHOLD = 7.0
CHECK = "icontains paris"
HTTP_500 = "HTTP 500 from fake: internal server error (upstream exploded)"
CANDIDATES = ("alpha", "beta", "gamma", "delta", "epsilon")
HALF = "Paris (epsilon)."  # B: its first run an error, its second this

# candidate -> (clarity, accuracy, text or None for an error) in run A and run B
_A: dict[str, tuple[float, float, str | None]] = {
    "alpha": (8.0, 8.0, "Paris is the capital (alpha, A)."),
    "beta": (9.0, 9.0, "Paris, of course (beta, A)."),
    "gamma": (9.0, 9.0, "The capital is Paris (gamma, A)."),
    "delta": (7.5, 7.5, "Paris (delta, A)."),
    "epsilon": (8.0, 8.0, "Paris (epsilon)."),
}
_B: dict[str, tuple[float, float, str | None]] = {
    "alpha": (5.0, 8.0, "Paris, I think? (alpha, B)."),
    "beta": (0.0, 0.0, None),
    "gamma": (9.0, 9.0, "A lovely city on the Seine (gamma, B)."),
    "delta": (9.0, 9.0, "Paris, on the Seine (delta, B)."),
    "epsilon": (8.0, 8.0, HALF),
}


def _seed(
    store: Store, suite: str, plan: dict[str, tuple[float, float, str | None]], when: datetime
) -> str:
    meta: dict[str, Any] = {
        "judge": {"model": "fake/judge", "threshold": THRESHOLD},
        "aggregation": "mean_with_variance",
        "dimensions": {
            "candidates": list(plan),
            "roles": [],
            "scenarios": ["capital"],
            "temperatures": [0.0],
            "runs": 2,
            "inputs": {},
        },
    }
    run_id = store.create_run(suite, "h", meta)
    responses: list[ResponseRecord] = []
    judgments: list[JudgmentRecord] = []
    half = plan is _B
    for candidate, (clarity, accuracy, written) in plan.items():
        for run_index in range(2):
            text = None if half and written == HALF and run_index == 0 else written
            key = f"{run_id}|{candidate}|{run_index}"
            responses.append(
                ResponseRecord(
                    key=key,
                    candidate=candidate,
                    role=None,
                    scenario="capital",
                    input_id=None,
                    temperature=0.0,
                    effective_temperature=0.0,
                    run_index=run_index,
                    provider="fake",
                    model=f"model-{candidate}",
                    text=text,
                    error=HTTP_500 if text is None else None,
                    finish_reason="stop" if text is not None else None,
                    latency_s=0.2,
                    created_at=when,
                )
            )
            if text is None:
                continue
            for criterion, score in (("clarity", clarity), ("accuracy", accuracy)):
                judgments.append(
                    JudgmentRecord(
                        response_key=key,
                        criterion=criterion,
                        judge_key=f"j-{key}-{criterion}",
                        judge_model="fake/judge",
                        threshold=THRESHOLD,
                        score=score,
                        passed=score >= THRESHOLD,
                        reasoning=f"{criterion} rated {score:g}",
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


def seed_compare_runs(db: str) -> tuple[str, str, str]:
    """(run A, run B, a run of suite ``Other``), written in the order A, other, B."""
    when = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
    with Store.open(db) as store:
        a = _seed(store, "Capitals", _A, when)
        other = _seed(store, "Other", _A, when + timedelta(minutes=1))
        b = _seed(store, "Capitals", _B, when + timedelta(minutes=2))
    return a, b, other
