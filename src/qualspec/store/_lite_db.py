"""A SQLite database on the standard library's ``sqlite3``, for the run path.

It behaves as :class:`~qualspec.store._db.Database` does on SQLite (WAL, a 30 s busy
timeout, ``synchronous=NORMAL``, foreign keys, ``BEGIN IMMEDIATE`` for writes, one
transaction per ``read``/``write``, driver errors as :class:`StoreError` with the same
message) without importing SQLAlchemy: ``qualspec run`` on a SQLite file starts faster.
One connection per thread (the recorder writes from its own thread), opened on first use.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from qualspec.errors import StoreError
from qualspec.store._url import display_url

__all__ = [
    "BUSY_TIMEOUT_MS",
    "DRIVER_ENV",
    "LiteDatabase",
    "lite_path",
    "make_parent",
    "set_wal",
]

BUSY_TIMEOUT_MS = 30_000
WAL_CHECKPOINT_PAGES = 40_000
"""Pages of WAL (about 160 MB) after which a commit checkpoints, 40x SQLite's default: a
run commits every few milliseconds, and each checkpoint copies every page written since
back into the file and syncs both, inside the commit that triggered it, while the
answers of that commit hold their slots (with 1,000, about a quarter of the recorder's
writing time at 0 ms a call, 100,000 cells of ``benchmarks/scale.py``). Pages written
again and again between two checkpoints (an index's) are copied once. While a run
records, :meth:`LiteDatabase.checkpointing` copies the WAL back from a thread of its own
long before that, so the commit's checkpoint has little left to copy."""
CHECKPOINT_EVERY_S = 0.1
"""How often :meth:`LiteDatabase.checkpointing` copies the WAL back into the file."""
DRIVER_ENV = "QUALSPEC_SQLITE_DRIVER"  # "sqlalchemy": SQLite files on the SQLAlchemy path


def lite_path(url: str) -> str | None:
    """The file of a plain ``sqlite:///PATH`` URL (None: another URL, which the
    SQLAlchemy path serves: in-memory, ``file:`` URIs, query options, other backends; or
    every URL, with ``QUALSPEC_SQLITE_DRIVER=sqlalchemy``)."""
    if os.environ.get(DRIVER_ENV, "").strip().lower() == "sqlalchemy":
        return None
    head = "sqlite:///"
    if not url.startswith(head) or "?" in url or "%" in url:
        return None
    path = url[len(head) :]
    if path in ("", ":memory:") or path.startswith("file:"):
        return None
    return path


class LiteDatabase:
    """Read and write transactions on one SQLite file, safe to share between threads."""

    dialect = "sqlite"

    def __init__(self, url: str, path: str) -> None:
        self.url = url
        self.display = display_url(url)
        self.path = path
        make_parent(Path(path), self.display)
        self._local = threading.local()
        self._all: list[sqlite3.Connection] = []
        self._all_lock = threading.Lock()

    def _conn(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            with self.translate():
                conn = _connect(self.path)
            self._local.conn = conn
            with self._all_lock:
                self._all.append(conn)
        return conn

    @contextlib.contextmanager
    def translate(self) -> Iterator[None]:
        """Driver errors as StoreError (the message SQLAlchemy's path gives)."""
        try:
            yield
        except sqlite3.Error as exc:
            raise StoreError(f"database error on {self.display}: {_line(exc)}") from exc

    @contextlib.contextmanager
    def _transaction(self, begin: str) -> Iterator[sqlite3.Connection]:
        shared = getattr(self._local, "shared", None)
        if shared is not None:  # inside together() on this thread: its transaction
            with self.translate():
                yield shared
            return
        conn = self._conn()
        with self.translate():
            conn.execute(begin)
            try:
                yield conn
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise

    def read(self) -> contextlib.AbstractContextManager[sqlite3.Connection]:
        """A read transaction (a consistent snapshot for several selects)."""
        return self._transaction("BEGIN")

    def write(self) -> contextlib.AbstractContextManager[sqlite3.Connection]:
        """A write transaction (``BEGIN IMMEDIATE``), committed on exit; inside
        :meth:`together` on this thread, its transaction."""
        return self._transaction("BEGIN IMMEDIATE")

    @contextlib.contextmanager
    def together(self) -> Iterator[None]:
        """One write transaction for every :meth:`write` made in it on this thread."""
        if getattr(self._local, "shared", None) is not None:
            yield
            return
        with self.write() as conn:
            self._local.shared = conn
            try:
                yield
            finally:
                self._local.shared = None

    @contextlib.contextmanager
    def checkpointing(self, every_s: float = CHECKPOINT_EVERY_S) -> Iterator[None]:
        """While inside, a thread of its own (with its own connection) copies the WAL back
        into the file every ``every_s`` (a PASSIVE checkpoint: it never waits on a writer
        or holds one up), so that the writer's commits rarely do it themselves. A
        checkpoint syncs the WAL and the file, and on a large database it copies pages
        from all over it: in the commit that triggers it (the recorder's), its answers
        hold their slots meanwhile; here, the commits go on. What it cannot do (a
        failure, a locked file) it leaves to the commits' own checkpoints."""
        stop = threading.Event()
        thread = threading.Thread(
            target=self._checkpoints, args=(stop, every_s), name="qualspec-checkpoint"
        )
        thread.daemon = True
        thread.start()
        try:
            yield
        finally:
            stop.set()
            thread.join()

    def _checkpoints(self, stop: threading.Event, every_s: float) -> None:
        conn: sqlite3.Connection | None = None
        try:
            while not stop.wait(every_s):
                try:
                    if conn is None:  # the file as it is: never one made anew
                        uri = Path(self.path).resolve().as_uri() + "?mode=rw"
                        conn = sqlite3.connect(uri, uri=True, check_same_thread=False)
                    conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
                except sqlite3.Error:  # the commits checkpoint on their own
                    continue
        finally:
            if conn is not None:
                with contextlib.suppress(sqlite3.Error):
                    conn.close()

    def dispose(self) -> None:
        """Close every connection (each thread opens a new one on its next use)."""
        with self._all_lock:
            conns, self._all = self._all, []
        self._local = threading.local()
        for conn in conns:
            with contextlib.suppress(sqlite3.Error):
                conn.close()


def _connect(path: str) -> sqlite3.Connection:
    # isolation_level=None: transactions are begun here, as BEGIN or BEGIN IMMEDIATE
    conn = sqlite3.connect(path, timeout=30, isolation_level=None, check_same_thread=False)
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    set_wal(conn)
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("PRAGMA foreign_keys = ON")
    return conn


def set_wal(conn: sqlite3.Connection | sqlite3.Cursor) -> None:
    """Put the database in WAL mode (waiting out a concurrent opener's lock), with
    checkpoints every :data:`WAL_CHECKPOINT_PAGES` pages."""
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    while True:
        try:
            mode = conn.execute("PRAGMA journal_mode").fetchone()[0]
            if str(mode).lower() != "wal":
                conn.execute("PRAGMA journal_mode = WAL")
            conn.execute(f"PRAGMA wal_autocheckpoint = {WAL_CHECKPOINT_PAGES}")
            return
        except sqlite3.OperationalError as exc:
            # switching a fresh file to WAL can meet a concurrent opener's lock
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def make_parent(path: Path, display: str) -> None:
    """Create the folder of a SQLite file (StoreError saying what to do when it cannot)."""
    try:
        path.expanduser().resolve().parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StoreError(
            f"cannot create the folder for {display}: {exc.strerror or exc}; "
            "set QUALSPEC_HOME or pass another --db"
        ) from exc


def _line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__
