"""Whether a run's owner is alive: its process on this host, its heartbeat elsewhere.

A run recorded as ``running`` whose owner is gone was killed, crashed, or could not record
its end; :func:`abandoned_reason` says so (the run lock and the run listings read it).
"""

from __future__ import annotations

import os
import socket
import sys
from collections.abc import Callable
from datetime import datetime, timedelta

from qualspec.errors import RunLockedError, StoreError
from qualspec.store._clock import now_utc

__all__ = ["STALE_AFTER_S", "Owner", "abandoned_reason", "pid_alive", "take_run_lock"]

STALE_AFTER_S = 60.0
_LOCK_ATTEMPTS = 5

Owner = tuple[int | None, str | None, datetime | None]  # a run row's pid, host, heartbeat


def take_run_lock(
    run_id: str, read_owner: Callable[[], Owner], swap: Callable[[Owner, Owner], int]
) -> None:
    """Take the lock of ``run_id`` for this process, whatever the driver: ``read_owner``
    reads the run row's owner; ``swap(was, me)`` sets the owner to ``me`` where it still
    is ``was`` (a compare-and-swap) and returns the rows it changed. RunLockedError when
    a live process holds it."""
    me_pid, me_host = os.getpid(), socket.gethostname()
    for _ in range(_LOCK_ATTEMPTS):
        pid, host, beat = was = read_owner()
        mine = pid == me_pid and host == me_host
        if pid is not None and not mine and _live(pid, host, beat, me_host):
            raise RunLockedError(
                f"run {run_id} is being executed by process {pid} on {host}; wait for it or kill it"
            )
        if swap(was, (me_pid, me_host, now_utc())) == 1:
            return
        # someone else changed the owner between our read and our write: look again
    raise StoreError(f"could not take the lock of run {run_id}: it keeps changing owner; retry")


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
