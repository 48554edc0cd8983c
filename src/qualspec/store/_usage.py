"""What a call (or an evaluation's calls) used: the call-accounting fields, declared once.

:class:`Usage` is what the engine's replies carry. The records store the same fields flat,
one column each (:class:`~qualspec.store.ResponseRecord`,
:class:`~qualspec.store.JudgmentRecord`); the tables' columns for them are generated from
this declaration (``_schema.usage_columns``), so a field is added here, in the records and in a
migration, never typed out twice.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

__all__ = ["USAGE_FIELDS", "Usage"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Usage:
    """The accounting of one call, or of the calls one evaluation made.

    ``latency_s`` is service time (seconds the provider took, over every attempt),
    ``queue_s`` the seconds spent waiting for a concurrency slot; ``cost_usd`` is None when
    the price is unknown (0 for an answer from the cache); ``error`` says why the call
    failed (None: it answered). The defaults are a record's: one attempt, nothing measured.

    Example: ``Usage(input_tokens=12, output_tokens=3, latency_s=0.4, cost_usd=0.0001)``.
    """

    input_tokens: int | None = None
    output_tokens: int | None = None
    latency_s: float | None = None
    queue_s: float | None = None
    cost_usd: float | None = None
    attempts: int = 1
    error: str | None = None
    cached: bool = False

    def as_fields(self) -> dict[str, Any]:
        """The fields by name: what a record is built with (``**usage.as_fields()``)."""
        return {name: getattr(self, name) for name in USAGE_FIELDS}


USAGE_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(Usage))
"""The call-accounting fields, in their declared order."""
