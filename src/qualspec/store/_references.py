"""Reference answers and their review: status, notes, overrides and the audit trail.

A reference answer (a response of kind ``reference``) is reviewed under its call key, the
cache key of its call (``ResponseRecord.call_key``): every run that reuses it from the
cache sees the same review. A reference with no review row is ``unvalidated``. Every
change appends a row to the audit trail (who, when, action, before, after, notes).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from sqlalchemy import select

from qualspec.errors import UnknownReferenceError
from qualspec.store._clock import now_utc
from qualspec.store._db import Database
from qualspec.store._prefix import only_match
from qualspec.store._reference_records import ReferenceAnswer, ReferenceAuditEntry, ReferenceReview
from qualspec.store._schema import (
    REFERENCE_KIND,
    reference_audit,
    reference_reviews,
    responses,
    runs,
)
from qualspec.store._shared import MAX_ID_LENGTH

__all__ = [
    "GROUND_TRUTH_STATUSES",
    "UNVALIDATED",
    "find_reference",
    "override_reference",
    "reference_answers",
    "reference_reviews_of",
    "set_reference_status",
]

UNVALIDATED = "unvalidated"
GROUND_TRUTH_STATUSES = (UNVALIDATED, "validated", "needs_review", "disputed")
"""What a person said of a reference answer (``unvalidated``: nobody has yet)."""

# the audit action that sets each status
_ACTIONS = {
    "validated": "validate",
    "disputed": "dispute",
    "needs_review": "needs_review",
    UNVALIDATED: "unvalidate",
}
_LIST_HINT = "see `qualspec reference list`"


def _check_status(status: str) -> None:
    if status not in GROUND_TRUTH_STATUSES:
        raise UnknownReferenceError(
            f"unknown reference status '{status}': use one of {', '.join(GROUND_TRUTH_STATUSES)}"
        )


def _reviews(conn: Any, keys: list[str] | None) -> dict[str, ReferenceReview]:
    rv, au = reference_reviews.c, reference_audit.c
    query = select(reference_reviews)
    trail = select(reference_audit).order_by(au.call_key, au.id)
    if keys is not None:
        query = query.where(rv.call_key.in_(keys))
        trail = trail.where(au.call_key.in_(keys))
    out = {
        row.call_key: ReferenceReview(
            call_key=row.call_key,
            status=row.ground_truth_status,
            human_validated_at=row.human_validated_at,
            validation_notes=row.validation_notes,
            override_text=row.override_text,
            updated_at=row.updated_at,
            reviewed_answer_sha256=row.reviewed_answer_sha256,
        )
        for row in conn.execute(query)
    }
    for row in conn.execute(trail):
        review = out.get(row.call_key)
        if review is not None:
            review.audit.append(
                ReferenceAuditEntry(row.who, row.at, row.action, row.before, row.after, row.notes)
            )
    return out


def reference_reviews_of(
    db: Database, call_keys: Iterable[str] | None = None, status: str | None = None
) -> dict[str, ReferenceReview]:
    """The reviews (with their audit trails) of ``call_keys`` (default: every review)."""
    keys = None if call_keys is None else list(dict.fromkeys(call_keys))
    if status is not None:
        _check_status(status)
    with db.read() as conn:
        found = _reviews(conn, keys)
    if status is not None:
        found = {k: r for k, r in found.items() if r.status == status}
    return found


def _latest_answer(conn: Any, call_key: str) -> Any:
    """The newest stored reference response with this call key (its row), or None."""
    r = responses.c
    query = (
        select(responses)
        .where(r.call_key == call_key, r.kind == REFERENCE_KIND)
        .order_by(r.error.is_(None).desc(), r.created_at.desc(), r.id.desc())
        .limit(1)
    )
    return conn.execute(query).mappings().first()


def _write(
    db: Database,
    call_key: str,
    who: str,
    notes: str | None,
    *,
    status: str | None = None,
    override: str | None = None,
) -> ReferenceReview:
    now = now_utc()
    with db.write() as conn:
        row = _latest_answer(conn, call_key)
        known = _reviews(conn, [call_key]).get(call_key)
        if row is None and known is None:
            raise UnknownReferenceError(
                f"no reference answer with call key '{call_key}': {_LIST_HINT}"
            )
        review = known or ReferenceReview(call_key=call_key, status=UNVALIDATED)
        entries: list[dict[str, Any]] = []
        if override is not None:
            before = review.override_text
            if before is None and row is not None:
                before = row["text"]
            entries.append({"action": "override", "before": before, "after": override})
            review.override_text = override
            status = "validated"  # a person wrote the answer: it is the ground truth
        if status is not None and (status != review.status or override is None):
            entries.append({"action": _ACTIONS[status], "before": review.status, "after": status})
            review.status = status
            review.human_validated_at = now if status == "validated" else None
        if override is not None:
            review.human_validated_at = now  # a person wrote it just now
        if notes is not None:
            review.validation_notes = notes
        if row is not None and row["text"] is not None:
            review.reviewed_answer_sha256 = hashlib.sha256(row["text"].encode()).hexdigest()
        review.updated_at = now
        values = {
            "ground_truth_status": review.status,
            "human_validated_at": review.human_validated_at,
            "validation_notes": review.validation_notes,
            "override_text": review.override_text,
            "reviewed_answer_sha256": review.reviewed_answer_sha256,
            "updated_at": now,
        }
        ins = db.insert(reference_reviews).values(call_key=call_key, **values)
        conn.execute(ins.on_conflict_do_update(index_elements=["call_key"], set_=values))
        for entry in entries:
            conn.execute(
                reference_audit.insert().values(
                    call_key=call_key, who=who, at=now, notes=notes, **entry
                )
            )
            review.audit.append(
                ReferenceAuditEntry(
                    who, now, entry["action"], entry["before"], entry["after"], notes
                )
            )
    return review


def set_reference_status(
    db: Database, call_key: str, status: str, notes: str | None, who: str
) -> ReferenceReview:
    """Set a reference's status (with notes); one audit row (before, after: statuses)."""
    _check_status(status)
    return _write(db, call_key, who, notes, status=status)


