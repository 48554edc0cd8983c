"""The comparisons part of the HTML report, from the comparative judge's records.

Each comparison is one record (``details["type"] == "comparison"``): the judge saw the
responses of one group (a role's candidates, or a candidate's roles) under neutral labels,
in a shuffled order, and scored each one. Here they are grouped per comparison name, with
the wins per member of each group and, when judged twice (``debias``), how often the two
orders disagreed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from qualspec.analysis import format_temperature

if TYPE_CHECKING:
    from qualspec.store import JudgmentRecord, RunRecord

__all__ = ["ComparisonView", "comparison_views", "is_comparison"]


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
    """Wins per member within one group (``tie`` counted apart)."""

    group: str
    wins: list[tuple[str, int]]
    ties: int
    judged: int


@dataclass(slots=True)
class ComparisonView:
    """Every record of one comparison (a ``comparisons`` entry of the suite)."""

    name: str
    what: str  # e.g. "candidates within each role"
    wins: list[WinsRow]
    disagreement: str  # "" when not debiased
    records: list[GroupJudgmentView]


def is_comparison(judgment: JudgmentRecord) -> bool:
    """Whether a record is a comparative judge's (one record per group of responses)."""
    return isinstance(judgment.details, dict) and judgment.details.get("type") == "comparison"


def _score(x: Any) -> str:
    if not isinstance(x, int | float) or isinstance(x, bool):
        return "-"
    return f"{x:.1f}".rstrip("0").rstrip(".") if x % 1 else f"{x:.0f}"


def _group_name(group: Any) -> str:
    if not isinstance(group, dict) or not group:
        return "all"
    return ", ".join(f"{k} {v}" for k, v in group.items())


def _where(d: dict[str, Any]) -> str:
    parts = [str(d.get("scenario", "?"))]
    if d.get("input_id") is not None:
        parts.append(f"input {d['input_id']}")
    t = d.get("temperature")
    parts.append(f"T {format_temperature(t if isinstance(t, int | float) else None)}")
    if isinstance(d.get("run_index"), int):
        parts.append(f"run {d['run_index'] + 1}")
    return " / ".join(parts)


def _record_view(j: JudgmentRecord, d: dict[str, Any]) -> GroupJudgmentView:
    members: dict[str, str] = {str(k): str(v) for k, v in (d.get("members") or {}).items()}
    labels = {str(v): str(k) for k, v in (d.get("labels") or {}).items()}
    scores = j.scores or {}
    debias = d.get("debias") if isinstance(d.get("debias"), dict) else None
    reversed_scores = (debias or {}).get("reversed_scores") or {}
    winner = d.get("winner")
    order = [members.get(str(k), str(k)) for k in d.get("order") or []]
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
        rw_name = "tie" if rw == "tie" else members.get(str(rw), str(rw))
        debias_text = f"judged again in reversed order: winner {rw_name}" + (
            " (the two orders disagreed)" if disagreed else " (same winner)"
        )
    return GroupJudgmentView(
        where=_where(d),
        group=_group_name(d.get("group")),
        winner="tie" if winner == "tie" else members.get(str(winner), "-"),
        members=views,
        reasoning=j.reasoning or "",
        order=" \u2192 ".join(order),
        seed=str(d.get("seed", "-")),
        debias=debias_text,
        disagreed=disagreed,
        error=j.error or j.unscored_reason or "",
    )


def comparison_views(run: RunRecord) -> list[ComparisonView]:
    """The comparisons of a run, one view per comparison name, in record order."""
    by_name: dict[str, list[tuple[JudgmentRecord, dict[str, Any]]]] = {}
    for j in run.judgments:
        if is_comparison(j) and j.details is not None:
            by_name.setdefault(j.evaluator, []).append((j, j.details))
    views = []
    for name, records in by_name.items():
        first = records[0][1]
        compare, within = first.get("compare", "?"), first.get("within", "?")
        wins: dict[str, dict[str, int]] = {}
        ties: dict[str, int] = {}
        judged: dict[str, int] = {}
        debiased = disagreed = 0
        for j, d in records:
            group = _group_name(d.get("group"))
            members = {str(k): str(v) for k, v in (d.get("members") or {}).items()}
            row = wins.setdefault(group, {})
            for name_ in members.values():
                row.setdefault(name_, 0)
            winner = d.get("winner")
            if j.error is None and winner is not None:
                judged[group] = judged.get(group, 0) + 1
                if winner == "tie":
                    ties[group] = ties.get(group, 0) + 1
                elif str(winner) in members:
                    row[members[str(winner)]] += 1
            debias = d.get("debias")
            if isinstance(debias, dict):
                debiased += 1
                disagreed += bool(debias.get("disagreed"))
        views.append(
            ComparisonView(
                name=name,
                what=f"{compare} within each of the {within}",
                wins=[
                    WinsRow(
                        group,
                        sorted(row.items(), key=lambda kv: -kv[1]),
                        ties.get(group, 0),
                        judged.get(group, 0),
                    )
                    for group, row in wins.items()
                ],
                disagreement=(
                    f"the two orders disagreed in {disagreed} of {debiased} groups "
                    f"({100 * disagreed / debiased:.0f}%)"
                    if debiased
                    else ""
                ),
                records=[_record_view(j, d) for j, d in records],
            )
        )
    return views
