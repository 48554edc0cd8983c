"""What the top of a run's page sums up: per candidate (pass rate, score, spread, cost,
tokens, latency) and the criteria and checks that failed most, from a :class:`RunIndex`.

Intervals: a pass rate's is Wilson's (95%), a mean score's the normal approximation (95%;
cheap at any size, where a bootstrap over 100,000 answers is not).
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from collections.abc import Sequence
from typing import Any

from qualspec.analysis import CHECKS_EVALUATOR
from qualspec.web._explore import Answer, RunIndex

__all__ = ["candidate_table", "failing_aspects"]


def failing_aspects(index: RunIndex, limit: int = 12) -> list[dict[str, Any]]:
    """The criteria and checks that failed most: evaluator, criterion, failed, judged,
    their share, and whether it is a check; most failures first."""
    judged: Counter[tuple[str, str]] = Counter()
    failed: Counter[tuple[str, str]] = Counter()
    for a in index.answers:
        for j in a.judgments:
            if j.passed is None:
                continue
            key = (j.evaluator, j.criterion)
            judged[key] += 1
            if j.passed is False:
                failed[key] += 1
    ranked = sorted(failed, key=lambda k: (-failed[k], -failed[k] / judged[k], k))
    return [
        {
            "evaluator": k[0],
            "criterion": k[1],
            "check": k[0] == CHECKS_EVALUATOR,
            "failed": failed[k],
            "judged": judged[k],
            "share": failed[k] / judged[k],
        }
        for k in ranked[:limit]
    ]


def candidate_table(index: RunIndex) -> list[dict[str, Any]]:
    """Per candidate: cells passed of those with a verdict (with a 95% Wilson
    interval), answers, errors, mean answer score (with a 95% normal interval) and
    standard deviation, cost, tokens and latency (median, 95th percentile)."""
    cells: dict[str, list[bool]] = {}
    for key, cell in index.verdicts.cells.items():
        if cell.passed is not None:
            cells.setdefault(key[3], []).append(cell.passed)
    grouped: dict[str, list[Answer]] = {}
    for a in index.answers:
        grouped.setdefault(a.record.candidate, []).append(a)
    out = []
    for name, answers in grouped.items():
        verdicts = cells.get(name, [])
        scale = 10 if any(a.scale == 10 and a.score is not None for a in answers) else 100
        scores = [a.score for a in answers if a.score is not None and a.scale == scale]
        records = [a.record for a in answers]
        paid = [r for r in records if not r.cached and r.error is None]
        costs = [r.cost_usd for r in records if not r.cached]
        latencies = sorted(r.latency_s for r in paid if r.latency_s is not None)
        out.append(
            {
                "candidate": name,
                "cells": len(verdicts),
                "passed": sum(verdicts),
                "rate": sum(verdicts) / len(verdicts) if verdicts else None,
                "rate_ci": _wilson(sum(verdicts), len(verdicts)),
                "answers": len(answers),
                "errors": sum(1 for a in answers if a.record.error is not None),
                "failing": sum(1 for a in answers if a.passed is False),
                "scored": len(scores),
                "scale": scale,
                "mean": statistics.fmean(scores) if scores else None,
                "mean_ci": _normal_ci(scores),
                "sd": statistics.stdev(scores) if len(scores) > 1 else None,
                "cost": None if None in costs else sum(c for c in costs if c is not None),
                "tokens_in": sum(r.input_tokens or 0 for r in records),
                "tokens_out": sum(r.output_tokens or 0 for r in records),
                "latency_median": statistics.median(latencies) if latencies else None,
                "latency_p95": _percentile(latencies, 0.95),
                "latency_n": len(latencies),
            }
        )
    return out


def _wilson(k: int, n: int) -> tuple[float, float] | None:
    if n == 0:
        return None
    z = 1.959964
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def _normal_ci(values: Sequence[float]) -> tuple[float, float] | None:
    if len(values) < 2:
        return None
    mean = statistics.fmean(values)
    half = 1.959964 * statistics.stdev(values) / math.sqrt(len(values))
    return mean - half, mean + half


def _percentile(values: Sequence[float], q: float) -> float | None:
    if not values:
        return None
    return values[min(len(values) - 1, math.ceil(q * len(values)) - 1)]
