"""The records of a reference answer's review (see ``Store.reference_reviews``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, NamedTuple

__all__ = ["ReferenceAnswer", "ReferenceAuditEntry", "ReferenceReview"]


class ReferenceAuditEntry(NamedTuple):
    """One change to a reference answer's review.

    ``action`` is ``validate``, ``dispute``, ``needs_review``, ``unvalidate`` (``before``
    and ``after`` are statuses) or ``override`` (they are answer texts: the model's answer
    or the previous override, and the new override).
    """

    who: str
    when: datetime
    action: str
    before: str | None
    after: str | None
    notes: str | None


@dataclass(slots=True)
class ReferenceReview:
    """What people said of a reference answer, by its call (cache) key.

    ``status`` is the ground-truth status: ``unvalidated`` (nobody has reviewed it; it is
    used as it is), ``validated`` (a person checked it, or wrote it: an override),
    ``needs_review`` (to be looked at) or ``disputed`` (a person thinks it is wrong).
    ``human_validated_at`` is when it was last validated (None unless validated);
    ``override_text``, when set, is what graders grade against instead of the model's
    answer. ``reviewed_answer_sha256`` is the SHA-256 of the model's answer the status
    was given to: when the answer is regenerated (its cache entry expired) and differs,
    the status no longer applies (see ``answer_changed``). ``audit`` lists every change,
    oldest first.
    """

    call_key: str
    status: str = "unvalidated"
    human_validated_at: datetime | None = None
    validation_notes: str | None = None
    override_text: str | None = None
    updated_at: datetime | None = None
    audit: list[ReferenceAuditEntry] = field(default_factory=list)
    reviewed_answer_sha256: str | None = None

    def answer_changed(self, text: str | None) -> bool:
        """Whether ``text`` (the model's answer now) is not the answer that was reviewed."""
        if self.reviewed_answer_sha256 is None or text is None:
            return False
        import hashlib

        return hashlib.sha256(text.encode("utf-8")).hexdigest() != self.reviewed_answer_sha256

    def status_for(self, text: str | None) -> str:
        """The status that applies to the model's answer ``text``: ``needs_review`` when a
        person reviewed another answer (and wrote no override), else ``status``."""
        if self.override_text is None and self.answer_changed(text):
            return "needs_review"
        return self.status


@dataclass(slots=True)
class ReferenceAnswer:
    """A distinct reference answer in the store (see ``Store.reference_answers``).

    ``text``/``error`` are its newest stored answer (the model's, not an override: see
    ``review.override_text``); ``created_at`` when it was first recorded; ``latest_run``
    the newest run that used it, of ``runs`` runs in all; ``output_schema`` the
    scenario's output schema as that run recorded it (None when it recorded none).
    ``other_review`` is, for a reference nobody has reviewed, the latest review of a
    reference of the same scenario and input asked differently (another prompt version
    or model): reviews are kept per call key, so it does not apply to this one, which
    then reads ``needs_review`` (see ``current_status``).
    """

    call_key: str
    provider: str
    model: str
    scenario: str
    input_id: str | None
    text: str | None
    error: str | None
    created_at: datetime
    latest_run: str
    runs: int
    review: ReferenceReview
    output_schema: Any = None
    other_review: ReferenceReview | None = None

    def current_status(self) -> str:
        """The status that applies to this answer now: its review's (``status_for``), or
        ``needs_review`` when it has none but the same input's reference under another
        prompt version was reviewed (that review does not carry over)."""
        if self.review.updated_at is None and self.other_review is not None:
            return "needs_review"
        return self.review.status_for(self.text)
