"""The comparisons part of the HTML report, from the comparative judge's records.

Each comparison is one record (``details["type"] == "comparison"``, read back by
:func:`qualspec.judges.comparison_records`): the judge saw the responses of one group (a
role's candidates, or a candidate's roles) under neutral labels, in a shuffled order, and
scored each one. Per comparison name: the wins per member overall and per group, ties, mean
scores, and, when each group was judged in both orders (``debias``), how often the two orders
disagreed (:func:`qualspec.judges.comparison_summary`); then every group's record.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from qualspec.analysis import format_temperature
from qualspec.judges import comparison_records, comparison_summary, dimension_rank

if TYPE_CHECKING:
    from qualspec.store import JudgmentRecord, RunRecord

__all__ = ["ComparisonView", "comparison_views"]


@dataclass(slots=True)
class MemberView:
    """One response of a compared group."""

    label: str  # the neutral label the judge saw (A, B, ...), or ""
    name: str  # candidate or role
    score: str
    reversed_score: str
    winner: bool


@dataclass(slots=True)
class GroupJudgmentView:
    """One comparison call (one group at one scenario, input, temperature and run)."""

    where: str
    group: str
    winner: str
    members: list[MemberView]
    reasoning: str
    order: str
    seed: str
    debias: str  # "" when judged once
    disagreed: bool
    error: str


@dataclass(slots=True)
class WinsRow:
    """Wins per member within one group value (a role or a candidate), or overall."""

    group: str
    wins: list[tuple[str, int]]


@dataclass(slots=True)
class ComparisonView:
    """Every record of one comparison (a ``comparisons`` entry of the suite)."""

    name: str
    what: str  # e.g. "candidates within each role"
    wins: list[WinsRow]
    totals: str  # groups judged, ties, unscored, skipped
    means: str  # mean score per member
    disagreement: str  # "" when not debiased
    records: list[GroupJudgmentView]


def _score(x: Any) -> str:
    if not isinstance(x, int | float) or isinstance(x, bool):
        return "-"
    return f"{x:.1f}".rstrip("0").rstrip(".") if x % 1 else f"{x:.0f}"


def _group_name(group: Any) -> str:
    if not isinstance(group, dict) or not group:
        return "all"
    return ", ".join(f"{k} {'(none)' if v is None else v}" for k, v in group.items())


def _where(d: dict[str, Any]) -> str:
    parts = [str(d.get("scenario", "?"))]
    if d.get("input_id") is not None:
        parts.append(f"input {d['input_id']}")
    t = d.get("temperature")
    parts.append(f"T {format_temperature(t if isinstance(t, int | float) else None)}")
    if isinstance(d.get("run_index"), int):
        parts.append(f"run {d['run_index'] + 1}")
    return " / ".join(parts)


def _record_view(j: JudgmentRecord) -> GroupJudgmentView:
    d: dict[str, Any] = j.details or {}
    members = {str(k): str(v) for k, v in (d.get("members") or {}).items()}
    labels = {str(v): str(k) for k, v in (d.get("labels") or {}).items()}
    scores = j.scores or {}
    debias = d.get("debias") if isinstance(d.get("debias"), dict) else None
    reversed_scores = (debias or {}).get("reversed_scores") or {}
    winner = d.get("winner")
    views = [
        MemberView(
            label=labels.get(key, ""),
            name=name,
            score=_score(scores.get(key)),
            reversed_score=_score(reversed_scores.get(key)) if debias else "",
            winner=winner == key,
        )
        for key, name in members.items()
    ]
    debias_text = ""
    disagreed = False
    if debias:
        disagreed = bool(debias.get("disagreed"))
        rw = debias.get("reversed_winner")
        rw_name = "tie" if rw == "tie" else members.get(str(rw), "none")
        flag = debias.get("disagreed")
        debias_text = "judged again in reversed order: winner " + rw_name
        if flag is not None:
            debias_text += " (the two orders disagreed)" if flag else " (same winner)"
    shown = "-" if winner is None else ("tie" if winner == "tie" else members.get(str(winner)))
    return GroupJudgmentView(
        where=_where(d),
        group=_group_name(d.get("group")),
        winner=shown or str(winner),
        members=views,
        reasoning=j.reasoning or "",
        order=" \u2192 ".join(members.get(str(k), str(k)) for k in d.get("order") or []),
        seed=str(d.get("seed", "-")),
        debias=debias_text,
        disagreed=disagreed,
        error=(f"error: {j.error}" if j.error else "")
        or (f"unscored: {j.unscored_reason}" if j.unscored_reason else ""),
    )


def _sort_key(j: JudgmentRecord, rank: Any) -> tuple[Any, ...]:
    d = j.details or {}
    group = d.get("group") or {}
    held = next(iter(group.values()), None) if isinstance(group, dict) else None
    t = d.get("temperature")
    return (
        str(d.get("input_id") or ""),
        rank(str(held)),
        (0, 0.0) if not isinstance(t, int | float) else (1, float(t)),
        int(d.get("run_index") or 0),
    )


def comparison_views(run: RunRecord) -> list[ComparisonView]:
    """The comparisons of a run, one view per comparison name."""
    records = comparison_records(run)
    scenario_rank = dimension_rank(run, "scenarios")  # the suite's order
    views = []
    for s in comparison_summary(run):
        rank = dimension_rank(run, s.within)
        mine = sorted(
            (j for j in records if j.evaluator == s.name),
            key=lambda j: (
                scenario_rank(str((j.details or {}).get("scenario"))),
                _sort_key(j, rank),
            ),
        )
        held = "role" if s.within == "roles" else "candidate"
        wins = [WinsRow(f"{held} {g}", list(w.items())) for g, w in s.wins_by_group.items()]
        if len(wins) > 1:
            wins.append(WinsRow("overall", list(s.wins.items())))
        totals = [f"{s.scored} of {s.groups} groups judged", f"{s.ties} tied"]
        if s.unscored or s.errors:
            totals.append(f"{s.unscored + s.errors} unscored")
        if s.skipped:
            totals.append(f"{s.skipped} with fewer than 2 answers skipped")
        rate = s.disagreement_rate
        views.append(
            ComparisonView(
                name=s.name,
                what=f"{s.compare} within each of the {s.within}",
                wins=wins,
                totals=", ".join(totals),
                means=", ".join(f"{m} {_score(v)}" for m, v in s.mean_scores.items()),
                disagreement=(
                    f"the two orders disagreed in {s.disagreed} of {s.debiased} groups "
                    f"({100 * rate:.0f}%)"
                    if rate is not None
                    else ("no group could be judged in both orders" if s.debias else "")
                ),
                records=[_record_view(j) for j in mine],
            )
        )
    return views
