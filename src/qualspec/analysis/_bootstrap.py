"""The seeded percentile bootstrap every interval of the analysis uses (role gaps, trends,
evidence), so the same values always give the same interval."""

from __future__ import annotations

import random
import statistics
from collections.abc import Sequence

__all__ = ["BOOTSTRAP_SAMPLES", "bootstrap_ci"]

BOOTSTRAP_SAMPLES = 2000


def bootstrap_ci(
    diffs: Sequence[float], seed: int, samples: int = BOOTSTRAP_SAMPLES
) -> tuple[float, float]:
    """95% percentile bootstrap interval of the mean of ``diffs`` (seeded, reproducible).

    Example:
        >>> bootstrap_ci([1.0, 1.0, 1.0], seed=0)
        (1.0, 1.0)
    """
    if not diffs:
        raise ValueError("bootstrap_ci needs at least one value")
    if len(diffs) == 1:
        return diffs[0], diffs[0]
    rng = random.Random(seed)
    n = len(diffs)
    means = sorted(statistics.fmean(rng.choices(diffs, k=n)) for _ in range(samples))
    low = means[int(0.025 * samples)]
    high = means[min(samples - 1, int(0.975 * samples))]
    return low, high
