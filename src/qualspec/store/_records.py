"""Plain records that move between the engine, the store and the reports."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

__all__ = [
    "CacheEntry",
    "JudgmentRecord",
    "PromptVersion",
    "ResponseRecord",
    "RunRecord",
    "RunSummary",
]


@dataclass(slots=True)
class ResponseRecord:
    """One candidate call's outcome (a success or an error), keyed by work-item key."""

    key: str
    candidate: str
    role: str | None
    scenario: str
    input_id: str | None
    temperature: float
    effective_temperature: float | None
    run_index: int
    provider: str
    model: str
    text: str | None = None
    finish_reason: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    latency_s: float | None = None
    cost_usd: float | None = None
    attempts: int = 1
    error: str | None = None
    cached: bool = False
    # prompt part name -> prompt version id (see Store.prompt_version)
    prompt_versions: dict[str, int] = field(default_factory=dict)
    created_at: datetime | None = None

    @property
    def ok(self) -> bool:
        """True when the call produced text."""
        return self.error is None


@dataclass(slots=True)
class JudgmentRecord:
    """One criterion judged for one response. ``score`` is None when unscored."""

    response_key: str
    criterion: str
    judge_key: str
    judge_model: str
    threshold: float
    score: float | None = None
    passed: bool | None = None
    reasoning: str | None = None
    unscored_reason: str | None = None
    raw_text: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    latency_s: float | None = None
    cost_usd: float | None = None
    attempts: int = 1
    error: str | None = None
    cached: bool = False
    prompt_version: int | None = None
    created_at: datetime | None = None


@dataclass(slots=True)
class RunSummary:
    """A run's row, without its results."""

    id: str
    suite_name: str
    suite_hash: str
    status: str  # running | finished | interrupted | failed | budget_exceeded
    started_at: datetime
    finished_at: datetime | None
    metadata: dict[str, Any] = field(default_factory=dict)
    n_responses: int = 0
    n_judgments: int = 0
    cost_usd: float = 0.0
    # added with the store: the split of ``cost_usd`` and what cached calls saved
    n_errors: int = 0
    n_unscored: int = 0
    n_cached: int = 0
    candidate_cost_usd: float = 0.0
    judge_cost_usd: float = 0.0
    owner_pid: int | None = None
    owner_host: str | None = None
    heartbeat_at: datetime | None = None


@dataclass(slots=True)
class RunRecord:
    """A whole run as stored: the source of every export and report."""

    summary: RunSummary
    responses: list[ResponseRecord] = field(default_factory=list)
    judgments: list[JudgmentRecord] = field(default_factory=list)


@dataclass(slots=True)
class CacheEntry:
    """A successful model answer, shared across runs by its work-item key.

    ``kind`` says what made the call (``candidate``, ``judge``, ``reference``, ...);
    ``expires_at`` is None when the entry never expires. Entries carrying an ``error``
    are never stored.
    """

    key: str
    kind: str
    provider: str
    model: str
    text: str | None = None
    finish_reason: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    effective_temperature: float | None = None
    structured: Any = None
    created_at: datetime | None = None
    expires_at: datetime | None = None
    error: str | None = None


@dataclass(frozen=True, slots=True)
class PromptVersion:
    """One stored prompt text: ``version`` counts up per ``name``, by content hash."""

    id: int
    name: str
    version: int
    content_hash: str
    text: str
    created_at: datetime
