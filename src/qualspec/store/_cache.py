"""The call cache: content-addressed by work-item key, shared across runs, with expiry."""

from __future__ import annotations

import operator
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Text, and_, case, cast, delete, func, or_, select
from sqlalchemy.types import LargeBinary

from qualspec.store._clock import now_utc
from qualspec.store._db import Database
from qualspec.store._records import CacheEntry
from qualspec.store._schema import cache_entries
from qualspec.store._shared import CACHE_FIELDS as _FIELDS
from qualspec.store._shared import cache_rows
from qualspec.store._shared import fresh as _fresh

__all__ = ["cache_clear", "cache_get_many", "cache_kinds", "cache_put_many", "cache_stats"]

CHUNK = 500
_values = operator.attrgetter(*_FIELDS)
_CREATED = _FIELDS.index("created_at")


def _chunks(keys: Sequence[str]) -> Iterable[Sequence[str]]:
    for start in range(0, len(keys), CHUNK):
        yield keys[start : start + CHUNK]


def cache_get_many(
    db: Database,
    keys: Iterable[str],
    now: datetime | None = None,
    ttl: Mapping[str, float | None] | None = None,
) -> dict[str, CacheEntry]:
    """The unexpired entries among ``keys`` (missing keys are simply absent).

    ``ttl`` (kind -> seconds, None: forever) is the lifetime the reader wants now: an
    entry of a kind it names is fresh while its age (``now - created_at``) is under that
    TTL, whatever lifetime it was written with, so ``--cache-ttl reference=3600`` applies
    to the answers cached yesterday too. An entry of a kind ``ttl`` does not name (or with
    no ``ttl`` at all) keeps the expiry it was written with (``expires_at``).
    """
    wanted = list(dict.fromkeys(keys))
    if not wanted:
        return {}
    moment = now or now_utc()
    lifetimes = dict(ttl or {})
    c = cache_entries.c
    out: dict[str, CacheEntry] = {}
    with db.read() as conn:
        for chunk in _chunks(wanted):
            query = select(cache_entries).where(c.key.in_(chunk))
            for row in conn.execute(query).mappings().all():  # one fetchall, not per row
                if _fresh(row, lifetimes, moment):
                    out[row["key"]] = CacheEntry(**{name: row[name] for name in _FIELDS})
    return out


def cache_put_many(db: Database, entries: Sequence[CacheEntry]) -> None:
    """Upsert successful entries in one transaction; errors are never cached."""
    rows = cache_rows(entries)
    if not rows:
        return
    insert = db.bulk_insert("cache_entries", lambda: _upsert(db), _FIELDS)
    with db.write() as conn:
        insert.execute(conn, rows)


def _upsert(db: Database) -> Any:
    ins = db.insert(cache_entries)
    return ins.on_conflict_do_update(
        index_elements=["key"],
        set_={name: ins.excluded[name] for name in _FIELDS if name != "key"},
    )


def _size(db: Database, column: Any) -> Any:
    if db.dialect == "postgresql":
        return func.coalesce(func.octet_length(column), 0)
    return func.coalesce(func.length(cast(column, LargeBinary)), 0)


def _expired(ttl: Mapping[str, float | None] | None, moment: datetime) -> Any:
    """The SQL condition of an entry a read with ``ttl`` at ``moment`` would not return
    (the negation of ``_fresh``): a kind ``ttl`` names by its age, any other kind by the
    expiry it was written with."""
    c = cache_entries.c
    lifetimes = dict(ttl or {})
    aged: list[Any] = []
    for kind, seconds in lifetimes.items():
        if seconds is None:
            continue  # forever
        try:
            born_before = moment - timedelta(seconds=seconds)
        except OverflowError:  # a lifetime longer than the calendar: never expires
            continue
        aged.append(and_(c.kind == kind, c.created_at <= born_before))
    written = and_(c.expires_at.is_not(None), c.expires_at <= moment)
    if lifetimes:
        written = and_(c.kind.not_in(list(lifetimes)), written)
    return or_(written, *aged) if aged else written


def cache_stats(
    db: Database, now: datetime | None = None, ttl: Mapping[str, float | None] | None = None
) -> dict[str, Any]:
    """Entry count, size in bytes, oldest and newest entry, in total and per kind.

    ``expired`` counts the entries a read with the same ``ttl`` would not return (see
    ``cache_get_many``): those of a kind ``ttl`` names by their age now, the others by the
    expiry they were written with.

    Returns:
        ``{"entries", "bytes", "expired", "oldest", "newest", "kinds": {kind: {"entries",
        "bytes", "expired", "oldest", "newest"}}}``; ``oldest``/``newest`` are None when
        empty.
    """
    moment = now or now_utc()
    c = cache_entries.c
    size = _size(db, c.text) + _size(db, cast(c.structured, Text))
    expired = func.sum(case((_expired(ttl, moment), 1), else_=0))
    query = select(
        c.kind,
        func.count().label("entries"),
        func.coalesce(func.sum(size), 0).label("bytes"),
        expired.label("expired"),
        func.min(c.created_at).label("oldest"),
        func.max(c.created_at).label("newest"),
    ).group_by(c.kind)
    kinds: dict[str, dict[str, Any]] = {}
    with db.read() as conn:
        for row in conn.execute(query):
            kinds[str(row.kind)] = {
                "entries": int(row.entries),
                "bytes": int(row.bytes),
                "expired": int(row.expired or 0),
                "oldest": row.oldest,
                "newest": row.newest,
            }
    stats = list(kinds.values())
    return {
        "entries": sum(s["entries"] for s in stats),
        "bytes": sum(s["bytes"] for s in stats),
        "expired": sum(s["expired"] for s in stats),
        "oldest": min((s["oldest"] for s in stats), default=None),
        "newest": max((s["newest"] for s in stats), default=None),
        "kinds": dict(sorted(kinds.items())),
    }


def cache_kinds(db: Database) -> set[str]:
    """The kinds that have at least one entry (expired or not): one indexed query."""
    with db.read() as conn:
        return {str(k) for k in conn.execute(select(cache_entries.c.kind).distinct()).scalars()}


def cache_clear(
    db: Database,
    kind: str | None = None,
    expired_only: bool = False,
    now: datetime | None = None,
    ttl: Mapping[str, float | None] | None = None,
) -> int:
    """Delete entries (of one ``kind``, or only expired ones) and return how many.

    ``expired_only``: the entries a read with the same ``ttl`` would not return (see
    ``cache_stats``).
    """
    c = cache_entries.c
    query = delete(cache_entries)
    if kind is not None:
        query = query.where(c.kind == kind)
    if expired_only:
        query = query.where(_expired(ttl, now or now_utc()))
    with db.write() as conn:
        return int(conn.execute(query).rowcount)
