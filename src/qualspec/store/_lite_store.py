"""The Store on a SQLite file through the standard library's ``sqlite3``: what a ``qualspec
run`` calls (the schema check or a fresh database's tables, runs, the run lock, responses,
evaluation records, input rows, the cache, prompt versions, loading the finished run) runs
the statements of ``_lite_sql`` (SQLAlchemy's, compiled for SQLite) without importing
SQLAlchemy. Every other method is the SQLAlchemy Store's, on an engine opened on first use.

A database at another schema revision is opened by the SQLAlchemy path (which migrates an
older one and refuses a newer one). ``QUALSPEC_SQLITE_DRIVER=sqlalchemy`` turns this path
off (see ``_lite_db.lite_path``).
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import sqlite3
import threading
from collections import namedtuple
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from qualspec.errors import StoreError, UnknownRunError
from qualspec.store import _migrate
from qualspec.store._clock import now_utc
from qualspec.store._input_rows import memo_for
from qualspec.store._lite_copy import cache_hits, copy_cached
from qualspec.store._lite_db import LiteDatabase, lite_path
from qualspec.store._lite_lookup import LiteLookups
from qualspec.store._lite_ops import BulkWrite, execute, fetch, read_rows, to_db
from qualspec.store._lite_sql import HEAD
from qualspec.store._liveness import Owner, take_run_lock
from qualspec.store._prefix import only_match
from qualspec.store._prompts import PromptRegistry
from qualspec.store._records import (
    CacheEntry,
    JudgmentRecord,
    PromptVersion,
    ResponseRecord,
    RunRecord,
    RunSummary,
    judgment_from_row,
    response_from_row,
    suite_matches,
)
from qualspec.store._redact import redact
from qualspec.store._shared import (
    CACHE_FIELDS,
    JUDGMENT_COLUMNS,
    MAX_ID_LENGTH,
    RESPONSE_COLUMNS,
    RUN_LIST_HINT,
    cache_rows,
    fresh,
    judgment_order,
    judgment_rows,
    new_run_row,
    response_order,
    response_rows,
    summary,
)
from qualspec.store._store import Store

if TYPE_CHECKING:
    from qualspec.store._db import Database

__all__ = ["LiteStore"]

_CHUNK = 500  # keys per IN (...) list
# the tables of a database (as SQLAlchemy's inspector lists them: SQLite's own left out)
_TABLES = (
    "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite~_%' ESCAPE '~'"
)
_RESPONSES = BulkWrite("upsert_responses", "responses", RESPONSE_COLUMNS)
_JUDGMENTS = BulkWrite("upsert_judgments", "judgments", JUDGMENT_COLUMNS)
_INPUTS = BulkWrite("input_rows_insert", "input_rows", ("hash", "row_json", "created_at"))
_CACHE = BulkWrite("upsert_cache", "cache_entries", CACHE_FIELDS)
_Totals = namedtuple("_Totals", "run_id n errors cached cost unpriced")  # noqa: PYI024
_JTotals = namedtuple("_JTotals", "run_id n errors unscored cached cost unpriced")  # noqa: PYI024


def _chunks(items: Sequence[str]) -> Iterable[Sequence[str]]:
    return (items[i : i + _CHUNK] for i in range(0, len(items), _CHUNK))


class LiteStore(LiteLookups, Store, sqlite_files=True):
    """A :class:`Store` on a SQLite file; ``Store.open`` gives one for ``sqlite:///PATH``."""

    def __init__(self, url: str, *, migrate: bool = True) -> None:
        path = lite_path(url)
        if path is None:
            raise StoreError(f"not a SQLite file URL: {url!r}")
        self._url = url
        self._lite = LiteDatabase(url, path)
        self._sa: Database | None = None
        self._sa_prompts: PromptRegistry | None = None
        self._sa_lock = threading.Lock()
        self._lite_prompts = _LitePrompts(self._lite)
        if migrate and not self._lite_schema():
            _migrate.open_schema(self._db)  # older or newer: SQLAlchemy migrates or refuses

    # -------------------------------------------------------------- the SQLAlchemy side

    @property
    def _db(self) -> Database:
        """The SQLAlchemy database, opened on first use (for the methods not served here)."""
        with self._sa_lock:
            if self._sa is None:
                from qualspec.store._db import Database

                self._sa = Database(self._url)
            return self._sa

    @_db.setter
    def _db(self, value: Database) -> None:
        self._sa = value

    @property
    def _prompts(self) -> PromptRegistry:
        if self._sa_prompts is None:
            self._sa_prompts = PromptRegistry(self._db)
        return self._sa_prompts

    @_prompts.setter
    def _prompts(self, value: PromptRegistry) -> None:
        self._sa_prompts = value

    def _lite_schema(self) -> bool:
        """Whether the database is at ``HEAD`` (creating a fresh one's tables at it)."""
        if _migrate.file_revisions()[-1:] != [HEAD]:
            return False
        try:
            with self._lite.read() as conn:
                rows = conn.execute("SELECT version_num FROM alembic_version").fetchall()
            return [tuple(r) for r in rows] == [(HEAD,)]
        except StoreError:
            pass  # no version table (yet), or unreadable: create, or let SQLAlchemy decide
        try:
            return self._create_fresh()
        except StoreError:
            return False

    def _create_fresh(self) -> bool:
        from qualspec.store._lite_sql import FRESH_DDL

        with self._lite.write() as conn:
            if conn.execute(_TABLES).fetchall():
                return False
            for statement in FRESH_DDL:
                conn.execute(statement)
            conn.execute("INSERT INTO alembic_version (version_num) VALUES (?)", (HEAD,))
        return True

    # -------------------------------------------------------------- basics

    @property
    def url_for_display(self) -> str:
        return self._lite.display

    @property
    def backend(self) -> str:
        return "sqlite"

    def close(self) -> None:
        self._lite.dispose()
        if self._sa is not None:
            self._sa.dispose()

    def reconnect(self) -> None:
        self._lite.dispose()
        if self._sa is not None:
            self._sa.reconnect()

    def __repr__(self) -> str:
        return f"Store({self._lite.display!r})"

    def together(self) -> contextlib.AbstractContextManager[None]:
        return self._lite.together()

    def checkpointing(self) -> contextlib.AbstractContextManager[None]:
        """WAL checkpoints from a thread of their own while inside
        (``LiteDatabase.checkpointing``: what the recorder runs in)."""
        return self._lite.checkpointing()

    # -------------------------------------------------------------- runs

    def create_run(self, suite_name: str, suite_hash: str, metadata: Mapping[str, Any]) -> str:
        row = new_run_row(suite_name, suite_hash, metadata)
        with self._lite.write() as conn:
            execute(conn, "run_insert", **{k: to_db("runs", k, v) for k, v in row.items()})
        return str(row["id"])

    def update_run_metadata(self, run_id: str, patch: Mapping[str, Any]) -> None:
        with self._lite.write() as conn:
            found = execute(conn, "run_metadata", id=run_id).fetchone()
            if found is None:
                raise StoreError(f"no run with id '{run_id}': {RUN_LIST_HINT}")
            merged = {**json.loads(found[0]), **redact(dict(patch))}
            execute(conn, "run_set_metadata", id=run_id, b_meta=to_db("runs", "metadata", merged))

    def finish_run(self, run_id: str, status: str) -> None:
        with self._lite.write() as conn:
            at = to_db("runs", "finished_at", now_utc())
            done = execute(conn, "run_finish", id=run_id, b_status=status, b_at=at).rowcount
        if done == 0:
            raise StoreError(f"no run with id '{run_id}': {RUN_LIST_HINT}")

    def _resolve(self, run_id: str) -> str:
        if len(run_id) > MAX_ID_LENGTH:  # no id is that long (and SQLite refuses such a LIKE)
            raise UnknownRunError(
                f"no run with an id of {len(run_id)} characters ('{run_id[:40]}...'): "
                f"{RUN_LIST_HINT}"
            )
        with self._lite.read() as conn:
            if execute(conn, "run_exists", id=run_id).fetchone() is not None:
                return run_id
            escaped = run_id.replace("/", "//").replace("%", "/%").replace("_", "/_")
            found = [str(r[0]) for r in execute(conn, "run_prefix", pattern=escaped + "%")]
        return only_match(
            run_id,
            found,
            error=UnknownRunError,
            noun="run",
            kind="run",
            plural="runs",
            hint=RUN_LIST_HINT,
        )

    def get_run(self, run_id: str) -> RunSummary:
        full = self._resolve(run_id)
        with self._lite.read() as conn:
            (row,) = fetch(conn, "run_row", "runs", id=full)
            a = [_Totals(*r) for r in execute(conn, "run_response_totals", ids=[full])]
            b = [_JTotals(*r) for r in execute(conn, "run_judgment_totals", ids=[full])]
        return summary(row, a[0] if a else None, b[0] if b else None)

    def latest_unfinished_run(
        self, suite_name: str, suite_path: str | None = None, suite_hash: str | None = None
    ) -> str | None:
        names = ("id", "suite_hash", "metadata")
        with self._lite.read() as conn:
            for row in fetch(conn, "run_unfinished", "runs", names, suite=suite_name):
                meta, found_hash = row["metadata"], row["suite_hash"]
                if suite_matches(suite_name, found_hash, meta, suite_name, suite_path, suite_hash):
                    return str(row["id"])
        return None

    # -------------------------------------------------------------- the run lock

    def acquire_run(self, run_id: str) -> None:
        run_id = self._resolve(run_id)
        names = ("owner_pid", "owner_host", "heartbeat_at")

        def read_owner() -> Owner:
            with self._lite.read() as conn:
                (row,) = fetch(conn, "lock_owner", "runs", names, id=run_id)
            return row["owner_pid"], row["owner_host"], row["heartbeat_at"]

        def swap(was: Owner, me: Owner) -> int:
            pid, host, beat = was
            with self._lite.write() as conn:
                return int(
                    execute(
                        conn,
                        "lock_take",
                        id=run_id,
                        pid=pid,
                        host=host,
                        beat=to_db("runs", "heartbeat_at", beat),
                        b_pid=me[0],
                        b_host=me[1],
                        b_beat=to_db("runs", "heartbeat_at", me[2]),
                    ).rowcount  # fmt: skip
                )

        take_run_lock(run_id, read_owner, swap)

    def heartbeat(self, run_id: str) -> None:
        stamp = to_db("runs", "heartbeat_at", now_utc())
        with self._lite.write() as conn:
            execute(conn, "lock_beat", id=run_id, b_beat=stamp, **_me())

    def release_run(self, run_id: str) -> None:
        with self._lite.write() as conn:
            execute(conn, "lock_release", id=run_id, **_me())

    # -------------------------------------------------------------- results

    @contextlib.contextmanager
    def _run_must_exist(self, run_id: str) -> Any:
        try:
            yield
        except StoreError:
            with self._lite.read() as conn:
                exists = execute(conn, "run_exists", id=run_id).fetchone()
            if exists is None:
                raise StoreError(
                    f"cannot record results for run '{run_id}': no such run; "
                    "see `qualspec runs list`"
                ) from None
            raise

    def record_responses(self, run_id: str, records: Sequence[ResponseRecord]) -> None:
        if not records:
            return
        rows, inputs = response_rows(run_id, records, memo_for(self._lite).entry)
        with self._run_must_exist(run_id), self._lite.write() as conn:
            if inputs:
                # sorted: two writers never wait on each other's rows in turn
                now = now_utc()
                _INPUTS.execute(conn, [[h, inputs[h], now] for h in sorted(inputs)])
            _RESPONSES.execute(conn, rows)

    def copy_cached(self, run_id: str, cells: Sequence[Sequence[Any]]) -> int:
        """Record ``cells`` (each as ``COPY_FIELDS``: a work item's identity,
        its cache key, prompt versions and time) as answers of ``run_id`` copied from the
        cache inside the database; how many rows were written (a cell whose entry is
        gone makes none)."""
        if not cells:
            return 0
        with self._run_must_exist(run_id), self._lite.write() as conn:
            return copy_cached(conn, run_id, cells, memo_for(self._lite).entry, now_utc())

    def record_judgments(self, run_id: str, records: Sequence[JudgmentRecord]) -> None:
        if not records:
            return
        rows = judgment_rows(run_id, records)
        with self._run_must_exist(run_id), self._lite.write() as conn:
            _JUDGMENTS.execute(conn, rows)

    def load_run(self, run_id: str, *, include_superseded: bool = False) -> RunRecord:
        found = self.get_run(run_id)
        which = "all_of_run" if include_superseded else "of_run"
        with self._lite.read() as conn:
            # one row at a time from the cursor: no list of every row beside the records
            read = read_rows("responses")
            rows = execute(conn, f"responses_{which}", run_id=found.id)
            responses = [response_from_row(read(r)) for r in rows]
            _attach_rows(conn, responses)
            read = read_rows("judgments")
            rows = execute(conn, f"judgments_{which}", run_id=found.id)
            judgments = [judgment_from_row(read(r)) for r in rows]
        responses.sort(key=response_order)
        judgments.sort(key=judgment_order(responses))
        return RunRecord(summary=found, responses=responses, judgments=judgments)

    # -------------------------------------------------------------- cache

    def cache_get_many(
        self,
        keys: Iterable[str],
        now: datetime | None = None,
        ttl: Mapping[str, float | None] | None = None,
    ) -> dict[str, CacheEntry]:
        wanted = list(dict.fromkeys(keys))
        if not wanted:
            return {}
        moment = now or now_utc()
        lifetimes = dict(ttl or {})
        out: dict[str, CacheEntry] = {}
        with self._lite.read() as conn:
            for chunk in _chunks(wanted):
                for row in fetch(conn, "cache_get", "cache_entries", keys=chunk):
                    if fresh(row, lifetimes, moment):
                        out[row["key"]] = CacheEntry(**{n: row[n] for n in CACHE_FIELDS})
        return out

    def cache_hits(
        self,
        keys: Iterable[str],
        now: datetime | None = None,
        ttl: Mapping[str, float | None] | None = None,
    ) -> dict[str, tuple[int | None, int | None]]:
        """The keys ``cache_get_many`` would find, each with its entry's input and output
        tokens (not the entry: ``copy_cached`` copies it inside the database)."""
        with self._lite.read() as conn:
            return cache_hits(conn, keys, now or now_utc(), dict(ttl or {}))

    def cache_put_many(self, entries: Sequence[CacheEntry]) -> None:
        rows = cache_rows(entries)
        if rows:
            with self._lite.write() as conn:
                _CACHE.execute(conn, rows)

    def cache_kinds(self) -> set[str]:
        with self._lite.read() as conn:
            return {str(k) for (k,) in execute(conn, "cache_kinds")}

    # -------------------------------------------------------------- prompts

    def prompt_version(self, name: str, text: str) -> int:
        return self._lite_prompts.version_id(name, text)

    def prompt_versions_many(self, pairs: Iterable[tuple[str, str]]) -> list[int]:
        return self._lite_prompts.many(pairs)

    def get_prompt_by_id(self, version_id: int) -> PromptVersion:
        return self._lite_prompts.get_by_id(version_id)


