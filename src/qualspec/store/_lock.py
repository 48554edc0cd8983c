"""The run lock: one live process executes (or resumes) a run at a time.

The owner is recorded on the run row (pid, host, heartbeat). A holder counts as live
when it runs on this host and its pid exists, or, on another host, when its heartbeat is
younger than ``STALE_AFTER_S``. Taking the lock is a compare-and-swap UPDATE, so two
resumes at once cannot both win.
"""

from __future__ import annotations

import os
import socket
import sys
from datetime import datetime, timedelta

from sqlalchemy import select, update

from qualspec.errors import RunLockedError, StoreError
from qualspec.store._db import Database
from qualspec.store._runs import now_utc, resolve_run_id
from qualspec.store._schema import runs

__all__ = [
    "STALE_AFTER_S",
    "abandoned_reason",
    "acquire_run",
    "heartbeat",
    "pid_alive",
    "release_run",
]

STALE_AFTER_S = 60.0
_ATTEMPTS = 5


def pid_alive(pid: int) -> bool:
    """True when a process with this id exists on this machine."""
    if pid <= 0:
        return False
    if sys.platform == "win32":  # pragma: no cover - os.kill(pid, 0) would terminate it
        import ctypes

        handle = ctypes.windll.kernel32.OpenProcess(0x1000, False, pid)  # type: ignore[attr-defined]
        if not handle:
            return False
        ctypes.windll.kernel32.CloseHandle(handle)  # type: ignore[attr-defined]
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError:
        return False
    return True


def _live(pid: int, host: str | None, beat: datetime | None, me_host: str) -> bool:
    if host == me_host:
        return pid_alive(pid)
    return beat is not None and now_utc() - beat < timedelta(seconds=STALE_AFTER_S)


def abandoned_reason(pid: int | None, host: str | None, beat: datetime | None) -> str | None:
    """Why a run recorded as ``running`` is not: its owner is gone (None: it is live).

    The owner is gone when it ran on this host and its pid no longer exists, or ran on
    another host and its heartbeat is older than ``STALE_AFTER_S``. Such a run was
    SIGKILLed, crashed, or could not record its end because the database was down.
    """
    if pid is None or _live(pid, host, beat, socket.gethostname()):
        return None
    return (
        f"the process that ran it (pid {pid} on {host}) is gone and could not record how "
        "the run ended (killed, or the database was unreachable): resume it with --resume"
    )


def acquire_run(db: Database, run_id: str) -> None:
    """Mark ``run_id`` as executed by this process, or raise RunLockedError."""
    run_id = resolve_run_id(db, run_id)
    me_pid, me_host = os.getpid(), socket.gethostname()
    for _ in range(_ATTEMPTS):
        with db.read() as conn:
            row = conn.execute(
                select(runs.c.owner_pid, runs.c.owner_host, runs.c.heartbeat_at).where(
                    runs.c.id == run_id
                )
            ).one()
        pid, host, beat = row.owner_pid, row.owner_host, row.heartbeat_at
        mine = pid == me_pid and host == me_host
        if pid is not None and not mine and _live(pid, host, beat, me_host):
            raise RunLockedError(
                f"run {run_id} is being executed by process {pid} on {host}; wait for it or kill it"
            )
        with db.write() as conn:
            result = conn.execute(
                update(runs)
                .where(
                    runs.c.id == run_id,
                    runs.c.owner_pid.is_not_distinct_from(pid),
                    runs.c.owner_host.is_not_distinct_from(host),
                    runs.c.heartbeat_at.is_not_distinct_from(beat),
                )
                .values(owner_pid=me_pid, owner_host=me_host, heartbeat_at=now_utc())
            )
        if result.rowcount == 1:
            return
        # someone else changed the owner between our read and our write: look again
    raise StoreError(f"could not take the lock of run {run_id}: it keeps changing owner; retry")


def heartbeat(db: Database, run_id: str) -> None:
    """Refresh this process's heartbeat on a run it holds."""
    with db.write() as conn:
        conn.execute(
            update(runs)
            .where(
                runs.c.id == run_id,
                runs.c.owner_pid == os.getpid(),
                runs.c.owner_host == socket.gethostname(),
            )
            .values(heartbeat_at=now_utc())
        )


def release_run(db: Database, run_id: str) -> None:
    """Give up the lock on ``run_id`` if this process holds it."""
    with db.write() as conn:
        conn.execute(
            update(runs)
            .where(
                runs.c.id == run_id,
                runs.c.owner_pid == os.getpid(),
                runs.c.owner_host == socket.gethostname(),
            )
            .values(owner_pid=None, owner_host=None, heartbeat_at=None)
        )
