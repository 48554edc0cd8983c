"""The run page's query: what a request's query string asks the run explorer to show
(the parameters are described in :mod:`qualspec.web._explore`), and how a score is written."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["FILTERS", "MAX_PER", "NONE", "PER_PAGE", "SORTS", "Query", "num_text", "score_text"]

PER_PAGE = 50
MAX_PER = 500
NONE = "-"  # how a missing role or input is written in a filter
SORTS = {
    "suite": "suite order",
    "score": "score, lowest first",
    "-score": "score, highest first",
    "candidate": "candidate",
    "latency": "latency, slowest first",
    "cost": "cost, dearest first",
}
FILTERS = ("candidate", "role", "scenario", "input", "temperature", "evaluator")
_MAX_Q = 500  # characters of a search kept


def score_text(score: float | None, threshold: float | None = None, scale: int = 10) -> str:
    """A score as ``7.5/10``, with enough decimals that a score under ``threshold`` never
    reads as the threshold (``6.96/10``, not ``7/10``, where 7 passes); ``-`` for none."""
    if score is None:
        return "-"
    text = f"{score:.1f}".rstrip("0").rstrip(".") if score % 1 else f"{score:.0f}"
    digits = 1
    while threshold is not None and score < threshold and float(text) >= threshold:
        digits += 1
        text = f"{score:.{digits}f}"
        if digits >= 6:
            break
    return f"{text}/{scale}"


def num_text(value: float) -> str:
    """A number without a needless ``.0``."""
    return f"{value:.1f}".rstrip("0").rstrip(".") if value % 1 else f"{value:.0f}"


@dataclass(frozen=True, slots=True)
class Query:
    """What the run page was asked to show (see the module docstring)."""

    failed: bool = False
    candidate: str = ""
    role: str = ""
    scenario: str = ""
    input: str = ""
    temperature: str = ""
    criterion: str = ""
    check: str = ""
    evaluator: str = ""
    q: str = ""
    sort: str = "suite"
    page: int = 1
    per: int = PER_PAGE

    @classmethod
    def from_params(cls, params: Mapping[str, str]) -> Query:
        """The query of a request's query string; values it cannot read fall back to the
        defaults (a page number past the end shows the last page)."""

        def text(name: str) -> str:
            return str(params.get(name, "") or "").strip()[:_MAX_Q]

        def whole(name: str, default: int, low: int, high: int) -> int:
            try:
                return min(high, max(low, int(text(name))))
            except ValueError:
                return default

        sort = text("sort")
        return cls(
            failed=text("failed").lower() in ("1", "true", "on", "yes"),
            **{name: text(name) for name in (*FILTERS, "criterion", "check", "q")},
            sort=sort if sort in SORTS else "suite",
            page=whole("page", 1, 1, 10**9),
            per=whole("per", PER_PAGE, 1, MAX_PER),
        )

    def params(self, **changes: Any) -> dict[str, str]:
        """The query string's parameters (defaults left out), with ``changes`` made."""
        values = {
            "failed": "1" if self.failed else "",
            **{name: getattr(self, name) for name in (*FILTERS, "criterion", "check", "q")},
            "sort": "" if self.sort == "suite" else self.sort,
            "page": "" if self.page == 1 else str(self.page),
            "per": "" if self.per == PER_PAGE else str(self.per),
        }
        for name, value in changes.items():
            values[name] = "" if value is None or value is False else str(value)
            if value is True:
                values[name] = "1"
        return {k: v for k, v in values.items() if v}

    @property
    def filtered(self) -> bool:
        """Whether anything narrows the answers."""
        return self.failed or any(getattr(self, n) for n in (*FILTERS, "criterion", "check", "q"))
