"""The run lock: one live process executes (or resumes) a run at a time.

The owner is recorded on the run row (pid, host, heartbeat). A holder counts as live
when it runs on this host and its pid exists, or, on another host, when its heartbeat is
younger than ``STALE_AFTER_S``. Taking the lock is a compare-and-swap UPDATE, so two
resumes at once cannot both win.
"""

from __future__ import annotations

import os
import socket

from sqlalchemy import select, update

from qualspec.store._clock import now_utc
from qualspec.store._db import Database
from qualspec.store._liveness import (
    STALE_AFTER_S,
    Owner,
    abandoned_reason,
    pid_alive,
    take_run_lock,
)
from qualspec.store._runs import resolve_run_id
from qualspec.store._schema import runs

__all__ = [
    "STALE_AFTER_S",
    "abandoned_reason",
    "acquire_run",
    "heartbeat",
    "pid_alive",
    "release_run",
]


def acquire_run(db: Database, run_id: str) -> None:
    """Mark ``run_id`` as executed by this process, or raise RunLockedError."""
    run_id = resolve_run_id(db, run_id)

    def read_owner() -> Owner:
        with db.read() as conn:
            row = conn.execute(
                select(runs.c.owner_pid, runs.c.owner_host, runs.c.heartbeat_at).where(
                    runs.c.id == run_id
                )
            ).one()
        return row.owner_pid, row.owner_host, row.heartbeat_at

    def swap(was: Owner, me: Owner) -> int:
        pid, host, beat = was
        with db.write() as conn:
            result = conn.execute(
                update(runs)
                .where(
                    runs.c.id == run_id,
                    runs.c.owner_pid.is_not_distinct_from(pid),
                    runs.c.owner_host.is_not_distinct_from(host),
                    runs.c.heartbeat_at.is_not_distinct_from(beat),
                )
                .values(owner_pid=me[0], owner_host=me[1], heartbeat_at=me[2])
            )
        return int(result.rowcount)

    take_run_lock(run_id, read_owner, swap)


def _update_if_mine(db: Database, run_id: str, **values: object) -> None:
    """Set ``values`` on the run row when this process holds its lock (else nothing)."""
    with db.write() as conn:
        conn.execute(
            update(runs)
            .where(
                runs.c.id == run_id,
                runs.c.owner_pid == os.getpid(),
                runs.c.owner_host == socket.gethostname(),
            )
            .values(**values)
        )


def heartbeat(db: Database, run_id: str) -> None:
    """Refresh this process's heartbeat on a run it holds."""
    _update_if_mine(db, run_id, heartbeat_at=now_utc())


def release_run(db: Database, run_id: str) -> None:
    """Give up the lock on ``run_id`` if this process holds it."""
    _update_if_mine(db, run_id, owner_pid=None, owner_host=None, heartbeat_at=None)