def override_reference(
    db: Database, call_key: str, text: str, notes: str | None, who: str
) -> ReferenceReview:
    """Replace a reference answer by ``text``: graders use it instead from now on.

    The audit trail gets the override (before: the previous override or the model's
    answer; after: ``text``) and, when the status changes, the change to ``validated``.
    """
    return _write(db, call_key, who, notes, override=text)


def find_reference(db: Database, ident: str) -> str:
    """The call key of the one reference answer whose call key is ``ident`` or starts
    with it (UnknownReferenceError when none or several match)."""
    if len(ident) > MAX_ID_LENGTH:  # no call key is that long (and SQLite refuses such a LIKE)
        raise UnknownReferenceError(
            f"no reference answer with an id of {len(ident)} characters "
            f"('{ident[:40]}...'): {_LIST_HINT}"
        )
    r = responses.c
    with db.read() as conn:
        query = (
            select(r.call_key)
            .where(r.kind == REFERENCE_KIND, r.call_key.is_not(None))
            .where(r.call_key.startswith(ident, autoescape=True))
            .distinct()
            .order_by(r.call_key)
            .limit(6)
        )
        found = [str(k) for k in conn.execute(query).scalars()]
        if not found:
            rv = reference_reviews.c
            reviewed = select(rv.call_key).where(rv.call_key.startswith(ident, autoescape=True))
            found = [str(k) for k in conn.execute(reviewed.limit(6)).scalars()]
    if ident in found:
        return ident
    return only_match(
        ident,
        found,
        error=UnknownReferenceError,
        noun="reference answer",
        kind="reference",
        plural="references",
        hint=_LIST_HINT,
    )


