"""Input rows: each row's values stored once, by hash, and found again for its responses.

A response asked with an input row names it by ``responses.input_hash``; the values are
in ``input_rows`` (migration 0009), written with INSERT-if-absent in the transaction of
the responses that use them, so a row shared by many answers (every candidate, role,
temperature and run) is stored once and never without its answers. What is stored is the
row after :func:`~qualspec.store.redact_values` (secret-looking text masked), as compact
JSON in the row's own key order; the hash is the SHA-256 of its canonical JSON (keys
sorted), so the same values are one row whatever their order. Rows are never cut: a page
decides how much of a large one to show.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from sqlalchemy import delete, select

from qualspec.store._clock import now_utc
from qualspec.store._redact import redact_values
from qualspec.store._schema import input_rows, responses

if TYPE_CHECKING:
    from sqlalchemy.engine import Connection

    from qualspec.store._db import Database
    from qualspec.store._records import ResponseRecord

__all__ = ["attach_rows", "drop_unused_rows", "insert_rows", "row_entry", "run_row_hashes"]

# the hash is of the row's canonical JSON (keys sorted); the row is stored in its own key
# order (as in its file). Values JSON cannot hold (a date read from YAML, an object of a
# Python suite) become text.
_CANONICAL = json.JSONEncoder(
    sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str
)
_STORED = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, default=str)
_CHUNK = 500  # hashes per IN (...) list


def _plain(value: Any) -> Any:
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    return str(value)


def row_entry(values: Mapping[str, Any]) -> tuple[str, str]:
    """(hash, JSON text) of an input row as stored (see the module docstring)."""
    clean = redact_values(values)
    try:
        canonical = _CANONICAL.encode(clean)
    except (TypeError, ValueError):  # keys that are not all text, a value holding itself
        clean = {str(k): _plain(v) for k, v in clean.items()}
        canonical = _CANONICAL.encode(clean)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest(), _STORED.encode(clean)


def insert_rows(db: Database, conn: Connection, rows: Mapping[str, str]) -> None:
    """Store ``rows`` (hash -> JSON text) that are not stored yet, in ``conn``'s
    transaction (sorted: two writers never wait on each other's rows in turn)."""
    if not rows:
        return
    now = now_utc()
    stmt = db.insert(input_rows).on_conflict_do_nothing(index_elements=["hash"])
    conn.execute(stmt, [{"hash": h, "row_json": rows[h], "created_at": now} for h in sorted(rows)])


def _chunks(items: Sequence[str]) -> Iterable[Sequence[str]]:
    return (items[i : i + _CHUNK] for i in range(0, len(items), _CHUNK))


def attach_rows(conn: Connection, records: Sequence[ResponseRecord]) -> None:
    """Give each record with an ``input_hash`` its row's values (``input_values``): one
    mapping per row, shared by its records; None when the row is not stored."""
    wanted = sorted({r.input_hash for r in records if r.input_hash is not None})
    found: dict[str, Any] = {}
    for chunk in _chunks(wanted):
        query = select(input_rows.c.hash, input_rows.c.row_json).where(input_rows.c.hash.in_(chunk))
        for row_hash, text in conn.execute(query):
            found[row_hash] = json.loads(text)
    for r in records:
        if r.input_hash is not None:
            r.input_values = found.get(r.input_hash)


def run_row_hashes(conn: Connection, run_id: str) -> list[str]:
    """The hashes of the rows a run's responses (superseded ones too) were asked with."""
    r = responses.c
    query = select(r.input_hash).where(r.run_id == run_id, r.input_hash.is_not(None)).distinct()
    return sorted(str(h) for h in conn.execute(query).scalars())


def drop_unused_rows(conn: Connection, hashes: Sequence[str]) -> None:
    """Delete the rows among ``hashes`` that no response names any more (after a run's
    responses were deleted): a row another run uses stays."""
    used = select(responses.c.id).where(responses.c.input_hash == input_rows.c.hash).exists()
    for chunk in _chunks(hashes):
        conn.execute(delete(input_rows).where(input_rows.c.hash.in_(chunk), ~used))
