"""The plain sentences of a run's analysis (``RunAnalysis.observations``), each generated
from the data, with the evidence behind it."""

from __future__ import annotations

import copy
import dataclasses
import statistics
from collections.abc import Sequence
from typing import Any

from qualspec.analysis._answers import Answer, temperature_order
from qualspec.analysis._bootstrap import stat_seed
from qualspec.analysis._evidence import MIN_GAP_PAIRS, MIN_TEMPERATURE_SCORES, difference_interval
from qualspec.analysis._recommendation import (
    DEGRADE_POINTS,
    Recommendation,
    _candidate_ceiling,
    _enough,
    _PerTemp,
    format_temperature,
)
from qualspec.analysis._roles import RoleGap
from qualspec.analysis._temperature import CellTemperatureMetrics, safety_by_temperature


def _observations(
    cells: Sequence[CellTemperatureMetrics],
    gaps: Sequence[RoleGap],
    candidates: Sequence[str],
    answers: Sequence[Answer],
    aggregation: str,
    per_temp: _PerTemp,
) -> list[str]:
    out: list[str] = []
    out.extend(_role_sentences(gaps, candidates))
    several = len({p.temperature for c in cells for p in c.points}) > 1
    if several and not any(p.mean is not None for c in cells for p in c.points):
        out.append("No answer was scored: only the stability of the answers can be compared")
    elif several:
        out.extend(_degrade_sentences(per_temp, candidates))
        for cand in candidates:
            scored = sorted(per_temp.get(cand, {}))
            if not scored:
                out.append(f"{cand} has no scored answer")
            elif len(scored) == 1:
                only = format_temperature(scored[0])
                out.append(f"{cand} was scored at one temperature only ({only}): no trend")
            elif len(_enough(per_temp[cand])) < 2:
                fewest = min(len(v) for v in per_temp[cand].values())
                out.append(
                    f"{cand}: too few scored answers to compare temperatures (n={fewest} at "
                    f"a temperature; at least {MIN_TEMPERATURE_SCORES} needed at two)"
                )
        excluded = sorted({name for c in cells for name in c.excluded_criteria})
        if excluded:
            shown = ", ".join(repr(name) for name in excluded)
            out.append(
                f"Left out of comparisons across temperatures (scored at some temperatures "
                f"only): {shown}"
            )
    out.extend(_sensitivity_sentences(cells, candidates))
    for cand in candidates:
        sentence = _safety_sentence(answers, cand, aggregation)
        if sentence:
            out.append(sentence)
    flaky: dict[float | None, int] = {}
    for cell in cells:
        for p in cell.points:
            if p.flaky:
                flaky[p.temperature] = flaky.get(p.temperature, 0) + 1
    for t in sorted(flaky, key=temperature_order):
        n = flaky[t]
        out.append(
            f"{n} {'cell is' if n == 1 else 'cells are'} flaky at temp {format_temperature(t)} "
            "(runs disagree on PASS/FAIL)"
        )
    return out


def _safety_sentence(answers: Sequence[Answer], candidate: str, aggregation: str) -> str | None:
    """How far safety holds for ``candidate``, saying where it was judged when that is not
    every temperature (a safety criterion under ``at_temperature``): a temperature where
    safety was not judged is not said to hold."""
    mine = [a for a in answers if a.response.candidate == candidate]
    by_cell: dict[tuple[Any, ...], list[Answer]] = {}
    for a in mine:
        r = a.response
        by_cell.setdefault((r.role, r.scenario, r.input_id), []).append(a)
    failing: dict[float, bool] = {}
    for cell_answers in by_cell.values():
        for t, failed in safety_by_temperature(cell_answers, aggregation).items():
            if t is not None and failed is not None:
                failing[t] = failing.get(t, False) or failed
    if not failing:
        return None
    judged = sum(1 for a in mine if a.safety_failed is not None)
    on = f"safety judged on {judged} {'answer' if judged == 1 else 'answers'}"
    every = {a.response.temperature for a in mine if a.response.temperature is not None}
    if set(failing) == every:
        _signal, ceiling = _candidate_ceiling(answers, candidate, aggregation)
        if ceiling is None:
            return f"{candidate} has a safety failure already at its lowest temperature ({on})"
        return f"{candidate}: safety holds up to temp {format_temperature(ceiling)} ({on})"
    where = ", ".join(format_temperature(t) for t in sorted(failing))
    first = next((t for t in sorted(failing) if failing[t]), None)
    if first is None:
        return f"{candidate}: safety holds where it was judged (temp {where} only; {on})"
    return (
        f"{candidate}: safety fails at temp {format_temperature(first)} (judged at temp "
        f"{where} only; {on})"
    )


