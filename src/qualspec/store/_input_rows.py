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
import threading
import weakref
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from qualspec.store._clock import now_utc
from qualspec.store._redact import redact_values

if TYPE_CHECKING:
    from sqlalchemy.engine import Connection

    from qualspec.store._db import Database
    from qualspec.store._records import ResponseRecord

__all__ = [
    "RowMemo",
    "attach_rows",
    "drop_unused_rows",
    "insert_rows",
    "memo_for",
    "row_entry",
    "run_row_hashes",
]

# the hash is of the row's canonical JSON (keys sorted); the row is stored in its own key
# order (as in its file). Values JSON cannot hold (a date read from YAML, an object of a
# Python suite) become text.
_CANONICAL = json.JSONEncoder(
    sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str
)
_STORED = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, default=str)
_CHUNK = 500  # hashes per IN (...) list
_ROW_COLUMNS = ("hash", "row_json", "created_at")
_ABSENT = object()


def _plain(value: Any) -> Any:
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    return str(value)


def row_entry(values: Mapping[str, Any]) -> tuple[str, str]:
    """(hash, JSON text) of an input row as stored (see the module docstring)."""
    try:
        clean = redact_values(values)
        canonical = _CANONICAL.encode(clean)
    except (TypeError, ValueError, RecursionError):  # keys not all text, a value in itself
        clean = {str(k): redact_values(_plain(v)) for k, v in values.items()}
        canonical = _CANONICAL.encode(clean)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest(), _STORED.encode(clean)


class RowMemo:
    """The rows a store encoded last, by the mapping object given (an engine hands every
    answer of a row the same object: its row is encoded once per run, not per answer).

    An entry is used only for the very object it was made from whose top-level values
    are still the same objects (a mapping filled anew between records is encoded again);
    at most ``size`` entries and ``chars`` characters of rows are kept, the oldest used
    dropped first. Safe to share between threads.
    """

    def __init__(self, size: int = 4096, chars: int = 32_000_000) -> None:
        self._entries: OrderedDict[int, tuple[Mapping[str, Any], dict[str, Any], str, str]]
        self._entries = OrderedDict()
        self._size, self._chars, self._held = size, chars, 0
        self._lock = threading.Lock()

    def entry(self, values: Mapping[str, Any]) -> tuple[str, str]:
        """``row_entry(values)``, from the memo when it holds this very row."""
        key = id(values)
        with self._lock:
            found = self._entries.get(key)
            if found is not None and found[0] is values and _unchanged(found[1], values):
                self._entries.move_to_end(key)
                return found[2], found[3]
        row_hash, text = row_entry(values)
        with self._lock:
            old = self._entries.pop(key, None)
            self._held += len(text) - (len(old[3]) if old else 0)
            self._entries[key] = (values, dict(values), row_hash, text)
            while self._entries and (len(self._entries) > self._size or self._held > self._chars):
                self._held -= len(self._entries.popitem(last=False)[1][3])
        return row_hash, text


def _unchanged(snapshot: Mapping[str, Any], values: Mapping[str, Any]) -> bool:
    return len(snapshot) == len(values) and all(
        values.get(k, _ABSENT) is v for k, v in snapshot.items()
    )


_MEMOS: weakref.WeakKeyDictionary[object, RowMemo] = weakref.WeakKeyDictionary()
_MEMOS_LOCK = threading.Lock()


def memo_for(db: object) -> RowMemo:
    """The row memo of ``db`` (one per database object, gone with it)."""
    with _MEMOS_LOCK:
        memo = _MEMOS.get(db)
        if memo is None:
            memo = _MEMOS[db] = RowMemo()
        return memo


def insert_rows(db: Database, conn: Connection, rows: Mapping[str, str]) -> None:
    """Store ``rows`` (hash -> JSON text) that are not stored yet, in ``conn``'s
    transaction (sorted: two writers never wait on each other's rows in turn)."""
    if not rows:
        return
    from qualspec.store._schema import input_rows

    now = now_utc()
    insert = db.bulk_insert(
        "input_rows",
        lambda: db.insert(input_rows).on_conflict_do_nothing(index_elements=["hash"]),
        _ROW_COLUMNS,
    )
    # one executemany of plain lists (a dict per row through SQLAlchemy was most of it)
    insert.execute(conn, [[h, rows[h], now] for h in sorted(rows)])


def _chunks(items: Sequence[str]) -> Iterable[Sequence[str]]:
    return (items[i : i + _CHUNK] for i in range(0, len(items), _CHUNK))


def attach_rows(conn: Connection, records: Sequence[ResponseRecord]) -> None:
    """Give each record with an ``input_hash`` its row's values (``input_values``): one
    mapping per row, shared by its records; None when the row is not stored."""
    from sqlalchemy import select

    from qualspec.store._schema import input_rows

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
    from sqlalchemy import select

    from qualspec.store._schema import responses

    r = responses.c
    query = select(r.input_hash).where(r.run_id == run_id, r.input_hash.is_not(None)).distinct()
    return sorted(str(h) for h in conn.execute(query).scalars())


def drop_unused_rows(conn: Connection, hashes: Sequence[str]) -> None:
    """Delete the rows among ``hashes`` that no response names any more (after a run's
    responses were deleted): a row another run uses stays.

    No index holds the answers' input hashes (every answer of a large run wrote a random
    key into it, migration 0012): which rows are still named is one pass over the answers.
    For a few rows (one ``IN`` list) the database makes that pass itself, else the hashes
    are streamed and matched here (one pass, not one a list). The caller holds the write
    lock: on PostgreSQL ``delete_run`` locks ``input_rows`` first, and every writer stores
    its rows in the transaction of the answers that name them."""
    from sqlalchemy import delete, select

    from qualspec.store._schema import input_rows, responses

    if not hashes:
        return
    wanted = set(hashes)
    named = select(responses.c.input_hash)
    if len(wanted) <= _CHUNK:
        used = set(conn.execute(named.where(responses.c.input_hash.in_(sorted(wanted)))).scalars())
    else:
        found = named.where(responses.c.input_hash.is_not(None))
        rows = conn.execute(found.execution_options(yield_per=10_000)).scalars()
        used = {h for h in rows if h in wanted}
    for chunk in _chunks(sorted(wanted - used)):
        conn.execute(delete(input_rows).where(input_rows.c.hash.in_(chunk)))
