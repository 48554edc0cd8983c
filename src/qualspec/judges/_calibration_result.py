"""A judge's (or a field grader's) measurement on known pairs: the result, cached in the
store (see :mod:`qualspec.judges._calibration` for how the pairs are scored)."""

from __future__ import annotations

import hashlib
import json
import statistics
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from qualspec.store import Store

__all__ = [
    "CACHE_KIND",
    "DEFAULT_PAIRS",
    "SEPARATION_THRESHOLD",
    "Calibration",
    "PairScores",
    "Scored",
    "calibration_of",
    "record_calibration",
]

SEPARATION_THRESHOLD = 0.8
DEFAULT_PAIRS = 8
"""Pairs a run measures its judge on when the suite does not say (``judge: {calibrate: N}``)."""
CACHE_KIND = "calibration"


@dataclass(frozen=True, slots=True)
class PairScores:
    """The judge's scores of one known pair (one per repeat; None = unscored)."""

    id: str
    domain: str
    good: list[float | None]
    bad: list[float | None]

    @property
    def separated(self) -> bool:
        """Whether the good answer scored strictly higher (mean over repeats)."""
        good, bad = _mean(self.good), _mean(self.bad)
        return good is not None and bad is not None and good > bad

    @property
    def gap(self) -> float | None:
        """Good minus bad (means over repeats), None when either is unscored."""
        good, bad = _mean(self.good), _mean(self.bad)
        return None if good is None or bad is None else good - bad


@dataclass(slots=True)
class Calibration:
    """How well a judge separates known good answers from bad ones."""

    judge: str
    prompt_hash: str
    n_pairs: int
    repeats: int
    separation: float
    mean_gap: float | None
    spread: float | None
    n_unscored: int
    threshold: float = SEPARATION_THRESHOLD
    pairs: list[PairScores] = field(default_factory=list)
    measured_at: str = ""
    n_errors: int = 0
    """Answers left unscored by a failed call (such a measurement is not cached)."""
    first_error: str | None = None
    role: str = "judge"
    """What was measured: ``judge`` (a criteria judge, scores 0-10) or ``grader`` (a field
    grader, accuracies 0-100: see ``qualspec.judges.calibrate_grader``)."""

    @property
    def meaningful(self) -> bool:
        """Whether the separation reaches the threshold."""
        return self.separation >= self.threshold

    @property
    def n_separated(self) -> int:
        """Pairs where the good answer scored higher."""
        return round(self.separation * self.n_pairs)

    @property
    def verdict(self) -> str:
        """One line for people, e.g. ``judge local/smollm2: scores are NOT meaningful: ...``."""
        grader = self.role == "grader"
        what = "grades" if grader else "scores"
        if self.n_unscored >= 2 * self.n_pairs * self.repeats:
            why = f" (first error: {self.first_error})" if self.first_error else ""
            return (
                f"{self.role} {self.judge}: {what} are NOT meaningful: it "
                f"{'graded' if grader else 'scored'} none of the {self.n_pairs} known "
                f"pairs{why}"
            )
        better = (
            "the equal-meaning value was graded higher than the wrong one"
            if grader
            else ("the better answer scored higher")
        )
        how = (
            f"{better} in {self.n_separated} of {self.n_pairs} known pairs (separation "
            f"{self.separation:.2f}"
        )
        if self.meaningful:
            return (
                f"{self.role} {self.judge}: {what} are meaningful: {how} >= {self.threshold:.2f})"
            )
        advice = (
            "use a stronger grader (grader: {model: ...} in the suite, or --judge)"
            if grader
            else "use a stronger judge (--judge) and rely on expect: checks"
        )
        return (
            f"{self.role} {self.judge}: {what} are NOT meaningful: {how} < "
            f"{self.threshold:.2f}); {advice}"
        )

    def by_domain(self) -> dict[str, tuple[int, int]]:
        """Per domain: (pairs separated, pairs)."""
        out: dict[str, tuple[int, int]] = {}
        for pair in self.pairs:
            sep, n = out.get(pair.domain, (0, 0))
            out[pair.domain] = (sep + int(pair.separated), n + 1)
        return out

    def summary(self) -> dict[str, Any]:
        """What a run records in its metadata."""
        return {
            "judge": self.judge,
            "separation": round(self.separation, 4),
            "mean_gap": None if self.mean_gap is None else round(self.mean_gap, 3),
            "spread": None if self.spread is None else round(self.spread, 3),
            "n_pairs": self.n_pairs,
            "n_unscored": self.n_unscored,
            "repeats": self.repeats,
            "meaningful": self.meaningful,
            "verdict": self.verdict,
            "measured_at": self.measured_at,
            "role": self.role,
        }

    def to_json(self) -> str:
        """Serialized for the cache."""
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> Calibration:
        """Read back what :meth:`to_json` wrote."""
        data = json.loads(text)
        data["pairs"] = [PairScores(**p) for p in data.get("pairs", [])]
        return cls(**data)


Scored = tuple[float | None, str | None]
"""One calibration call's score, or the error that left it unscored."""


def _mean(values: Sequence[float | None]) -> float | None:
    scored = [v for v in values if v is not None]
    return sum(scored) / len(scored) if scored else None


async def record_calibration(
    store: Store,
    key: str,
    model: str,
    prompt: str,
    results: Sequence[PairScores],
    *,
    repeats: int,
    errors: Sequence[str],
    role: str = "judge",
) -> Calibration:
    """The measurement of ``model`` (a judge or, with ``role="grader"``, a field grader) on
    scored known pairs, cached in ``store`` under ``key`` unless a call failed (a failed
    call is no property of the model: it is measured again next time)."""
    import asyncio

    from qualspec.store import CacheEntry

    result = calibration_of(model, prompt, results, repeats=repeats, errors=errors, role=role)
    if not errors:
        cached = CacheEntry(
            key=key,
            kind=CACHE_KIND,
            provider="qualspec",
            model=result.judge,
            text=result.to_json(),
            finish_reason=None,
            input_tokens=None,
            output_tokens=None,
            effective_temperature=None,
            structured=None,
            created_at=datetime.now(UTC),
            expires_at=None,
        )
        await asyncio.to_thread(store.cache_put_many, [cached])
    return result


def calibration_of(
    model: str,
    prompt: str,
    results: Sequence[PairScores],
    *,
    repeats: int,
    errors: Sequence[str] = (),
    role: str = "judge",
) -> Calibration:
    """The measurement of ``model`` on scored known pairs (separation, gap, spread)."""
    gaps = [g for g in (p.gap for p in results) if g is not None]
    spreads = [
        statistics.pstdev(s)
        for p in results
        for scores in (p.good, p.bad)
        if len(s := [v for v in scores if v is not None]) > 1
    ]
    return Calibration(
        judge=model,
        prompt_hash=hashlib.sha256(prompt.encode()).hexdigest()[:16],
        n_pairs=len(results),
        repeats=repeats,
        separation=sum(p.separated for p in results) / len(results) if results else 0.0,
        mean_gap=sum(gaps) / len(gaps) if gaps else None,
        spread=(sum(spreads) / len(spreads)) if spreads else (0.0 if repeats > 1 else None),
        n_unscored=sum(v is None for p in results for v in (*p.good, *p.bad)),
        pairs=list(results),
        measured_at=datetime.now(UTC).isoformat(timespec="seconds"),
        n_errors=len(errors),
        first_error=errors[0] if errors else None,
        role=role,
    )