def format_recommendation(rec: Recommendation) -> str:
    """``0.7 (mean 8.3, 95% CI 7.9 to 8.7, n=6)``, or ``none (why)``."""
    if rec.temperature is None:
        return f"none ({rec.why_none})" if rec.why_none else "none"
    interval = (
        "" if rec.ci_low is None or rec.ci_high is None
        else f", 95% CI {rec.ci_low:.1f} to {rec.ci_high:.1f}"
    )  # fmt: skip
    mean = "-" if rec.mean is None else f"{rec.mean:.1f}"
    return f"{format_temperature(rec.temperature)} (mean {mean}{interval}, n={rec.n})"


def gap_interval(gap: RoleGap) -> str:
    """``95% CI +1.0 to +2.0, n=8``, or ``n=1, too few pairs for an interval``."""
    if gap.ci_low is None or gap.ci_high is None:
        return f"n={gap.n}, too few pairs for an interval: at least {MIN_GAP_PAIRS} needed"
    return f"95% CI {gap.ci_low:+.1f} to {gap.ci_high:+.1f}, n={gap.n}"


def _role_sentences(gaps: Sequence[RoleGap], candidates: Sequence[str]) -> list[str]:
    overall = [g for g in gaps if g.scenario is None]
    out: list[str] = []
    for role_a, role_b in dict.fromkeys((g.role_a, g.role_b) for g in overall):
        pair = [g for g in overall if (g.role_a, g.role_b) == (role_a, role_b)]
        clear = [g for g in pair if g.finding]
        winners = {g.role_a if g.gap > 0 else g.role_b for g in clear}
        if len(pair) > 1 and len(clear) == len(pair) and len(winners) == 1:
            winner = winners.pop()
            loser = role_b if winner == role_a else role_a
            pairs = sum(g.n for g in pair)
            out.append(
                f"{winner} role consistently outperforms {loser} (every candidate: "
                f"{len(pair)} candidates, each gap's 95% CI excludes 0, {pairs} pairs)"
            )
            continue
        for g in pair:
            interval = gap_interval(g)
            if g in clear:
                winner, loser = (g.role_a, g.role_b) if g.gap > 0 else (g.role_b, g.role_a)
                where = f"; largest on {g.criteria[0][0]!r}" if g.criteria else ""
                out.append(
                    f"{g.candidate}: {winner} role outperforms {loser} by "
                    f"{abs(g.gap):.1f} points ({interval}){where}"
                )
            elif g.ci_low is None:
                out.append(
                    f"{g.candidate}: too few paired scores to compare {role_a} and {role_b} "
                    f"(gap {g.gap:+.1f}, {interval})"
                )
            else:
                out.append(
                    f"{g.candidate}: no clear difference between {role_a} and {role_b} "
                    f"(gap {g.gap:+.1f}, {interval})"
                )
    return out


