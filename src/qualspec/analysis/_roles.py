"""Role gaps: per candidate, how much better one role's answers score than another's.

Answers of two roles are **paired** when they share candidate, scenario, input, temperature
and run index. A gap is the mean over pairs of ``score(role_a) - score(role_b)`` (roles in
suite order, ``role_a`` first); its 95% confidence interval is the 2.5th and 97.5th
percentiles of :data:`BOOTSTRAP_SAMPLES` bootstrap means (pairs resampled with replacement)
from a generator seeded by the gap's names (the differences sorted first), so the same run
always gives the same interval; a gap of fewer than
:data:`~qualspec.analysis._evidence.MIN_GAP_PAIRS` pairs has no interval, and only a gap
whose interval excludes 0 is a **finding**.
The criteria of a gap are the per-criterion gaps over the pairs where both answers scored
it, largest ``|gap|`` first. One gap per candidate over all scenarios (``scenario=None``),
and one per scenario when the run has several.
"""

from __future__ import annotations

import statistics
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations

from qualspec.analysis._answers import Answer
from qualspec.analysis._bootstrap import BOOTSTRAP_SAMPLES, bootstrap_ci
from qualspec.analysis._evidence import MIN_GAP_PAIRS

__all__ = ["BOOTSTRAP_SAMPLES", "RoleGap", "bootstrap_ci", "role_gaps"]


@dataclass(frozen=True, slots=True)
class RoleGap:
    """Per candidate (and scenario, or None = all scenarios): role_a minus role_b."""

    candidate: str
    scenario: str | None
    role_a: str
    role_b: str
    gap: float  # mean score of role_a minus role_b
    # 95% bootstrap CI (seeded, reproducible); None with fewer than MIN_GAP_PAIRS pairs
    ci_low: float | None
    ci_high: float | None
    n: int  # paired observations
    criteria: tuple[tuple[str, float], ...]  # criteria ordered by |gap|, largest first
    # a finding: enough pairs, an interval that excludes 0, and a judge that passed
    # calibration (see qualspec.analysis._evidence)
    finding: bool = False


def _seed(*names: str | None) -> int:
    return zlib.crc32("\x1f".join(n or "" for n in names).encode())


_PairKey = tuple[str, str | None, float | None, int]


def _gap(
    candidate: str,
    scenario: str | None,
    role_a: str,
    role_b: str,
    a: dict[_PairKey, Answer],
    b: dict[_PairKey, Answer],
) -> RoleGap | None:
    pairs = [(a[k], b[k]) for k in a if k in b]
    diffs = [x.score - y.score for x, y in pairs if x.score is not None and y.score is not None]
    if not diffs:
        return None
    # sorted: the interval depends on the values only, not on the order records were stored
    low: float | None = None
    high: float | None = None
    if len(diffs) >= MIN_GAP_PAIRS:  # fewer: no interval (one value is not an interval)
        low, high = bootstrap_ci(sorted(diffs), _seed(candidate, scenario, role_a, role_b))
    per_criterion: dict[str, list[float]] = {}
    for x, y in pairs:
        for name, score in x.criteria.items():
            other = y.criteria.get(name)
            if other is not None:
                per_criterion.setdefault(name, []).append(score - other)
    criteria = sorted(
        ((name, statistics.fmean(values)) for name, values in per_criterion.items()),
        key=lambda item: -abs(item[1]),
    )
    return RoleGap(
        candidate=candidate,
        scenario=scenario,
        role_a=role_a,
        role_b=role_b,
        gap=statistics.fmean(diffs),
        ci_low=low,
        ci_high=high,
        n=len(diffs),
        criteria=tuple(criteria),
        finding=low is not None and high is not None and (low > 0 or high < 0),
    )


def role_gaps(
    answers: Sequence[Answer],
    roles: Sequence[str],
    candidates: Sequence[str],
    scenarios: Sequence[str],
) -> list[RoleGap]:
    """Every role gap of a run (see the module docstring); empty with fewer than two roles.

    Args:
        answers: The run's answers.
        roles, candidates, scenarios: The names in suite order.
    """
    if len(roles) < 2:
        return []
    index: dict[tuple[str, str, str | None], dict[_PairKey, Answer]] = {}
    for ans in answers:
        r = ans.response
        if r.role is None:
            continue
        key = (r.scenario, r.input_id, r.temperature, r.run_index)
        index.setdefault((r.candidate, r.role, None), {})[key] = ans
        index.setdefault((r.candidate, r.role, r.scenario), {})[key] = ans
    scopes: list[str | None] = [None, *scenarios] if len(scenarios) > 1 else [None]
    out: list[RoleGap] = []
    for candidate in candidates:
        for scenario in scopes:
            for role_a, role_b in combinations(roles, 2):
                found = _gap(
                    candidate,
                    scenario,
                    role_a,
                    role_b,
                    index.get((candidate, role_a, scenario), {}),
                    index.get((candidate, role_b, scenario), {}),
                )
                if found is not None:
                    out.append(found)
    return out
