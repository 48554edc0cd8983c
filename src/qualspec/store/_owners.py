"""Whether the process that owns a run is alive: the liveness rules the run lock and the
runs list share (apart from both, so neither imports the other)."""

from __future__ import annotations

import os
import socket
import sys
from datetime import UTC, datetime, timedelta

__all__ = ["STALE_AFTER_S", "abandoned_reason", "now_utc", "owner_live", "pid_alive"]


def now_utc() -> datetime:
    """The current time, timezone-aware UTC."""
    return datetime.now(UTC)


STALE_AFTER_S = 60.0


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


def owner_live(pid: int, host: str | None, beat: datetime | None, me_host: str) -> bool:
    """Whether a run's owner (``pid`` on ``host``, last heartbeat ``beat``) is alive, seen
    from ``me_host``: its pid exists here, or its heartbeat elsewhere is recent."""
    if host == me_host:
        return pid_alive(pid)
    return beat is not None and now_utc() - beat < timedelta(seconds=STALE_AFTER_S)


def abandoned_reason(pid: int | None, host: str | None, beat: datetime | None) -> str | None:
    """Why a run recorded as ``running`` is not: its owner is gone (None: it is live).

    The owner is gone when it ran on this host and its pid no longer exists, or ran on
    another host and its heartbeat is older than ``STALE_AFTER_S``. Such a run was
    SIGKILLed, crashed, or could not record its end because the database was down.
    """
    if pid is None or owner_live(pid, host, beat, socket.gethostname()):
        return None
    return (
        f"the process that ran it (pid {pid} on {host}) is gone and could not record how "
        "the run ended (killed, or the database was unreachable): resume it with --resume"
    )
