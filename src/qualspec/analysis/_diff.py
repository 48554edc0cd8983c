"""Compare two runs tuple by tuple: score changes, new failures and passes, regressions.

Tuples are matched by (candidate, role, scenario, input_id, temperature): the candidates'
cells only (a reference-graded run's reference answers are counted apart, in
:attr:`RunDiff.references_a` / ``references_b``, with the inputs whose reference text
changed). Each side's score and PASS/FAIL are the run's own verdict of the cell, from
:func:`qualspec.analysis.run_verdicts` (the one the console, the results JSON, the HTML
report and the web app show), so they honour the run's ``aggregation`` (a cell that passed
2 of 3 runs under ``majority`` passes here too) and each FAIL carries its reasons. A cell
is scored on the judge's 0-10 scale, or on the field grades' 0-100 scale when nothing in it
was judged (a reference-graded run).

Each matched tuple gets exactly one status, the first that applies:

``added`` / ``removed``
    only in run B / only in run A.
``new_fail`` / ``new_pass``
    passed in A and fails in B / failed in A and passes in B (whatever the delta; a cell
    judged only by ``expect:`` checks has no score but passes or fails).
``error``
    present in both, but one side (or both) has no score because every answer of its cell
    is an error (an HTTP 500, a timeout): ``error_a``/``error_b`` carry the message.
``unscored``
    present in both, but one side (or both) has no score (every judgment unscored);
    two cells without a comparable score that both pass (or both fail) are ``unchanged``.
``regressed`` / ``improved``
    ``delta < -noise`` / ``delta > noise`` (``noise`` is in points of the 0-10 scale; on
    the 0-100 scale it counts ten times as many).
``unchanged``
    the rest: ``|delta| <= noise``.

``has_regression`` is true when any tuple is ``new_fail`` or ``regressed``: that is what
``qualspec diff --fail-on-regression`` exits 1 on.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from qualspec.analysis._aggregate import cell_key, temperature_order
from qualspec.analysis._verdicts import CellVerdict, run_verdicts
from qualspec.errors import ConfigError
from qualspec.store import RunRecord

__all__ = ["STATUSES", "DiffStatus", "RunDiff", "TupleChange", "TupleKey", "diff_runs"]

DiffStatus = Literal[
    "new_fail",
    "regressed",
    "error",
    "unscored",
    "removed",
    "added",
    "unchanged",
    "improved",
    "new_pass",
]
STATUSES: tuple[DiffStatus, ...] = get_args(DiffStatus)
"""Every status, worst first (the sort order of :attr:`RunDiff.changes`)."""

TupleKey = tuple[str, str | None, str, str | None, float | None]
"""(candidate, role, scenario, input_id, temperature)."""

_DECIMALS = 9  # deltas are rounded before comparing with the noise threshold


@dataclass(frozen=True, slots=True)
class TupleChange:
    """How one (candidate, role, scenario, input_id, temperature) tuple changed from A to B.

    Scores are on ``scale`` (10: the judge's, 100: field grades; None when absent or
    unscored); ``delta`` is ``score_b - score_a`` when both exist on the same scale.
    ``passed_a``/``passed_b`` are each run's own verdict of the cell (None: no verdict) and
    ``reasons_a``/``reasons_b`` say why a side failed (empty unless it failed), and
    ``label_a``/``label_b`` are the run report's label of the cell (``PASS``, ``FAIL``,
    ``ERROR``, ``UNSCORED``, ``ANSWERED``; None when the tuple is not in that run), and
    ``error_a``/``error_b`` the first error message of that side's answers (None when none
    of them failed).
    """

    key: TupleKey
    score_a: float | None
    score_b: float | None
    delta: float | None
    passed_a: bool | None
    passed_b: bool | None
    status: DiffStatus
    scale: int = 10
    reasons_a: tuple[str, ...] = ()
    reasons_b: tuple[str, ...] = ()
    label_a: str | None = None
    label_b: str | None = None
    error_a: str | None = None
    error_b: str | None = None

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
    :data:`STATUSES`, then by delta (most negative first), then by key. ``aggregation_a``
    and ``aggregation_b`` are the aggregations each run's verdicts follow;
    ``references_a``/``references_b`` count each run's reference answers (not candidates:
    no tuple) and ``references_changed`` the inputs whose reference text differs.
    """

    run_a: str
    run_b: str
    suite_a: str
    suite_b: str
    noise: float
    changes: list[TupleChange] = field(default_factory=list)
    aggregation_a: str = "mean_with_variance"
    aggregation_b: str = "mean_with_variance"
    references_a: int = 0
    references_b: int = 0
    references_changed: int = 0

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


