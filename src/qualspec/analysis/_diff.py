"""Compare two runs tuple by tuple: score changes, new failures and passes, regressions.

Tuples are matched by (candidate, role, scenario, input_id, temperature). Each side's score
is the cell score of :func:`qualspec.analysis.cell_scores` (mean of the scored criteria per
response, then mean over run indexes) and a tuple passes when that score is at least the
threshold recorded on its judgments and every ``expect:`` check of it passed.

Each matched tuple gets exactly one status, the first that applies:

``added`` / ``removed``
    only in run B / only in run A.
``new_fail`` / ``new_pass``
    passed in A and fails in B / failed in A and passes in B (whatever the delta; a cell
    judged only by ``expect:`` checks has no score but passes or fails).
``unscored``
    present in both, but one side (or both) has no score (every judgment unscored or every
    response an error); two check-only cells that both pass (or both fail) are
    ``unchanged``.
``regressed`` / ``improved``
    ``delta < -noise`` / ``delta > noise``.
``unchanged``
    the rest: ``|delta| <= noise``.

``has_regression`` is true when any tuple is ``new_fail`` or ``regressed``: that is what
``qualspec diff --fail-on-regression`` exits 1 on.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from qualspec.analysis._aggregate import CellScore, cell_scores, temperature_order
from qualspec.errors import ConfigError
from qualspec.store import RunRecord

__all__ = ["STATUSES", "DiffStatus", "RunDiff", "TupleChange", "TupleKey", "diff_runs"]

DiffStatus = Literal[
    "new_fail", "regressed", "unscored", "removed", "added", "unchanged", "improved", "new_pass"
]
STATUSES: tuple[DiffStatus, ...] = (
    "new_fail",
    "regressed",
    "unscored",
    "removed",
    "added",
    "unchanged",
    "improved",
    "new_pass",
)
"""Every status, worst first (the sort order of :attr:`RunDiff.changes`)."""

TupleKey = tuple[str, str | None, str, str | None, float | None]
"""(candidate, role, scenario, input_id, temperature)."""

_DECIMALS = 9  # deltas are rounded before comparing with the noise threshold


@dataclass(frozen=True, slots=True)
class TupleChange:
    """How one (candidate, role, scenario, input_id, temperature) tuple changed from A to B.

    Scores are 0-10 (None when absent or unscored); ``delta`` is ``score_b - score_a`` when
    both exist.
    """

    key: TupleKey
    score_a: float | None
    score_b: float | None
    delta: float | None
    passed_a: bool | None
    passed_b: bool | None
    status: DiffStatus

    @property
    def candidate(self) -> str:
        """The candidate's name."""
        return self.key[0]

    @property
    def role(self) -> str | None:
        """The role's name (None for a scenario run without roles)."""
        return self.key[1]

    @property
    def scenario(self) -> str:
        """The scenario's name."""
        return self.key[2]

    @property
    def input_id(self) -> str | None:
        """The dataset input's id (None for a scenario without inputs)."""
        return self.key[3]

    @property
    def temperature(self) -> float | None:
        """The requested temperature (None: none was sent, the provider's default)."""
        return self.key[4]


@dataclass(frozen=True, slots=True)
class RunDiff:
    """The comparison of run A (before) with run B (after).

    ``changes`` holds every tuple of either run, worst first: by status in the order of
    :data:`STATUSES`, then by delta (most negative first), then by key.
    """

    run_a: str
    run_b: str
    suite_a: str
    suite_b: str
    noise: float
    changes: list[TupleChange] = field(default_factory=list)

    def with_status(self, *statuses: DiffStatus) -> list[TupleChange]:
        """The changes with one of ``statuses``, worst first."""
        return [c for c in self.changes if c.status in statuses]

    @property
    def new_failures(self) -> list[TupleChange]:
        """Tuples that passed in A and fail in B."""
        return self.with_status("new_fail")

    @property
    def new_passes(self) -> list[TupleChange]:
        """Tuples that failed in A and pass in B."""
        return self.with_status("new_pass")

    @property
    def regressions(self) -> list[TupleChange]:
        """Tuples whose score dropped by more than the noise threshold (pass/fail unchanged)."""
        return self.with_status("regressed")

    @property
    def improvements(self) -> list[TupleChange]:
        """Tuples whose score rose by more than the noise threshold (pass/fail unchanged)."""
        return self.with_status("improved")

    @property
    def added(self) -> list[TupleChange]:
        """Tuples only in B."""
        return self.with_status("added")

    @property
    def removed(self) -> list[TupleChange]:
        """Tuples only in A."""
        return self.with_status("removed")

    @property
    def counts(self) -> dict[DiffStatus, int]:
        """Status -> number of tuples, for every status (zeros included), worst first."""
        result: dict[DiffStatus, int] = dict.fromkeys(STATUSES, 0)
        for change in self.changes:
            result[change.status] += 1
        return result

    @property
    def has_regression(self) -> bool:
        """True when any tuple is a new failure or regressed beyond the noise threshold."""
        return any(c.status in ("new_fail", "regressed") for c in self.changes)


