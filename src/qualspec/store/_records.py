"""Plain records that move between the engine, the store and the reports."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from datetime import datetime
from types import SimpleNamespace
from typing import Any, Protocol

from qualspec.store._usage import USAGE_FIELDS, Usage

__all__ = [
    "Answered",
    "CacheEntry",
    "JudgmentRecord",
    "PromptVersion",
    "ResponseRecord",
    "RunRecord",
    "RunSummary",
]


class Answered(Protocol):
    """What a record is made from (the engine's ``Reply``): the answer and its usage."""

    @property
    def text(self) -> str | None: ...

    @property
    def finish_reason(self) -> str | None: ...

    @property
    def effective_temperature(self) -> float | None: ...

    @property
    def usage(self) -> Usage: ...

    @property
    def served_by(self) -> str | None: ...


class _Accounted:
    """A record with the call-accounting fields of :class:`Usage` (stored flat)."""

    __slots__ = ()

    @property
    def usage(self) -> Usage:
        """The record's call-accounting fields as one value."""
        return Usage(**{name: getattr(self, name) for name in USAGE_FIELDS})


@dataclass(slots=True)
class ResponseRecord(_Accounted):
    """One candidate call's outcome (a success or an error), keyed by work-item key.

    The fields from ``input_tokens`` to ``cached`` (but ``finish_reason``) are the call's
    :class:`Usage` (:attr:`usage`); :meth:`from_reply` builds a record from an answer.
    """

    key: str
    candidate: str
    role: str | None
    scenario: str
    input_id: str | None
    # None: no temperature was sent (the provider's default); effective_temperature is
    # then the provider's known default, or None
    temperature: float | None
    effective_temperature: float | None
    run_index: int
    provider: str
    model: str
    text: str | None = None
    finish_reason: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    latency_s: float | None = None
    # seconds waited for a concurrency slot before the call (latency_s is service time)
    queue_s: float | None = None
    cost_usd: float | None = None
    attempts: int = 1
    error: str | None = None
    cached: bool = False
    # prompt part name -> prompt version id (see Store.prompt_version)
    prompt_versions: dict[str, int] = field(default_factory=dict)
    created_at: datetime | None = None
    # what made the call: candidate (a matrix cell), reference, lab, adhoc, ...
    kind: str = "candidate"
    # a resumed run's current plan no longer asks for it (kept, but not counted)
    superseded: bool = False
    # the call's cache key (shared across runs: a reference answer is reviewed under it);
    # None for rows recorded before it was kept
    call_key: str | None = None
    # the input row's values the prompt was rendered with (None: the scenario has no
    # inputs, or the answer was recorded before rows were stored); loaded records of one
    # row share one mapping: read it, never change it
    input_values: dict[str, Any] | None = None
    # the stored row's hash (the store sets it from ``input_values``)
    input_hash: str | None = None
    # where it was served: the replica's base URL (a provider's base_urls) or the Ray node
    # (``ray:<node id>``); None for one server, an answer from the cache, or older rows
    served_by: str | None = None

    @property
    def ok(self) -> bool:
        """True when the call produced text."""
        return self.error is None

    @classmethod
    def from_reply(
        cls,
        reply: Answered,
        *,
        key: str,
        candidate: str,
        provider: str,
        model: str,
        scenario: str = "",
        role: str | None = None,
        input_id: str | None = None,
        temperature: float | None = None,
        run_index: int = 0,
        kind: str = "candidate",
        call_key: str | None = None,
        prompt_versions: dict[str, int] | None = None,
        created_at: datetime | None = None,
        input_values: Mapping[str, Any] | None = None,
    ) -> ResponseRecord:
        """The record of ``reply`` (its text, effective temperature and :class:`Usage`)
        under the given identity: where it belongs in a run (``key``, the matrix cell) and
        what made it (``kind``, ``call_key``: the call's cache key; ``input_values``: the
        input row the prompt was rendered with, stored once per row).

        Example::

            ResponseRecord.from_reply(reply, key="k", candidate="c", provider="openai",
                                      model="gpt-4o-mini", kind="adhoc")
        """
        usage = reply.usage
        return cls._of_item(
            SimpleNamespace(
                key=key,
                candidate=candidate,
                role=role,
                scenario=scenario,
                input_id=input_id,
                temperature=temperature,
                run_index=run_index,
                provider=provider,
                model=model,
                kind=kind,
                input_values=input_values,
            ),
            SimpleNamespace(
                text=reply.text,
                finish_reason=reply.finish_reason,
                input_tokens=usage.input_tokens,
                output_tokens=usage.output_tokens,
            ),
            effective_temperature=reply.effective_temperature,
            latency_s=usage.latency_s,
            queue_s=usage.queue_s,
            cost_usd=usage.cost_usd,
            attempts=usage.attempts,
            error=usage.error,
            cached=usage.cached,
            call_key=call_key,
            prompt_versions={} if prompt_versions is None else prompt_versions,
            created_at=created_at,
            served_by=reply.served_by,
        )

    @classmethod
    def from_call(
        cls,
        answer: Any,
        usage: Any,
        *,
        effective_temperature: float | None,
        served_by: str | None,
        identity: Any,
        call_key: str,
        prompt_versions: dict[str, int],
        created_at: datetime,
    ) -> ResponseRecord:
        """What :meth:`from_reply` makes, without a reply in between (the engine's answered
        call): ``answer`` has ``text``, ``finish_reason`` and token counts (None: the call
        failed); ``usage`` ``latency``, ``queue``, ``cost``, ``attempts`` and ``error``
        (the engine's ``Outcome``); ``identity`` the work item (see :meth:`_of_item`)."""
        return cls._of_item(
            identity,
            answer,
            effective_temperature=effective_temperature,
            latency_s=usage.latency,
            queue_s=usage.queue,
            cost_usd=usage.cost,
            attempts=usage.attempts,
            error=usage.error,
            cached=False,
            call_key=call_key,
            prompt_versions=prompt_versions,
            created_at=created_at,
            served_by=served_by,
        )

    @classmethod
    def from_cache_entry(
        cls,
        entry: CacheEntry,
        *,
        identity: Any,
        prompt_versions: dict[str, int],
        created_at: datetime | None,
    ) -> ResponseRecord:
        """What :meth:`from_reply` makes of the reply of a cache entry read in bulk
        (nothing paid, no attempt, no queue time; ``entry.key`` the ``call_key``)."""
        return cls._of_item(
            identity,
            entry,
            effective_temperature=entry.effective_temperature,
            latency_s=0.0,
            queue_s=None,
            cost_usd=0.0,
            attempts=0,
            error=None,
            cached=True,
            call_key=entry.key,
            prompt_versions=prompt_versions,
            created_at=created_at,
            served_by=None,
        )

    @classmethod
    def _of_item(
        cls,
        identity: Any,
        answer: Any,
        *,
        effective_temperature: float | None,
        latency_s: float | None,
        queue_s: float | None,
        cost_usd: float | None,
        attempts: int,
        error: str | None,
        cached: bool,
        call_key: str | None,
        prompt_versions: dict[str, int],
        created_at: datetime | None,
        served_by: str | None,
    ) -> ResponseRecord:
        """The record of ``identity``'s cell (a work item: ``key``, ``candidate``, ...,
        ``kind``, ``input_values``) answered with ``answer`` (None: no answer), made once
        per cell of a large run: its fields named once, no dict of them in between."""
        values = identity.input_values
        return cls(
            key=identity.key,
            candidate=identity.candidate,
            role=identity.role,
            scenario=identity.scenario,
            input_id=identity.input_id,
            temperature=identity.temperature,
            effective_temperature=effective_temperature,
            run_index=identity.run_index,
            provider=identity.provider,
            model=identity.model,
            text=None if answer is None else answer.text,
            finish_reason=None if answer is None else answer.finish_reason,
            input_tokens=None if answer is None else answer.input_tokens,
            output_tokens=None if answer is None else answer.output_tokens,
            latency_s=latency_s,
            queue_s=queue_s,
            cost_usd=cost_usd,
            attempts=attempts,
            error=error,
            cached=cached,
            prompt_versions=prompt_versions,
            created_at=created_at,
            kind=identity.kind,
            call_key=call_key,
            # a dict is kept as it is: the store encodes one object once per batch
            input_values=values if values is None or type(values) is dict else dict(values),
            served_by=served_by,
        )


@dataclass(slots=True)
class JudgmentRecord(_Accounted):
    """One evaluation record: what one evaluator concluded about one subject on one aspect.

    The criteria judge writes one per (response, criterion). In general:

    * ``evaluator`` names the evaluator that produced it (its name in the suite:
      ``criteria``, ``second_opinion``, ...); ``(evaluator, response_key, criterion)`` is
      unique within a run.
    * ``response_key`` is the subject's key: a response key, or for a subject made of
      several responses (a group) a key derived from them; ``subject`` then lists the
      response keys (``None`` means ``[response_key]``).
    * ``criterion`` is the aspect judged (a criterion, a field, ...), unbounded text.
    * ``score`` is None when unscored; ``scores`` holds several (per field, per response).
    * ``details`` holds evaluator-specific data (a winner, an order seed, ...).
    * ``prompt_version`` is the id of the evaluator's own prompt version.
    """

    response_key: str
    criterion: str
    judge_key: str
    judge_model: str | None
    threshold: float | None
    score: float | None = None
    passed: bool | None = None
    reasoning: str | None = None
    unscored_reason: str | None = None
    raw_text: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    latency_s: float | None = None
    # seconds waited for a concurrency slot before the call (latency_s is service time)
    queue_s: float | None = None
    cost_usd: float | None = None
    attempts: int = 1
    error: str | None = None
    cached: bool = False
    prompt_version: int | None = None
    created_at: datetime | None = None
    evaluator: str = "criteria"
    subject: list[str] | None = None
    scores: dict[str, float | None] | None = None
    details: dict[str, Any] | None = None
    # a resumed run's current plan no longer asks for it (kept, but not counted)
    superseded: bool = False

    @property
    def served_by(self) -> str | None:
        """The replica that answered the evaluation's model call (``details["served_by"]``:
        a base URL of a provider's ``base_urls``); None for one server, a cached answer or
        an evaluation without a call."""
        found = self.details.get("served_by") if isinstance(self.details, dict) else None
        return found if isinstance(found, str) else None


@dataclass(slots=True)
class RunSummary:
    """A run's row, without its results."""

    id: str
    suite_name: str
    suite_hash: str
    # running | finished | interrupted | failed | budget_exceeded; a run still recorded as
    # running whose owner process is gone reads failed (metadata["failure"] says why)
    status: str
    started_at: datetime
    finished_at: datetime | None
    metadata: dict[str, Any] = field(default_factory=dict)
    n_responses: int = 0
    n_judgments: int = 0
    cost_usd: float | None = 0.0  # None when a call's price is unknown
    # added with the store: the split of ``cost_usd`` and what cached calls saved
    n_errors: int = 0
    n_unscored: int = 0
    n_cached: int = 0
    candidate_cost_usd: float | None = 0.0
    judge_cost_usd: float | None = 0.0
    owner_pid: int | None = None
    owner_host: str | None = None
    heartbeat_at: datetime | None = None

    @property
    def failure(self) -> str | None:
        """Why a failed run failed (one line), or None."""
        reason = self.metadata.get("failure")
        return str(reason) if self.status == "failed" and reason else None

    def is_of_suite(self, name: str, path: str | None, content_hash: str | None) -> bool:
        """Whether this is a run of the suite named ``name`` in file ``path``.

        A suite is its name and its file (resolved path, as in the run's metadata
        ``suite_path``) or its content (``content_hash``, as at the run's start or its
        last resume): two files that share a ``name:`` are different suites, and a suite
        file moved or copied unchanged is the same one. With neither ``path`` nor
        ``content_hash`` given, the name alone decides.
        """
        return suite_matches(
            self.suite_name, self.suite_hash, self.metadata, name, path, content_hash
        )


def suite_matches(
    run_suite_name: str,
    run_suite_hash: str,
    run_metadata: dict[str, Any] | None,
    name: str,
    path: str | None,
    content_hash: str | None,
) -> bool:
    """``RunSummary.is_of_suite`` on a run's stored fields."""
    if run_suite_name != name:
        return False
    if path is None and content_hash is None:
        return True
    meta = run_metadata or {}
    if path is not None and meta.get("suite_path") == path:
        return True
    hashes = {run_suite_hash, meta.get("suite_hash")}
    return content_hash is not None and content_hash in hashes


@dataclass(slots=True)
class RunRecord:
    """A whole run as stored: the source of every export and report.

    ``responses`` and ``judgments`` are the current rows: what the run's plan (as last
    run or resumed) asks for, the only rows reports, totals and diffs count. Rows an
    earlier version of the plan made (a resume after an edit, or with another judge)
    are in ``superseded_responses`` and ``superseded_judgments``, loaded only on request
    (``Store.load_run(run_id, include_superseded=True)``). Records given in
    ``responses`` or ``judgments`` with ``superseded`` set are moved there.
    """

    summary: RunSummary
    responses: list[ResponseRecord] = field(default_factory=list)
    judgments: list[JudgmentRecord] = field(default_factory=list)
    superseded_responses: list[ResponseRecord] = field(default_factory=list)
    superseded_judgments: list[JudgmentRecord] = field(default_factory=list)

    def __post_init__(self) -> None:
        if any(r.superseded for r in self.responses):
            self.superseded_responses += [r for r in self.responses if r.superseded]
            self.responses = [r for r in self.responses if not r.superseded]
        if any(j.superseded for j in self.judgments):
            self.superseded_judgments += [j for j in self.judgments if j.superseded]
            self.judgments = [j for j in self.judgments if not j.superseded]


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


RESPONSE_FIELDS = tuple(f.name for f in fields(ResponseRecord) if f.name != "input_values")
"""A response's fields stored in columns of the same name (its input row is stored apart)."""
JUDGMENT_FIELDS = tuple(f.name for f in fields(JudgmentRecord))
"""An evaluation record's fields, each stored in a column of the same name."""


def response_from_row(row: Any) -> ResponseRecord:
    """A response as read from a row of ``responses`` (a mapping of its columns)."""
    return ResponseRecord(**{name: row[name] for name in RESPONSE_FIELDS})


def judgment_from_row(row: Any) -> JudgmentRecord:
    """An evaluation record as read from a row of ``judgments``."""
    return JudgmentRecord(**{name: row[name] for name in JUDGMENT_FIELDS})
