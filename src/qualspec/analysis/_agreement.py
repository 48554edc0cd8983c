"""Agreement between raters (judges, or judges and people): Krippendorff's alpha with a
bootstrap interval, and pairwise exact and within-1 agreement.

Krippendorff's alpha (``1 - observed / expected disagreement``) handles any number of
raters and missing ratings; the point value is the maintained ``krippendorff`` package's.
Its 95% interval is a seeded percentile bootstrap over the items (the units rated): each
resample re-weights the items' coincidence matrices, so that a thousand resamples cost one
matrix product. ``interval`` suits 0-10 scores, ``nominal`` pass/fail. Below
:data:`TENTATIVE_ALPHA` (0.667) Krippendorff advises against even tentative conclusions.

Ratings are given raters x items, ``None`` (or NaN) where a rater gave none.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

__all__ = [
    "AGREEMENT_SAMPLES",
    "TENTATIVE_ALPHA",
    "AlphaResult",
    "Level",
    "PairAgreement",
    "alpha_with_interval",
    "krippendorff_alpha",
    "pairwise_agreement",
]

TENTATIVE_ALPHA = 0.667
"""Krippendorff's lowest alpha for tentative conclusions: a criterion below it is flagged."""
AGREEMENT_SAMPLES = 1000
"""Bootstrap resamples of an alpha's interval."""

Level = Literal["interval", "nominal"]
Ratings = Sequence[Sequence[float | None]]


@dataclass(frozen=True, slots=True)
class AlphaResult:
    """Krippendorff's alpha of some ratings, its 95% bootstrap interval and the items.

    ``alpha`` is None when it is undefined: fewer than two items rated twice, or no
    variation at all (every rating the same: nothing to agree or disagree on). ``n_items``
    counts the items with at least two ratings (the pairable ones).
    """

    level: Level
    alpha: float | None
    low: float | None
    high: float | None
    n_items: int

    @property
    def flagged(self) -> bool:
        """Whether alpha is below :data:`TENTATIVE_ALPHA`."""
        return self.alpha is not None and self.alpha < TENTATIVE_ALPHA

    def text(self) -> str:
        """``0.74 [0.61, 0.85], n=40`` (``n/a (...)`` when undefined)."""
        if self.alpha is None:
            why = "no variation" if self.n_items >= 2 else "too few items"
            return f"n/a ({why}), n={self.n_items}"
        ci = f" [{self.low:.2f}, {self.high:.2f}]" if self.low is not None else ""
        return f"{self.alpha:.2f}{ci}, n={self.n_items}"

    def as_dict(self) -> dict[str, Any]:
        """The results file's form."""
        return {
            "level": self.level,
            "alpha": None if self.alpha is None else round(self.alpha, 4),
            "ci_low": None if self.low is None else round(self.low, 4),
            "ci_high": None if self.high is None else round(self.high, 4),
            "n_items": self.n_items,
            "flagged": self.flagged,
        }


@dataclass(frozen=True, slots=True)
class PairAgreement:
    """How often two raters agree on the items both rated: exactly, and within 1 point."""

    a: str
    b: str
    n: int
    exact: float | None
    within_one: float | None

    def as_dict(self) -> dict[str, Any]:
        """The results file's form."""
        return {
            "a": self.a,
            "b": self.b,
            "n": self.n,
            "exact": None if self.exact is None else round(self.exact, 4),
            "within_one": None if self.within_one is None else round(self.within_one, 4),
        }


def _matrix(ratings: Ratings) -> Any:
    import numpy as np

    rows = [[math.nan if v is None else float(v) for v in row] for row in ratings]
    width = max((len(r) for r in rows), default=0)
    return np.array([r + [math.nan] * (width - len(r)) for r in rows], dtype=float)


def krippendorff_alpha(ratings: Ratings, level: Level = "interval") -> float | None:
    """Krippendorff's alpha of ``ratings`` (raters x items) by the ``krippendorff``
    package; None when undefined (fewer than two pairable values, or one value only).

    Example (Krippendorff 2011, "Computing Krippendorff's Alpha-Reliability", nominal):
        >>> n = None
        >>> round(krippendorff_alpha([
        ...     [1, 2, 3, 3, 2, 1, 4, 1, 2, n, n, n],
        ...     [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, n, 3],
        ...     [n, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, n],
        ...     [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, n]], "nominal"), 3)
        0.743
    """
    import krippendorff
    import numpy as np

    data = _matrix(ratings)
    if data.size == 0 or _pairable(data).sum() < 2:
        return None
    if len(np.unique(data[~np.isnan(data)])) < 2:
        return None  # every rating the same: nothing to disagree on
    value = float(krippendorff.alpha(reliability_data=data, level_of_measurement=level))
    return None if math.isnan(value) else value


