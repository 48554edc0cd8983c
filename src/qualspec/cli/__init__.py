"""The ``qualspec`` command line. Thin: every command calls the library.

argparse keeps ``qualspec --help`` fast (no heavy imports before a command runs).
"""

from __future__ import annotations

import atexit
import gc
import os
import sys
import threading
from collections.abc import Sequence

from qualspec.cli._app import build_parser, dispatch
from qualspec.cli._progress import LazyProgress, pace_text

__all__ = ["LazyProgress", "main", "pace_text"]

# A command is a short process that imports a lot (pydantic, SQLAlchemy, aiohttp) and then
# makes many small allocations. With Python's default young-generation threshold (700) the
# collector runs hundreds of times and walks the whole heap a few times: about a tenth of
# the CPU of a `qualspec run`. A larger young generation finds the same garbage in a few
# passes; the older generations keep their thresholds, so long runs are collected as usual.
_GC_YOUNG_THRESHOLD = 50_000


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point of the ``qualspec`` script.

    Called with no ``argv`` (the script: the command line is ``sys.argv``), a finished
    command ends the process at once (see :func:`_exit_now`); called with ``argv`` (from
    Python, as the tests do) it raises ``SystemExit`` as usual.
    """
    args = list(sys.argv[1:] if argv is None else argv)
    saved = gc.get_threshold()
    gc.set_threshold(max(saved[0], _GC_YOUNG_THRESHOLD), *saved[1:])
    try:
        parser = build_parser(args)  # only the command asked for
        ns = parser.parse_args(args)
        code = dispatch(ns, args)
    finally:
        # the script ends now: the default threshold back would only set off a collection of
        # all that was made since the last one (10-20 ms of CPU) just before the process ends
        if argv is not None:
            gc.set_threshold(*saved)
    if argv is None:
        _exit_now(code)
    raise SystemExit(code)


def _exit_now(code: int) -> None:
    """End the process with ``code`` without the interpreter's teardown.

    Tearing down a command's interpreter (hundreds of modules, the run's records) took
    40-90 ms of a 1 s ``qualspec run``, for nothing: the process ends anyway. Everything a
    normal exit does that is seen outside is done first: the atexit handlers run (logging
    flushes its handlers, coverage saves its data) and stdout and stderr are flushed. Files
    the commands write are closed when written. Where another (non-daemon) thread still
    runs, the normal exit waits for it: then so does this one (it returns, and the caller
    raises SystemExit).
    """
    if any(t.is_alive() and not t.daemon for t in threading.enumerate() if t is not _MAIN):
        return
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe or stream: nothing more to write
            pass
    os._exit(code)


_MAIN = threading.main_thread()
