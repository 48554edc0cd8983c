"""Reading comparison records back from a stored run: the records, and a summary of each.

A comparison record is a :class:`~qualspec.store.JudgmentRecord` whose ``details["type"]``
is ``"comparison"`` (see :mod:`qualspec.judges._comparative` for its fields).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from qualspec.judges._record_kinds import comparison_records, is_comparison

if TYPE_CHECKING:
    from qualspec.store import JudgmentRecord, RunRecord

__all__ = [
    "ComparisonSummary",
    "comparison_records",
    "comparison_summary",
    "dimension_rank",
    "is_comparison",
]

_NO_ROLE = "(no role)"


@dataclass(frozen=True, slots=True)
class ComparisonSummary:
    """One comparison of a run, summed over its groups.

    Attributes:
        name: The comparison's name (its records' ``evaluator``).
        compare: ``"candidates"`` or ``"roles"``: what was compared.
        within: What each group held fixed.
        groups: Groups judged (one record each).
        scored: Groups with scores; ``unscored`` could not be read; ``errors`` failed calls.
        skipped: Groups with fewer than two answers (nothing to compare, no record).
        wins: Member (candidate or role name) -> groups it won.
        ties: Groups judged a tie.
        wins_by_group: The held value (a role or candidate name) -> member -> wins.
        mean_scores: Member -> its mean score (0-10) over the scored groups.
        debias: Whether each group was judged in both orders.
        debiased: Groups judged in both orders with a readable winner each time.
        disagreed: Of those, the groups whose two orders named different winners.
    """

    name: str
    compare: str
    within: str
    groups: int = 0
    scored: int = 0
    unscored: int = 0
    errors: int = 0
    skipped: int = 0
    wins: dict[str, int] = field(default_factory=dict)
    ties: int = 0
    wins_by_group: dict[str, dict[str, int]] = field(default_factory=dict)
    mean_scores: dict[str, float] = field(default_factory=dict)
    debias: bool = False
    debiased: int = 0
    disagreed: int = 0

    @property
    def disagreement_rate(self) -> float | None:
        """Disagreeing groups over groups judged in both orders (None when none were)."""
        return self.disagreed / self.debiased if self.debiased else None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready fields, with ``disagreement_rate``."""
        data = asdict(self)
        data["disagreement_rate"] = self.disagreement_rate
        return data


def _configured(record: RunRecord) -> dict[str, tuple[str, str, bool]]:
    """Name -> (compare, within, debias) of the run's comparisons, from its metadata."""
    out: dict[str, tuple[str, str, bool]] = {}
    evaluators = record.summary.metadata.get("evaluators") if record.summary.metadata else None
    for entry in evaluators if isinstance(evaluators, list) else ():
        if not isinstance(entry, Mapping) or entry.get("type") != "comparative":
            continue
        options = entry.get("options")
        options = options if isinstance(options, Mapping) else {}
        compare, within = options.get("compare"), options.get("within")
        if isinstance(compare, str) and isinstance(within, str):
            out[str(entry.get("name"))] = (compare, within, bool(options.get("debias")))
    return out


def dimension_rank(record: RunRecord, dimension: str) -> Callable[[str], tuple[int, str]]:
    """A sort key for names of ``dimension`` (candidates or roles): the suite's order."""
    dims = record.summary.metadata.get("dimensions") if record.summary.metadata else None
    names = dims.get(dimension) if isinstance(dims, Mapping) else None
    ranks = {n: i for i, n in enumerate(names)} if isinstance(names, list) else {}
    return lambda name: (ranks.get(name, len(ranks)), name)


_V = TypeVar("_V")


def _ordered(values: dict[str, _V], rank: Callable[[str], tuple[int, str]]) -> dict[str, _V]:
    return {k: values[k] for k in sorted(values, key=rank)}


def _skipped(record: RunRecord, within: str) -> int:
    """Groups of the run's answers (as ``within`` groups them) with fewer than two."""
    sizes: dict[str, int] = {}
    for r in record.responses:
        if r.error is not None or r.kind != "candidate":
            continue
        held = r.role if within == "roles" else r.candidate
        key = json.dumps([r.scenario, r.input_id, r.temperature, r.run_index, held])
        sizes[key] = sizes.get(key, 0) + 1
    return sum(1 for n in sizes.values() if n < 2)


