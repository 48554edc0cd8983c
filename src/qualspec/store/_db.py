"""The SQLAlchemy engine behind a Store: one per Store, safe to share between threads.

SQLite gets WAL, a 30 s busy timeout, ``synchronous=NORMAL``, foreign keys and
``BEGIN IMMEDIATE`` for write transactions, so two processes writing at once wait for
each other instead of failing with "database is locked".
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from qualspec.errors import DatabaseURLError, MissingDependencyError, StoreError
from qualspec.store._lite_db import BUSY_TIMEOUT_MS, make_parent, set_wal
from qualspec.store._schema import use_dialect
from qualspec.store._url import display_url

if TYPE_CHECKING:
    from sqlalchemy.engine import Connection, Engine

__all__ = ["BulkInsert", "Database"]

WRITE_OPTION = "qualspec_write"  # the execution option of a connection that writes


class Database:
    """An engine plus read/write transaction helpers that turn driver errors into StoreError."""

    def __init__(self, url: str) -> None:
        from sqlalchemy import create_engine
        from sqlalchemy.engine import make_url

        self.url = url
        self.display = display_url(url)
        try:
            parsed = make_url(url)
        except Exception as exc:  # noqa: BLE001 - sqlalchemy.exc.ArgumentError
            raise DatabaseURLError(
                f"cannot read the database URL {self.display!r}: use sqlite:///PATH or "
                "postgresql://USER:PASSWORD@HOST/DB (--db or QUALSPEC_DATABASE_URL)"
            ) from exc
        self.dialect = parsed.get_backend_name()
        # An in-memory SQLite database lives in one connection: share it, serialise use.
        self._lock: contextlib.AbstractContextManager[Any] = contextlib.nullcontext()
        kwargs: dict[str, Any] = {}
        memory = False
        if self.dialect == "sqlite":
            database = parsed.database or ""
            memory = database in ("", ":memory:") or "mode=memory" in database
            kwargs["connect_args"] = {"check_same_thread": False, "timeout": 30}
            if memory:
                from sqlalchemy.pool import StaticPool

                kwargs["poolclass"] = StaticPool
                self._lock = _ReentrantLock()
            elif not database.startswith("file:"):
                make_parent(Path(database), self.display)
        elif self.dialect == "postgresql":
            kwargs["connect_args"] = {"connect_timeout": 10, "application_name": "qualspec"}
            # a pooled connection may have died with a server restart: test it on checkout
            kwargs["pool_pre_ping"] = True
        else:
            raise DatabaseURLError(
                f"unsupported database URL {self.display}: use sqlite:///PATH or "
                "postgresql://USER:PASSWORD@HOST/DB (--db or QUALSPEC_DATABASE_URL)"
            )
        try:
            self.engine: Engine = create_engine(parsed, **kwargs)
        except ModuleNotFoundError as exc:
            raise MissingDependencyError(exc.name or "psycopg", "postgres") from exc
        except Exception as exc:  # noqa: BLE001 - an invalid URL, an unknown dialect
            raise DatabaseURLError(
                f"cannot use the database URL {self.display}: {_line(exc)}"
            ) from exc
        self._memory = memory
        use_dialect(self.dialect)
        self._bulk: dict[str, BulkInsert] = {}
        if self.dialect == "sqlite":
            _install_sqlite_events(self.engine, memory=memory)
        self._writer = self.engine.execution_options(**{WRITE_OPTION: True})
        self._shared = threading.local()  # the transaction of together(), per thread

    @contextlib.contextmanager
    def read(self) -> Iterator[Connection]:
        """A read transaction (a consistent snapshot for several selects)."""
        with self._lock, _translate(self.display), self.engine.begin() as conn:
            yield conn

    @contextlib.contextmanager
    def write(self) -> Iterator[Connection]:
        """A write transaction (SQLite: ``BEGIN IMMEDIATE``), committed on exit; inside
        :meth:`together` on this thread, its transaction."""
        shared = getattr(self._shared, "conn", None)
        if shared is not None:
            with _translate(self.display):
                yield shared
            return
        with self._lock, _translate(self.display), self._writer.begin() as conn:
            yield conn

    @contextlib.contextmanager
    def together(self) -> Iterator[None]:
        """One write transaction for every :meth:`write` made in it on this thread,
        committed at its end (an error rolls back all): one commit for several batches."""
        if getattr(self._shared, "conn", None) is not None:  # nested: the outer one's
            yield
            return
        with self.write() as conn:
            self._shared.conn = conn
            try:
                yield
            finally:
                self._shared.conn = None

    def insert(self, table: Any) -> Any:
        """The dialect's INSERT construct (it has ``on_conflict_do_update/nothing``)."""
        if self.dialect == "postgresql":
            from sqlalchemy.dialects.postgresql import insert as pg_insert

            return pg_insert(table)
        from sqlalchemy.dialects.sqlite import insert as sqlite_insert

        return sqlite_insert(table)

    def bulk_insert(
        self, name: str, build: Callable[[], Any], columns: Sequence[str]
    ) -> BulkInsert:
        """The :class:`BulkInsert` called ``name`` for this database (``build`` makes its
        statement on first use)."""
        prepared = self._bulk.get(name)
        if prepared is None:
            prepared = self._bulk[name] = BulkInsert(self.engine.dialect, build(), columns)
        return prepared

    def run_locked(self, fn: Callable[[], None]) -> None:
        """Run ``fn`` under this database's in-process lock and error translation."""
        with self._lock, _translate(self.display):
            fn()

    def dispose(self) -> None:
        """Close every pooled connection."""
        self.engine.dispose()

    def reconnect(self) -> None:
        """Drop the pooled connections so the next transaction opens fresh ones.

        Connections in use elsewhere are left alone (they are discarded when returned).
        An in-memory SQLite database lives in its one connection, so it is kept.
        """
        if self._memory:
            return
        self.engine.dispose()


