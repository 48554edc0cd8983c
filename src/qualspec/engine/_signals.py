"""SIGTERM stops a synchronous run the way Ctrl-C does: the run is marked interrupted.

``kill PID`` (SIGTERM) is how job schedulers, CI timeouts, ``docker stop`` and systemd stop
a process, and how a user stops a run started as a background job of a script: there the
shell starts it with SIGINT ignored (so that Ctrl-C at the terminal leaves it running), and
qualspec, like Python itself, keeps an ignored SIGINT ignored. The first SIGTERM cancels the
run's main task, as asyncio's handler does for the first Ctrl-C: what finished is recorded,
the run is marked ``interrupted`` and :class:`KeyboardInterrupt` is raised (the CLI exits 130).
A second SIGTERM terminates the process at once. An ignored SIGTERM stays ignored.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import threading
from collections.abc import Iterator

__all__ = ["sigterm_interrupts"]


@contextlib.contextmanager
def sigterm_interrupts() -> Iterator[None]:
    """Within the block (in the task of ``asyncio.run``'s main coroutine), SIGTERM cancels
    that task and the block raises :class:`KeyboardInterrupt` once it has unwound.

    Does nothing outside the main thread (a worker thread's loop cannot take signals), where
    SIGTERM is not at its default (ignored, or handled by someone else), or where the loop
    cannot take signal handlers.
    """
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    if (
        task is None
        or threading.current_thread() is not threading.main_thread()
        or signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL
    ):
        yield
        return
    received = 0

    def on_sigterm() -> None:
        nonlocal received
        received += 1
        if received == 1:
            task.cancel()
        else:  # the second one: stop now
            loop.remove_signal_handler(signal.SIGTERM)
            os.kill(os.getpid(), signal.SIGTERM)

    try:
        loop.add_signal_handler(signal.SIGTERM, on_sigterm)
    except (NotImplementedError, RuntimeError, ValueError):  # e.g. Windows
        yield
        return
    try:
        yield
    except asyncio.CancelledError:
        if received:
            raise KeyboardInterrupt from None
        raise
    finally:
        loop.remove_signal_handler(signal.SIGTERM)
    if received:  # the run stopped on its own as the signal came: still, we were told to stop
        raise KeyboardInterrupt
