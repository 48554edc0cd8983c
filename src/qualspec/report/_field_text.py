"""How the field-grade summaries (:mod:`._console_fields`, :mod:`._html_fields`) write a
percentage, a score, a price and a suite's call cost."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from qualspec.analysis import CallCost

__all__ = ["call_cost_text", "money_text", "pct_text", "score_text"]


def pct_text(value: float | None) -> str:
    """``87%``, or ``-`` without a value."""
    return "-" if value is None else f"{value:.0f}%"


def score_text(value: float | None) -> str:
    """``8.4``, or ``-`` without a value."""
    return "-" if value is None else f"{value:.1f}"


def money_text(cost: float | None) -> str:
    """``$0.0123``, or ``price unknown``."""
    return "price unknown" if cost is None else f"${cost:.4f}"


def call_cost_text(cost: CallCost) -> str:
    """Calls, cached calls, tokens and price, on one line."""
    cached = f", {cost.cached} cached (saved)" if cost.cached else ""
    return (
        f"{cost.calls} calls{cached}, {cost.input_tokens} in / {cost.output_tokens} out tokens, "
        f"{money_text(cost.cost_usd)}"
    )
