"""People's labels of a run's answers: written all or nothing, read back by answer.

A label is keyed by (run, response key, criterion, labeller). Writing the same labels
again changes nothing (not even who imported them, or when); a label whose score,
pass/fail or notes differ is updated, with the new import's who, when and file.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from sqlalchemy import select, update

from qualspec.store._clock import now_utc
from qualspec.store._db import Database
from qualspec.store._label_records import LabelCounts, LabelRecord
from qualspec.store._results import criterion_hash
from qualspec.store._schema import labels

__all__ = ["labels_of", "record_labels"]

_BATCH = 500  # response keys per IN (...) of a read


def _key(response_key: str, criterion: str, labeller: str) -> tuple[str, str, str]:
    return (response_key, criterion_hash(criterion), labeller)


def _same(row: Any, label: LabelRecord) -> bool:
    return (row.score, row.passed, row.notes) == (label.score, label.passed, label.notes)


def record_labels(
    db: Database,
    run_id: str,
    records: Sequence[LabelRecord],
    *,
    source_name: str,
    source_sha256: str,
    who: str,
) -> LabelCounts:
    """Add or update ``records`` of run ``run_id`` (its exact id) in one transaction."""
    c = labels.c
    now = now_utc()
    added = changed = unchanged = 0
    with db.write() as conn:
        existing: dict[tuple[str, str, str], Any] = {}
        keys = sorted({r.response_key for r in records})
        for start in range(0, len(keys), _BATCH):
            query = select(labels).where(
                c.run_id == run_id, c.response_key.in_(keys[start : start + _BATCH])
            )
            for row in conn.execute(query):
                existing[(row.response_key, row.criterion_hash, row.labeller)] = row
        new: list[dict[str, Any]] = []
        stamp = {
            "imported_by": who,
            "imported_at": now,
            "source_name": source_name,
            "source_sha256": source_sha256,
        }
        for label in records:
            key = _key(label.response_key, label.criterion, label.labeller)
            values = {"score": label.score, "passed": label.passed, "notes": label.notes}
            found = existing.get(key)
            if found is None:
                new.append(
                    {
                        "run_id": run_id,
                        "response_key": label.response_key,
                        "criterion": label.criterion,
                        "criterion_hash": key[1],
                        "labeller": label.labeller,
                        **values,
                        **stamp,
                    }
                )
                added += 1
            elif _same(found, label):
                unchanged += 1
            else:
                conn.execute(update(labels).where(c.id == found.id).values(**values, **stamp))
                changed += 1
        if new:
            conn.execute(labels.insert(), new)
    return LabelCounts(added, changed, unchanged)


def labels_of(
    db: Database, run_id: str, response_keys: Iterable[str] | None = None
) -> list[LabelRecord]:
    """The run's labels (of ``response_keys`` when given), by answer, criterion, labeller."""
    c = labels.c
    order = (c.response_key, c.criterion, c.labeller)
    queries = []
    if response_keys is None:
        queries.append(select(labels).where(c.run_id == run_id).order_by(*order))
    else:
        keys = sorted(set(response_keys))
        for start in range(0, len(keys), _BATCH):
            part = keys[start : start + _BATCH]
            queries.append(
                select(labels).where(c.run_id == run_id, c.response_key.in_(part)).order_by(*order)
            )
    out: list[LabelRecord] = []
    with db.read() as conn:
        for query in queries:
            out.extend(
                LabelRecord(
                    response_key=row.response_key,
                    criterion=row.criterion,
                    score=row.score,
                    passed=row.passed,
                    labeller=row.labeller,
                    notes=row.notes,
                    imported_by=row.imported_by,
                    imported_at=row.imported_at,
                    source_name=row.source_name,
                    source_sha256=row.source_sha256,
                )
                for row in conn.execute(query)
            )
    if response_keys is not None:
        out.sort(key=lambda r: (r.response_key, r.criterion, r.labeller))
    return out