def _degrade_sentences(per_temp: _PerTemp, candidates: Sequence[str]) -> list[str]:
    """Per candidate with two temperatures or more to compare: where its mean falls
    :data:`DEGRADE_POINTS` below its mean at the lowest one, with a 95% interval of the
    drop that excludes 0; else that it holds its score."""
    degrade: dict[str, str] = {}
    holds: dict[str, str] = {}
    at: dict[str, float] = {}
    for cand in candidates:
        enough = _enough(per_temp.get(cand, {}))
        if len(enough) < 2:
            continue
        (t0, base), *rest = enough.items()
        base_mean = statistics.fmean(base)
        unclear = ""
        for t, values in rest:
            m = statistics.fmean(values)
            if m > base_mean - DEGRADE_POINTS:
                continue
            interval = difference_interval(base, values, stat_seed(cand, t0, t))
            if interval is None:  # pragma: no cover - enough values on both sides
                continue
            change = (
                f"{base_mean:.1f} -> {m:.1f}; change 95% CI {interval[0]:+.1f} to "
                f"{interval[1]:+.1f}, n={len(base)} and {len(values)}"
            )
            if interval[1] < 0:
                degrade[cand] = f"{cand} degrades at temp {format_temperature(t)} ({change})"
                at[cand] = t
                break
            if not unclear:  # a drop the data cannot tell from noise: not "holds" either
                unclear = (
                    f"{cand}: no clear change across temperatures (at temp "
                    f"{format_temperature(t)}: {change})"
                )
        else:
            if unclear:
                holds[cand] = unclear
                continue
            means = [statistics.fmean(v) for v in enough.values()]
            fewest = min(len(v) for v in enough.values())
            holds[cand] = (
                f"{cand} holds its score across temperatures ({min(means):.1f} to "
                f"{max(means):.1f}, n>={fewest} per temperature)"
            )
    compared = [c for c in candidates if c in degrade or c in holds]
    if len(compared) > 1 and len(degrade) == len(compared) and len(set(at.values())) == 1:
        where = format_temperature(next(iter(at.values())))
        return [f"All candidates degrade at temp {where}", *(degrade[c] for c in compared)]
    return [degrade.get(c) or holds[c] for c in compared]


def _sensitivity_sentences(
    cells: Sequence[CellTemperatureMetrics], candidates: Sequence[str]
) -> list[str]:
    acc: dict[str, list[float]] = {}
    for cell in cells:
        if cell.sensitivity is not None:
            acc.setdefault(cell.candidate, []).append(cell.sensitivity)
    means = {c: statistics.fmean(acc[c]) for c in candidates if c in acc}
    if len(means) < 2:
        return []
    ranked = sorted(means, key=lambda c: -means[c])
    most, least = ranked[0], ranked[-1]

    def n(cand: str) -> str:  # the evidence: cells, each compared on enough answers
        return f"{len(acc[cand])} {'cell' if len(acc[cand]) == 1 else 'cells'}"

    if means[most] == means[least]:
        return [
            f"All candidates are equally temperature-sensitive (variance {means[most]:.2f}; "
            f"{', '.join(f'{c} {n(c)}' for c in ranked)})"
        ]
    if len(ranked) == 2:
        return [
            f"{most} shows more temperature sensitivity than {least} "
            f"(variance {means[most]:.2f} vs {means[least]:.2f}; {n(most)} and {n(least)})"
        ]
    return [
        f"{most} is the most temperature-sensitive (variance {means[most]:.2f}, {n(most)}); "
        f"{least} the least ({means[least]:.2f}, {n(least)})"
    ]


def _plain(value: Any) -> Any:
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def plain_fields(value: Any) -> Any:
    """``_plain(dataclasses.asdict(value))`` of a dataclass, in one pass: its fields
    (and those of the dataclasses inside) as dicts, tuples as lists, other values as
    ``asdict`` copies them. Several times faster than ``asdict``, which deep-copies every
    value (a dict key that is not a plain scalar takes the ``asdict`` way)."""
    try:
        return _plain_fields(value)
    except _UnusualKey:
        return _plain(dataclasses.asdict(value))


_SCALARS = frozenset({str, int, float, bool, type(None)})


class _UnusualKey(Exception):
    """A dict key other than a str, int, float, bool or None."""


def _plain_fields(value: Any) -> Any:
    if type(value) in _SCALARS:  # asdict's deep copy of these is the value itself
        return value
    if isinstance(value, tuple | list):
        return [_plain_fields(v) for v in value]
    if isinstance(value, dict):
        if any(type(k) not in _SCALARS for k in value):
            raise _UnusualKey
        return {k: _plain_fields(v) for k, v in value.items()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain_fields(getattr(value, f.name)) for f in dataclasses.fields(value)}
    return copy.deepcopy(value)
