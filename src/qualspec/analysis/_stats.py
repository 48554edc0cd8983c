"""Paired comparison of two samples: is B better than A, and by how much?

The two samples are **paired**: ``a[i]`` and ``b[i]`` measure the same thing (the same
candidate, input and field) before and after a change. On the differences ``d = b - a``:

* **difference**: the mean of ``d``;
* **95% confidence interval**: the percentile bootstrap of the mean of ``d``
  (:func:`~qualspec.analysis._bootstrap.bootstrap_ci`, the one the role gaps use), seeded, so
  the same data always give the same interval;
* **p-value**: a paired permutation (sign-flip) test of "no difference": under it each
  ``d[i]`` is as likely ``+d[i]`` as ``-d[i]``; p is the share of sign assignments whose
  ``|mean|`` is at least the observed one. Exact (every assignment) for at most
  :data:`EXACT_LIMIT` pairs, else :data:`PERMUTATIONS` seeded random assignments
  (``(hits + 1) / (permutations + 1)``, never 0);
* **effect size**: Cohen's dz, ``mean(d) / sd(d)`` (None when ``sd(d)`` is 0), labelled
  negligible (< 0.2), small (< 0.5), medium (< 0.8) or large;
* **verdict**: ``improved`` or ``regressed`` when ``p < alpha`` (0.05) **and** the
  interval excludes 0, else ``no detectable change``.

With few pairs nothing can be significant: the exact test's smallest p is ``2 / 2**n``
(5 pairs: 0.0625).
"""

from __future__ import annotations

import math
import random
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import compress, product
from typing import Literal

from qualspec.analysis._bootstrap import BOOTSTRAP_SAMPLES, bootstrap_ci, stat_seed

__all__ = [
    "ALPHA",
    "EXACT_LIMIT",
    "PERMUTATIONS",
    "PairedComparison",
    "StatVerdict",
    "compare_paired",
    "effect_label",
    "permutation_p_value",
    "stat_seed",
]

ALPHA = 0.05
EXACT_LIMIT = 12
"""Up to this many pairs the permutation test enumerates every sign assignment (2**n)."""
PERMUTATIONS = 5000
"""Random sign assignments of the Monte Carlo permutation test (more than EXACT_LIMIT pairs)."""

StatVerdict = Literal["improved", "regressed", "no detectable change"]
_EPS = 1e-9  # ties in |mean| count as "at least as extreme" despite rounding


@dataclass(frozen=True, slots=True)
class PairedComparison:
    """The comparison of paired samples A and B (see the module docstring).

    Attributes:
        n: Pairs compared.
        mean_a: Mean of A.
        mean_b: Mean of B.
        difference: Mean of ``b - a``.
        ci_low: Lower end of the 95% bootstrap interval of ``difference``.
        ci_high: Upper end.
        p_value: Two-sided paired permutation test p-value.
        exact: Whether the p-value enumerated every sign assignment.
        effect_size: Cohen's dz (None when every difference is the same).
        effect: The effect size's label.
        verdict: improved, regressed or no detectable change.
        alpha: The significance level used.
    """

    n: int
    mean_a: float
    mean_b: float
    difference: float
    ci_low: float
    ci_high: float
    p_value: float
    exact: bool
    effect_size: float | None
    effect: str
    verdict: StatVerdict
    alpha: float = ALPHA

    @property
    def significant(self) -> bool:
        """``p < alpha`` and the interval excludes 0."""
        return self.verdict != "no detectable change"


def permutation_p_value(
    diffs: Sequence[float], *, seed: int = 0, permutations: int = PERMUTATIONS
) -> tuple[float, bool]:
    """Two-sided sign-flip test of "mean difference 0": ``(p, exact)``.

    Example:
        >>> permutation_p_value([1.0, 2.0, 3.0])
        (0.25, True)
    """
    n = len(diffs)
    if n == 0:
        raise ValueError("permutation_p_value needs at least one difference")
    observed = abs(math.fsum(diffs))
    if observed <= _EPS:
        return 1.0, n <= EXACT_LIMIT
    if n <= EXACT_LIMIT:
        hits = sum(
            1
            for signs in product((1.0, -1.0), repeat=n)
            if abs(math.fsum(s * d for s, d in zip(signs, diffs, strict=True))) >= observed - _EPS
        )
        return hits / 2**n, True
    rng = random.Random(seed)
    total = math.fsum(diffs)
    at_least = observed - _EPS * max(1.0, observed)
    hits = 0
    width = f"0{n}b"
    chosen = "1".__eq__
    for _ in range(permutations):
        # n random bits: the differences whose sign flips (as text, read in C: fast)
        flips = format(rng.getrandbits(n), width)
        flipped = sum(compress(diffs, map(chosen, flips)))
        if abs(total - 2 * flipped) >= at_least:  # the flipped sum: total - 2 * flipped
            hits += 1
    return (hits + 1) / (permutations + 1), False


def effect_label(dz: float | None, difference: float) -> str:
    """Cohen's conventional label of an effect size (dz None: all differences equal)."""
    if dz is None:
        return "negligible" if abs(difference) <= _EPS else "large"
    size = abs(dz)
    if size < 0.2:
        return "negligible"
    if size < 0.5:
        return "small"
    if size < 0.8:
        return "medium"
    return "large"


def compare_paired(
    a: Sequence[float],
    b: Sequence[float],
    *,
    seed: int = 0,
    alpha: float = ALPHA,
    samples: int = BOOTSTRAP_SAMPLES,
    permutations: int = PERMUTATIONS,
) -> PairedComparison:
    """Compare paired samples ``a`` (before) and ``b`` (after).

    Args:
        a: The baseline values.
        b: The new values, ``b[i]`` paired with ``a[i]``.
        seed: Seeds the bootstrap and the Monte Carlo test (see :func:`stat_seed`).
        alpha: The significance level.
        samples: Bootstrap resamples.
        permutations: Random sign assignments when the test is not exact.

    Raises:
        ValueError: The samples are empty or of different lengths.

    Example:
        >>> result = compare_paired([70, 72, 68, 75], [80, 83, 79, 84])
        >>> result.difference, result.verdict
        (10.25, 'no detectable change')
    """
    if len(a) != len(b):
        raise ValueError(f"paired samples differ in length: {len(a)} and {len(b)}")
    if not a:
        raise ValueError("compare_paired needs at least one pair")
    diffs = [float(y) - float(x) for x, y in zip(a, b, strict=True)]
    difference = statistics.fmean(diffs)
    # sorted: the interval depends on the values only, not on the order they came in
    low, high = bootstrap_ci(sorted(diffs), seed, samples)
    p, exact = permutation_p_value(diffs, seed=seed, permutations=permutations)
    sd = statistics.stdev(diffs) if len(diffs) > 1 else 0.0
    dz = difference / sd if sd > _EPS else None
    verdict: StatVerdict = "no detectable change"
    if p < alpha and (low > 0 or high < 0):
        verdict = "improved" if difference > 0 else "regressed"
    return PairedComparison(
        n=len(diffs),
        mean_a=statistics.fmean(float(x) for x in a),
        mean_b=statistics.fmean(float(y) for y in b),
        difference=difference,
        ci_low=low,
        ci_high=high,
        p_value=p,
        exact=exact,
        effect_size=dz,
        effect=effect_label(dz, difference),
        verdict=verdict,
        alpha=alpha,
    )
