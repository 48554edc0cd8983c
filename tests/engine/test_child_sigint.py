"""A child that a test interrupts gets SIGINT's default disposition, whatever ours is.

A non-interactive shell starts a background job (``python -m pytest ... &``: CI runners,
``nohup`` scripts, job schedulers) with SIGINT ignored, and children inherit it: Python
then installs no KeyboardInterrupt handler and a CLI sent SIGINT never sees it.
"""

from __future__ import annotations

import signal
import subprocess
import sys

from helpers_integration import with_default_sigint

REPORT = "import signal; print(signal.getsignal(signal.SIGINT) is signal.default_int_handler)"


def _child_handles_sigint(argv: list[str]) -> str:
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)  # as in a background job
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=True)
    finally:
        signal.signal(signal.SIGINT, previous)
    return done.stdout.strip()


def test_a_plain_child_of_a_background_job_ignores_sigint() -> None:
    # the condition the launcher exists for (were it False, the test below would prove nothing)
    assert _child_handles_sigint([sys.executable, "-c", REPORT]) == "False"


def test_the_launcher_gives_the_child_the_default_sigint() -> None:
    assert _child_handles_sigint(with_default_sigint([sys.executable, "-c", REPORT])) == "True"