def _tuples(run: RunRecord) -> dict[TupleKey, CellScore]:
    return {
        (candidate, role, scenario, input_id, temperature): cell
        for (scenario, input_id, role, candidate, temperature), cell in cell_scores(run).items()
    }


def _status(a: CellScore, b: CellScore, delta: float | None, noise: float) -> DiffStatus:
    # pass/fail first: a cell judged only by expect: checks has no score but passes or fails
    if a.passed is True and b.passed is False:
        return "new_fail"
    if a.passed is False and b.passed is True:
        return "new_pass"
    if delta is None:
        checked = a.mean is None and b.mean is None and a.passed is not None
        return "unchanged" if checked and a.passed == b.passed else "unscored"
    if delta < -noise:
        return "regressed"
    if delta > noise:
        return "improved"
    return "unchanged"


def _change(key: TupleKey, a: CellScore | None, b: CellScore | None, noise: float) -> TupleChange:
    if a is None or b is None:
        status: DiffStatus = "added" if a is None else "removed"
        return TupleChange(
            key=key,
            score_a=a.mean if a else None,
            score_b=b.mean if b else None,
            delta=None,
            passed_a=a.passed if a else None,
            passed_b=b.passed if b else None,
            status=status,
        )
    delta = None
    if a.mean is not None and b.mean is not None:
        delta = round(b.mean - a.mean, _DECIMALS)
    return TupleChange(
        key=key,
        score_a=a.mean,
        score_b=b.mean,
        delta=delta,
        passed_a=a.passed,
        passed_b=b.passed,
        status=_status(a, b, delta, noise),
    )


def _sort_key(change: TupleChange) -> tuple[Any, ...]:
    candidate, role, scenario, input_id, temperature = change.key
    return (
        STATUSES.index(change.status),
        change.delta if change.delta is not None else 0.0,
        (candidate, role or "", scenario, input_id or "", temperature_order(temperature)),
    )


def diff_runs(a: RunRecord, b: RunRecord, *, noise: float = 0.5) -> RunDiff:
    """Compare run ``a`` (before) with run ``b`` (after), tuple by tuple.

    Args:
        a: The earlier (baseline) run.
        b: The later run.
        noise: Score changes (0-10 scale) of at most this much are ``unchanged``.

    Returns:
        The diff, worst changes first.

    Raises:
        ConfigError: ``noise`` is negative.

    Example:
        >>> diff = diff_runs(read_results_file(old), read_results_file(new), noise=1.0)
        >>> print(format_diff(diff, "text"))
        >>> raise SystemExit(1 if diff.has_regression else 0)
    """
    if noise < 0:
        raise ConfigError(f"noise must be >= 0 (got {noise}): pass a score difference such as 0.5")
    cells_a, cells_b = _tuples(a), _tuples(b)
    keys = list(cells_a) + [k for k in cells_b if k not in cells_a]
    changes = [_change(k, cells_a.get(k), cells_b.get(k), noise) for k in keys]
    changes.sort(key=_sort_key)
    return RunDiff(
        run_a=a.summary.id,
        run_b=b.summary.id,
        suite_a=a.summary.suite_name,
        suite_b=b.summary.suite_name,
        noise=noise,
        changes=changes,
    )