def _tuples(run: RunRecord) -> tuple[str, dict[TupleKey, CellVerdict]]:
    verdicts = run_verdicts(run)  # the candidates' cells only
    cells = {
        (candidate, role, scenario, input_id, temperature): cell
        for (scenario, input_id, role, candidate, temperature), cell in verdicts.cells.items()
    }
    return verdicts.aggregation, cells


def _errors(run: RunRecord) -> dict[TupleKey, str]:
    """Per tuple, the first error message of its candidate answers (by run index)."""
    out: dict[TupleKey, tuple[int, str]] = {}
    for r in run.responses:
        if r.kind != "candidate" or r.error is None:
            continue
        scenario, input_id, role, candidate, temperature = cell_key(r)
        key = (candidate, role, scenario, input_id, temperature)
        found = out.get(key)
        if found is None or r.run_index < found[0]:
            out[key] = (r.run_index, r.error)
    return {k: message for k, (_, message) in out.items()}


def _references(run: RunRecord) -> dict[tuple[str, str | None, str], str | None]:
    """(scenario, input_id, reference model) -> the reference's answer text."""
    return {
        (r.scenario, r.input_id, r.model): r.text for r in run.responses if r.kind == "reference"
    }


def _status(a: CellVerdict, b: CellVerdict, delta: float | None, noise: float) -> DiffStatus:
    # pass/fail first: a cell judged only by expect: checks has no score but passes or fails
    if a.passed is True and b.passed is False:
        return "new_fail"
    if a.passed is False and b.passed is True:
        return "new_pass"
    if delta is None:
        # no comparable score: both without one (checks only), or on different scales
        comparable = (a.score is None) == (b.score is None)
        checked = comparable and a.passed is not None
        if checked and a.passed == b.passed:
            return "unchanged"
        return "error" if "ERROR" in (a.label, b.label) else "unscored"
    limit = noise * (b.scale / 10)
    if delta < -limit:
        return "regressed"
    if delta > limit:
        return "improved"
    return "unchanged"


def _change(
    key: TupleKey,
    a: CellVerdict | None,
    b: CellVerdict | None,
    noise: float,
    errors: tuple[str | None, str | None] = (None, None),
) -> TupleChange:
    sides = [c for c in (b, a) if c is not None]
    scale = ([c for c in sides if c.score is not None] or sides)[0].scale  # B's when scored
    if a is None or b is None:
        status: DiffStatus = "added" if a is None else "removed"
        return TupleChange(
            key=key,
            score_a=a.score if a else None,
            score_b=b.score if b else None,
            delta=None,
            passed_a=a.passed if a else None,
            passed_b=b.passed if b else None,
            status=status,
            scale=scale,
            reasons_a=a.reasons if a else (),
            reasons_b=b.reasons if b else (),
            label_a=a.label if a else None,
            label_b=b.label if b else None,
            error_a=errors[0],
            error_b=errors[1],
        )
    delta = None
    if a.score is not None and b.score is not None and a.scale == b.scale:
        delta = round(b.score - a.score, _DECIMALS)
    return TupleChange(
        key=key,
        score_a=a.score,
        score_b=b.score,
        delta=delta,
        passed_a=a.passed,
        passed_b=b.passed,
        status=_status(a, b, delta, noise),
        scale=scale,
        reasons_a=a.reasons,
        reasons_b=b.reasons,
        label_a=a.label,
        label_b=b.label,
        error_a=errors[0],
        error_b=errors[1],
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
        noise: Score changes (0-10 scale; ten times this on the field grades' 0-100) of
            at most this much are ``unchanged``.

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
    how_a, cells_a = _tuples(a)
    how_b, cells_b = _tuples(b)
    keys = list(cells_a) + [k for k in cells_b if k not in cells_a]
    errors_a, errors_b = _errors(a), _errors(b)
    changes = [
        _change(k, cells_a.get(k), cells_b.get(k), noise, (errors_a.get(k), errors_b.get(k)))
        for k in keys
    ]
    changes.sort(key=_sort_key)
    refs_a, refs_b = _references(a), _references(b)
    return RunDiff(
        run_a=a.summary.id,
        run_b=b.summary.id,
        suite_a=a.summary.suite_name,
        suite_b=b.summary.suite_name,
        noise=noise,
        changes=changes,
        aggregation_a=how_a,
        aggregation_b=how_b,
        references_a=len(refs_a),
        references_b=len(refs_b),
        references_changed=sum(
            1 for k, text in refs_b.items() if k in refs_a and refs_a[k] != text
        ),
    )