def reference_answers(
    db: Database,
    status: str | None = None,
    run_id: str | None = None,
    call_keys: Iterable[str] | None = None,
) -> list[ReferenceAnswer]:
    """The distinct reference answers (by call key), newest first, with their review.

    Each is its newest stored answer (a success before an error) with the run that
    recorded it last; ``run_id`` keeps those that run used, ``status`` those with that
    status (as it applies to the newest answer: see ``ReferenceReview.status_for``).
    """
    if status is not None:
        _check_status(status)
    r = responses.c
    query = (
        select(
            r.call_key,
            r.run_id,
            r.provider,
            r.model,
            r.scenario,
            r.input_id,
            r.text,
            r.error,
            r.created_at,
            runs.c.started_at,
            runs.c.metadata,
        )
        .join(runs, runs.c.id == r.run_id)
        .where(r.kind == REFERENCE_KIND, r.call_key.is_not(None), ~r.superseded)
    )
    if call_keys is not None:
        query = query.where(r.call_key.in_(list(call_keys)))
    with db.read() as conn:
        rows = conn.execute(query).all()
        in_run = {row.call_key for row in rows if row.run_id == run_id}
        latest: dict[str, Any] = {}
        first_seen: dict[str, datetime] = {}
        runs_of: dict[str, set[str]] = {}
        for row in rows:
            runs_of.setdefault(row.call_key, set()).add(row.run_id)
            seen = first_seen.get(row.call_key)
            if seen is None or row.created_at < seen:
                first_seen[row.call_key] = row.created_at
            best = latest.get(row.call_key)
            if best is None or _newer(row, best):
                latest[row.call_key] = row
        reviews = _reviews(conn, list(latest))
        others = _other_reviews(conn, {k: row for k, row in latest.items() if k not in reviews})
    out = []
    for key, row in latest.items():
        if run_id is not None and key not in in_run:
            continue
        review = reviews.get(key) or ReferenceReview(call_key=key, status=UNVALIDATED)
        answer = ReferenceAnswer(
            call_key=key,
            provider=row.provider,
            model=row.model,
            scenario=row.scenario,
            input_id=row.input_id,
            text=row.text,
            error=row.error,
            created_at=first_seen[key],
            latest_run=row.run_id,
            runs=len(runs_of[key]),
            review=review,
            output_schema=_output_schema(row.metadata, row.scenario),
            other_review=others.get(key),
        )
        if status is not None and answer.current_status() != status:
            continue
        out.append(answer)
    out.sort(key=lambda a: (a.created_at, a.call_key), reverse=True)
    return out


def _other_reviews(conn: Any, unreviewed: dict[str, Any]) -> dict[str, ReferenceReview]:
    """For each unreviewed reference (call key -> its row), the latest review of another
    reference of the same scenario and input (asked with another prompt or model)."""
    if not unreviewed:
        return {}
    r = responses.c
    scenarios = sorted({row.scenario for row in unreviewed.values()})
    query = (
        select(r.call_key, r.scenario, r.input_id)
        .where(r.kind == REFERENCE_KIND, r.call_key.is_not(None), r.scenario.in_(scenarios))
        .distinct()
    )
    siblings: dict[tuple[str, str | None], set[str]] = {}
    for row in conn.execute(query):
        siblings.setdefault((row.scenario, row.input_id), set()).add(str(row.call_key))
    wanted = {k for keys in siblings.values() for k in keys} - set(unreviewed)
    reviews = _reviews(conn, sorted(wanted)) if wanted else {}
    out: dict[str, ReferenceReview] = {}
    for key, row in unreviewed.items():
        found = [
            reviews[k]
            for k in siblings.get((row.scenario, row.input_id), ())
            if k != key and k in reviews and reviews[k].status != UNVALIDATED
        ]
        if found:
            out[key] = max(found, key=lambda v: (v.updated_at is not None, v.updated_at))
    return out


def _newer(row: Any, best: Any) -> bool:
    """Whether ``row`` is a better "latest" answer than ``best``: a success over an error,
    then the later run, then the later answer."""
    return (row.error is None, row.started_at, row.created_at) > (
        best.error is None,
        best.started_at,
        best.created_at,
    )


def _output_schema(metadata: Any, scenario: str) -> Any:
    """The scenario's ``output_schema`` as the run recorded it (metadata
    ``output_schemas``: scenario -> schema), else, for a run recorded before runs kept
    their schemas, the fields its field grader graded (``{"fields": [...]}``), or None."""
    meta = metadata if isinstance(metadata, dict) else {}
    schemas = meta.get("output_schemas")
    if isinstance(schemas, dict) and schemas.get(scenario) is not None:
        return schemas.get(scenario)
    for evaluator in meta.get("evaluators") or ():
        if not isinstance(evaluator, dict) or evaluator.get("type") != "field_grader":
            continue
        fields = ((evaluator.get("options") or {}).get("fields") or {}).get(scenario)
        if isinstance(fields, list) and fields:
            names = [f.get("name") if isinstance(f, dict) else f for f in fields]
            return {"fields": [{"name": n} for n in names if isinstance(n, str)]}
    return None
