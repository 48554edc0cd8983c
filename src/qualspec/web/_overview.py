"""What the top of a run's page sums up: per candidate (pass rate, score, spread, cost,
tokens, latency) and the criteria and checks that failed most (:class:`Tally`, summed
one answer at a time).

Intervals: a pass rate's is Wilson's (95%), a mean score's the normal approximation (95%;
cheap at any size, where a bootstrap over 100,000 answers is not).
"""

from __future__ import annotations

import math
import statistics
from array import array
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from qualspec.analysis import CHECKS_EVALUATOR
from qualspec.web._answers import Answer

__all__ = ["Tally"]


@dataclass(slots=True)
class _Candidate:
    """What one candidate's overview line is summed from (scores and latencies as compact
    arrays: a run of any size is summed without its answers)."""

    answers: int = 0
    errors: int = 0
    failing: int = 0
    cells: int = 0
    passed: int = 0
    scores: dict[int, array[float]] = field(
        default_factory=lambda: {10: array("d"), 100: array("d")}
    )
    cost: float | None = 0.0
    tokens_in: int = 0
    tokens_out: int = 0
    latencies: array[float] = field(default_factory=lambda: array("d"))


class Tally:
    """The run page's overview (per candidate) and its most failed criteria and checks,
    summed one answer (:meth:`add`) and one cell (:meth:`add_cell`) at a time."""

    def __init__(self) -> None:
        self._candidates: dict[str, _Candidate] = {}
        self._judged: Counter[tuple[str, str]] = Counter()
        self._failed: Counter[tuple[str, str]] = Counter()

    def add(self, a: Answer) -> None:
        """One answer, with its own evaluation records."""
        r = a.record
        c = self._candidates.get(r.candidate)
        if c is None:
            c = self._candidates[r.candidate] = _Candidate()
        c.answers += 1
        c.errors += r.error is not None
        c.failing += a.passed is False
        if a.score is not None and a.scale in c.scores:
            c.scores[a.scale].append(a.score)
        if not r.cached:
            if r.cost_usd is None or c.cost is None:
                c.cost = None
            else:
                c.cost += r.cost_usd
            if r.error is None and r.latency_s is not None:
                c.latencies.append(r.latency_s)
        c.tokens_in += r.input_tokens or 0
        c.tokens_out += r.output_tokens or 0
        for j in a.judgments:
            if j.passed is None:
                continue
            key = (j.evaluator, j.criterion)
            self._judged[key] += 1
            if j.passed is False:
                self._failed[key] += 1

    def add_cell(self, candidate: str, passed: bool | None) -> None:
        """One cell's verdict (None: no verdict)."""
        if passed is None:
            return
        c = self._candidates.get(candidate)
        if c is None:
            c = self._candidates[candidate] = _Candidate()
        c.cells += 1
        c.passed += passed

    def failing_aspects(self, limit: int = 12) -> list[dict[str, Any]]:
        """The criteria and checks that failed most: evaluator, criterion, failed, judged,
        their share, and whether it is a check; most failures first."""
        judged, failed = self._judged, self._failed
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

    def candidate_table(self) -> list[dict[str, Any]]:
        """Per candidate: cells passed of those with a verdict (with a 95% Wilson
        interval), answers, errors, mean answer score (with a 95% normal interval) and
        standard deviation, cost, tokens and latency (median, 95th percentile)."""
        out = []
        for name, c in self._candidates.items():
            if not c.answers:
                continue
            scale = 10 if c.scores[10] else 100
            scores = c.scores[scale]
            latencies = sorted(c.latencies)
            out.append(
                {
                    "candidate": name,
                    "cells": c.cells,
                    "passed": c.passed,
                    "rate": c.passed / c.cells if c.cells else None,
                    "rate_ci": _wilson(c.passed, c.cells),
                    "answers": c.answers,
                    "errors": c.errors,
                    "failing": c.failing,
                    "scored": len(scores),
                    "scale": scale,
                    "mean": statistics.fmean(scores) if scores else None,
                    "mean_ci": _normal_ci(scores),
                    "sd": statistics.stdev(scores) if len(scores) > 1 else None,
                    "cost": c.cost,
                    "tokens_in": c.tokens_in,
                    "tokens_out": c.tokens_out,
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