def comparison_summary(record: RunRecord) -> list[ComparisonSummary]:
    """Per comparison of the run: wins per member (overall and per group), ties, mean
    scores, unscored and skipped groups, and how often the two orders disagreed.

    Example:
        >>> for s in comparison_summary(run):
        ...     print(s.name, s.wins, s.disagreed, "of", s.debiased)
    """
    acc: dict[str, dict[str, Any]] = {}

    def entry(name: str, compare: str, within: str, debias: bool) -> dict[str, Any]:
        found = acc.get(name)
        if found is None:
            found = acc[name] = _new_entry(name, compare, within, debias)
        return found

    for name, (compare, within, debiased) in _configured(record).items():
        entry(name, compare, within, debiased)
    for j in comparison_records(record):
        details = j.details or {}
        compare, within = str(details.get("compare")), str(details.get("within"))
        _add_record(entry(j.evaluator, compare, within, details.get("debias") is not None), j)
    return [_summary(record, e) for e in acc.values()]


def _new_entry(name: str, compare: str, within: str, debias: bool) -> dict[str, Any]:
    """A comparison's counts before any of its records is read."""
    return {
        "name": name,
        "compare": compare,
        "within": within,
        "debias": debias,
        "wins": {},
        "wins_by_group": {},
        "sums": {},
        "counts": {},
        "groups": 0,
        "scored": 0,
        "unscored": 0,
        "errors": 0,
        "ties": 0,
        "debiased": 0,
        "disagreed": 0,
    }


def _add_record(e: dict[str, Any], j: JudgmentRecord) -> None:
    """Count one comparison record (one group judged) into its comparison's entry."""
    details = j.details or {}
    e["debias"] = e["debias"] or details.get("debias") is not None
    e["groups"] += 1
    members = details.get("members")
    members = members if isinstance(members, Mapping) else {}
    if j.error is not None:
        e["errors"] += 1
        return
    if not j.scores:
        e["unscored"] += 1
        return
    e["scored"] += 1
    for key, score in j.scores.items():
        if score is not None:
            member = str(members.get(key, key))
            e["sums"][member] = e["sums"].get(member, 0.0) + score
            e["counts"][member] = e["counts"].get(member, 0) + 1
    group = details.get("group")
    held = next(iter(group.values()), None) if isinstance(group, Mapping) else None
    by_group = e["wins_by_group"].setdefault(_NO_ROLE if held is None else str(held), {})
    for member in members.values():
        by_group.setdefault(str(member), 0)
        e["wins"].setdefault(str(member), 0)
    winner = details.get("winner")
    if winner == "tie":
        e["ties"] += 1
    elif isinstance(winner, str) and winner in members:
        member = str(members[winner])
        e["wins"][member] += 1
        by_group[member] += 1
    orders = details.get("debias")
    if isinstance(orders, Mapping) and orders.get("disagreed") is not None:
        e["debiased"] += 1
        e["disagreed"] += int(bool(orders.get("disagreed")))


def _summary(record: RunRecord, e: dict[str, Any]) -> ComparisonSummary:
    """A comparison's entry as its summary, members and groups in the suite's order."""
    member_rank = dimension_rank(record, e["compare"])
    held_rank = dimension_rank(record, e["within"])
    means = _ordered({m: e["sums"][m] / e["counts"][m] for m in e["sums"]}, member_rank)
    e["wins"] = _ordered(e["wins"], member_rank)
    e["wins_by_group"] = _ordered(
        {g: _ordered(w, member_rank) for g, w in e["wins_by_group"].items()}, held_rank
    )
    return ComparisonSummary(
        name=e["name"],
        compare=e["compare"],
        within=e["within"],
        groups=e["groups"],
        scored=e["scored"],
        unscored=e["unscored"],
        errors=e["errors"],
        skipped=_skipped(record, e["within"]),
        wins=e["wins"],
        ties=e["ties"],
        wins_by_group=e["wins_by_group"],
        mean_scores=means,
        debias=e["debias"],
        debiased=e["debiased"],
        disagreed=e["disagreed"],
    )
