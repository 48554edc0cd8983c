"""The seeded percentile bootstrap every interval of the analysis uses (role gaps, trends,
evidence), so the same values always give the same interval.

The resamples are drawn as :func:`random.choices` draws them (``values[floor(random() * n)]``
from ``random.Random(seed)``), but vectorised: numpy's Mersenne Twister is started from the
state of ``random.Random(seed)``, which makes it yield the very same stream of doubles, so
every resample picks the same values as the pure-Python loop did. The interval's two
percentiles are the same bootstrap means, bit for bit: the means are first summed by numpy
(its rounding differs from :func:`statistics.fmean` by far less than a bound computed from
the values), and the means within that bound of each percentile are summed again exactly
(:func:`math.fsum`, as ``fmean`` does) to pick the percentile.
"""

from __future__ import annotations

import math
import random
import sys
import zlib
from collections.abc import Iterator, Sequence
from typing import Any

__all__ = ["BOOTSTRAP_SAMPLES", "bootstrap_ci", "stat_seed"]

BOOTSTRAP_SAMPLES = 2000
_CHUNK = 1 << 20  # resampled indices drawn at once
_KEEP = 1 << 22  # at most this many kept for the exact sums (16 MB)
_EPS = sys.float_info.epsilon


def stat_seed(*names: object) -> int:
    """A seed derived from names, so a comparison's interval and p-value are reproducible."""
    return zlib.crc32("\x1f".join("" if n is None else str(n) for n in names).encode())


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
    if samples < 1:
        raise ValueError("bootstrap_ci needs at least one resample")
    ranks = (int(0.025 * samples), min(samples - 1, int(0.975 * samples)))
    return _Resampling(diffs, seed, samples).order_statistics(ranks)


class _Resampling:
    """The bootstrap means of one call, and their exact order statistics."""

    def __init__(self, diffs: Sequence[float], seed: int, samples: int) -> None:
        import numpy as np

        self.values = np.asarray(diffs, dtype=np.float64)
        self.n = n = len(self.values)
        self.samples = samples
        self.state = random.Random(seed).getstate()
        self.means = np.empty(samples, dtype=np.float64)
        # the indices are kept for the exact sums when they are few (else drawn again)
        self.kept: list[tuple[int, Any]] | None = [] if samples * n <= _KEEP else None
        for start, idx in self._resamples(samples):
            self.means[start : start + len(idx)] = self.values[idx].sum(axis=1) / n
            if self.kept is not None:
                self.kept.append((start, idx))

    def _resamples(self, samples: int) -> Iterator[tuple[int, Any]]:
        """The resamples' indices, a block of rows at a time: (first row, indices[rows, n])."""
        import numpy as np

        gen = _generator(self.state)
        n = self.n
        index_type = np.int32 if n < 2**31 else np.intp
        rows = max(1, _CHUNK // n)
        for start in range(0, samples, rows):
            count = min(rows, samples - start)
            # random.choices: population[floor(random() * n)], n as a float
            draws = gen.random(count * n)
            draws *= float(n)
            yield start, draws.astype(index_type).reshape(count, n)

    def order_statistics(self, ranks: tuple[int, int]) -> tuple[float, float]:
        """The ``ranks``-th smallest means, exactly as ``statistics.fmean`` gives them.

        numpy's sums differ from the exactly rounded ones by at most ``bound``; the k-th
        smallest exact mean is then the (k - below)-th smallest exact mean among the
        resamples whose numpy mean lies within 2 * bound of the k-th smallest numpy mean,
        where ``below`` counts those under that band. Integers small enough are summed
        exactly by numpy (no band to recompute).
        """
        import numpy as np

        values, means, n = self.values, self.means, self.n
        top = float(np.max(np.abs(values)))
        order = np.sort(means)
        if bool(np.all(values == np.floor(values))) and top * n < 2.0**52:
            return float(order[ranks[0]]), float(order[ranks[1]])
        bound = 4.0 * (n + 2) * _EPS * top
        bands: list[tuple[int, Any]] = []
        for k in ranks:
            v = order[k]
            below = int(np.count_nonzero(means < v - 2 * bound))
            bands.append((k - below, np.flatnonzero(np.abs(means - v) <= 2 * bound)))
        wanted = np.union1d(bands[0][1], bands[1][1])
        exact: dict[int, float] = {}
        blocks = self.kept if self.kept is not None else self._resamples(int(wanted[-1]) + 1)
        for start, idx in blocks:
            for row in wanted[(wanted >= start) & (wanted < start + len(idx))].tolist():
                exact[row] = math.fsum(values[idx[row - start]].tolist()) / n
        low, high = (sorted(exact[r] for r in band.tolist())[at] for at, band in bands)
        return low, high


def _generator(state: tuple[Any, ...]) -> Any:
    """A numpy generator yielding the same doubles as a ``random.Random`` in ``state``."""
    import numpy as np

    words = state[1]  # 624 words of the Mersenne Twister, then the position
    bits = np.random.MT19937()
    bits.state = {
        "bit_generator": "MT19937",
        "state": {"key": np.array(words[:624], dtype=np.uint32), "pos": words[624]},
    }
    return np.random.Generator(bits)
