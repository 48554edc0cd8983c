"""How much data a claim of the temperature and role analysis needs (one place for all).

A claim the data cannot carry is not printed as a finding:

* a **role gap** gets a 95% interval, and can be a finding ("a outperforms b"), from
  :data:`MIN_GAP_PAIRS` paired scores; with fewer it is shown with its n and no interval.
  A gap is a finding when its interval excludes 0. "consistently ... (every candidate)"
  needs two candidates or more, each with a gap that is a finding, all the same way.
* a **temperature comparison** (a cell's optimal temperature and sensitivity, a candidate's
  recommended temperature, "degrades", "holds its score", "more temperature-sensitive")
  uses only the temperatures with at least :data:`MIN_TEMPERATURE_SCORES` scored answers
  (in the cell for a cell's metrics, over the candidate's cells for a candidate's), and
  needs two such temperatures. "degrades" needs, besides the drop of
  :data:`~qualspec.analysis._run_analysis.DEGRADE_POINTS`, a 95% interval of the drop that
  excludes 0.
* nothing computed from judge scores is a finding when a judge of the run failed its
  calibration (its scores do not tell a good answer from a bad one): the analysis says
  :data:`NOT_MEANINGFUL` instead.
"""

from __future__ import annotations

import random
import statistics
from collections.abc import Mapping, Sequence
from typing import Any

from qualspec.analysis._bootstrap import bootstrap_ci

__all__ = [
    "MIN_GAP_PAIRS",
    "MIN_TEMPERATURE_SCORES",
    "NOT_MEANINGFUL",
    "failed_calibration",
    "mean_interval",
    "difference_interval",
]

MIN_GAP_PAIRS = 5
"""Paired scores a role gap needs for an interval (and to be a finding)."""
MIN_TEMPERATURE_SCORES = 3
"""Scored answers a temperature needs to enter a comparison across temperatures."""
NOT_MEANINGFUL = "not meaningful: judge failed calibration"


def failed_calibration(metadata: Mapping[str, Any], evaluators: set[str]) -> tuple[str, ...]:
    """The run's judges that failed calibration and scored answers of the run
    (``metadata["judge_calibration"]``, by evaluator name), each as
    ``local/smollm2, separation 0.00``."""
    found = metadata.get("judge_calibration")
    if not isinstance(found, Mapping):
        return ()
    out: list[str] = []
    for name, measured in found.items():
        if not isinstance(measured, Mapping) or measured.get("meaningful") is not False:
            continue
        if name in evaluators:
            judge = measured.get("judge") or name
            separation = measured.get("separation")
            how = f", separation {separation:.2f}" if isinstance(separation, int | float) else ""
            out.append(f"{judge}{how}")
    return tuple(out)


def mean_interval(values: Sequence[float], seed: int) -> tuple[float, float] | None:
    """95% bootstrap interval of the mean of ``values``; None with fewer than two values
    (one value has no interval)."""
    if len(values) < 2:
        return None
    return bootstrap_ci(sorted(values), seed)


def difference_interval(
    a: Sequence[float], b: Sequence[float], seed: int, samples: int = 2000
) -> tuple[float, float] | None:
    """95% bootstrap interval of ``mean(b) - mean(a)`` for two independent samples (each
    resampled on its own, seeded); None when either has fewer than two values."""
    if len(a) < 2 or len(b) < 2:
        return None
    rng = random.Random(seed)
    xs, ys = sorted(a), sorted(b)
    diffs = sorted(
        statistics.fmean(rng.choices(ys, k=len(ys))) - statistics.fmean(rng.choices(xs, k=len(xs)))
        for _ in range(samples)
    )
    return diffs[int(0.025 * samples)], diffs[min(samples - 1, int(0.975 * samples))]