def _pairable(data: Any) -> Any:
    """Per item: whether it has at least two ratings."""
    import numpy as np

    counts: Any = (~np.isnan(data)).sum(axis=0)
    return counts >= 2


def _coincidences(data: Any) -> tuple[Any, Any]:
    """Each pairable item's coincidence matrix (items x values x values, flattened) and
    the values' squared distances (interval) over the same value domain."""
    import numpy as np

    data = data[:, _pairable(data)]
    values = np.unique(data[~np.isnan(data)])
    index = {v: i for i, v in enumerate(values)}
    k = len(values)
    out = np.zeros((data.shape[1], k * k))
    for u in range(data.shape[1]):
        counts = np.zeros(k)
        for v in data[:, u]:
            if not np.isnan(v):
                counts[index[v]] += 1
        m = counts.sum()
        out[u] = ((np.outer(counts, counts) - np.diag(counts)) / (m - 1)).ravel()
    return out, values


def _alphas(coincidence: Any, delta: Any) -> Any:
    """Alpha of each row of summed coincidence matrices (NaN where undefined)."""
    import numpy as np

    k = int(round(math.sqrt(delta.size)))
    n_c = coincidence.reshape(-1, k, k).sum(axis=2)
    n = n_c.sum(axis=1)
    observed = coincidence @ delta.ravel()
    expected = np.einsum("bi,ij,bj->b", n_c, delta, n_c) / np.maximum(n - 1, 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(expected > 0, 1 - observed / expected, np.nan)


def alpha_with_interval(
    ratings: Ratings,
    level: Level = "interval",
    *,
    samples: int = AGREEMENT_SAMPLES,
    seed: int = 0,
) -> AlphaResult:
    """Krippendorff's alpha of ``ratings`` (raters x items, None: not rated) with a 95%
    percentile bootstrap interval over the items (seeded: the same ratings always give the
    same interval) and the number of pairable items.

    Example:
        >>> alpha_with_interval([[1, 2, 3, 4], [1, 2, 3, 4]]).alpha
        1.0
    """
    import numpy as np

    data = _matrix(ratings)
    n_items = int(_pairable(data).sum()) if data.size else 0
    alpha = krippendorff_alpha(ratings, level)
    if alpha is None:
        return AlphaResult(level, None, None, None, n_items)
    if n_items < 2 or samples <= 0:
        return AlphaResult(level, alpha, None, None, n_items)
    units, values = _coincidences(data)
    if level == "interval":
        delta = (values[:, None] - values[None, :]) ** 2
    else:
        delta = (values[:, None] != values[None, :]).astype(float)
    rng = np.random.default_rng(seed)
    weights = rng.multinomial(n_items, np.full(n_items, 1.0 / n_items), size=samples)
    boot = _alphas(weights @ units, delta)
    boot = boot[~np.isnan(boot)]
    if boot.size == 0:
        return AlphaResult(level, alpha, None, None, n_items)
    low, high = np.percentile(boot, [2.5, 97.5])
    return AlphaResult(level, alpha, float(low), float(high), n_items)


def pairwise_agreement(names: Sequence[str], ratings: Ratings) -> list[PairAgreement]:
    """For each pair of raters (``names`` in order, parallel to ``ratings``): the items
    both rated, and the share of them rated exactly alike and within 1 point.

    Example:
        >>> [p.as_dict() for p in pairwise_agreement(["a", "b"], [[7, 8, 3], [7, 6, None]])]
        [{'a': 'a', 'b': 'b', 'n': 2, 'exact': 0.5, 'within_one': 0.5}]
    """
    out: list[PairAgreement] = []
    for (i, a), (j, b) in itertools.combinations(enumerate(names), 2):
        both = [
            (x, y)
            for x, y in zip(ratings[i], ratings[j], strict=False)
            if x is not None and y is not None and not (math.isnan(x) or math.isnan(y))
        ]
        if not both:
            out.append(PairAgreement(a, b, 0, None, None))
            continue
        exact = sum(x == y for x, y in both) / len(both)
        near = sum(abs(x - y) <= 1 for x, y in both) / len(both)
        out.append(PairAgreement(a, b, len(both), exact, near))
    return out