def _me() -> dict[str, Any]:
    return {"pid": os.getpid(), "host": socket.gethostname()}


def _attach_rows(conn: sqlite3.Connection, records: Sequence[ResponseRecord]) -> None:
    """Each record's input row's values (as ``_input_rows.attach_rows``)."""
    wanted = sorted({r.input_hash for r in records if r.input_hash is not None})
    found: dict[str, Any] = {}
    for chunk in _chunks(wanted):
        for row_hash, text in execute(conn, "input_rows_get", hashes=chunk):
            found[row_hash] = json.loads(text)
    for r in records:
        if r.input_hash is not None:
            r.input_values = found.get(r.input_hash)


class _LitePrompts(PromptRegistry):
    """The prompt registry's lookups and inserts on the stdlib driver."""

    def __init__(self, db: LiteDatabase) -> None:
        super().__init__(db)
        self._lite = db

    def _find_or_create(self, name: str, text: str, digest: str) -> int:
        for _ in range(10):
            try:
                with self._lite.write() as conn:
                    existing = execute(conn, "prompt_find", name=name, hash=digest).fetchone()
                    if existing is not None:
                        return int(existing[0])
                    (top,) = execute(conn, "prompt_top", name=name).fetchone()
                    at = to_db("prompt_versions", "created_at", now_utc())
                    inserted = execute(
                        conn, "prompt_insert", name=name, version=int(top or 0) + 1,
                        content_hash=digest, text=text, created_at=at,
                    ).fetchone()  # fmt: skip
                    return int(inserted[0])
            except StoreError as exc:
                if not isinstance(exc.__cause__, sqlite3.IntegrityError):
                    raise
                # another writer took that version number or stored the same text: re-read
        raise StoreError(f"could not store a version of prompt '{name}': too much contention")

    def get_by_id(self, version_id: int) -> PromptVersion:
        with self._lite.read() as conn:
            found = fetch(conn, "prompt_by_id", "prompt_versions", id=version_id)
        if not found:
            raise StoreError(f"no prompt version with id {version_id}: see `qualspec prompts list`")
        return PromptVersion(**found[0])