class BulkInsert:
    """An INSERT (with its ON CONFLICT clause) prepared for many rows at once.

    Compiled once for the dialect, each column's bind processor looked up once; rows are
    given as lists in ``columns`` order and sent as one ``executemany``: the same SQL and
    values SQLAlchemy sends for a list of parameter dicts, without its per-row work
    (building, checking and processing a dict per row was most of the recorder's CPU).
    """

    def __init__(self, dialect: Any, stmt: Any, columns: Sequence[str]) -> None:
        import operator

        compiled = stmt.compile(dialect=dialect, column_keys=list(columns), for_executemany=True)
        self.columns = tuple(columns)
        if compiled.positional:  # the parameters in the statement's order, as a tuple
            names = list(compiled.positiontup or ())
            order = [self.columns.index(name) for name in names if name in self.columns]
            self._as_params: Callable[[list[Any]], Any] = (
                operator.itemgetter(*order) if len(order) > 1 else lambda row: (row[order[0]],)
            )
        else:  # named parameters
            names = list(compiled.binds)
            self._as_params = lambda row: dict(zip(self.columns, row, strict=True))
        if sorted(names) != sorted(self.columns):
            raise ValueError(f"the statement's parameters {names} are not the columns {columns}")
        self.sql: str = compiled.string
        table = stmt.table
        self._processors = [
            (i, processor)
            for i, name in enumerate(self.columns)
            if (processor := table.c[name].type.dialect_impl(dialect).bind_processor(dialect))
        ]

    def execute(self, conn: Connection, rows: Iterable[list[Any]]) -> None:
        """Insert ``rows`` (lists of column values, changed in place) in one executemany."""
        processors, as_params = self._processors, self._as_params
        params: list[Any] = []
        for row in rows:
            for i, processor in processors:
                row[i] = processor(row[i])
            params.append(as_params(row))
        if params:
            conn.exec_driver_sql(self.sql, params)


class _ReentrantLock:
    def __init__(self) -> None:
        self._lock = threading.RLock()

    def __enter__(self) -> None:
        self._lock.acquire()

    def __exit__(self, *exc: object) -> None:
        self._lock.release()


@contextlib.contextmanager
def _translate(display: str) -> Iterator[None]:
    from sqlalchemy.exc import SQLAlchemyError

    try:
        yield
    except SQLAlchemyError as exc:
        raise StoreError(f"database error on {display}: {_line(exc)}") from exc


def _line(exc: BaseException) -> str:
    orig = getattr(exc, "orig", None) or exc
    text = str(orig).strip().splitlines()
    return text[0] if text else type(orig).__name__


def _install_sqlite_events(engine: Engine, *, memory: bool) -> None:
    from sqlalchemy import event

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        # Let SQLAlchemy's "begin" event below emit BEGIN itself (pysqlite otherwise
        # defers it and never uses IMMEDIATE).
        dbapi_conn.isolation_level = None
        cursor = dbapi_conn.cursor()
        try:
            cursor.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            if not memory:
                set_wal(cursor)
            cursor.execute("PRAGMA synchronous = NORMAL")
            cursor.execute("PRAGMA foreign_keys = ON")
        finally:
            cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        immediate = conn.get_execution_options().get(WRITE_OPTION, False)
        conn.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")
