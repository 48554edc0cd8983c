"""Run the fake server in its own process: ``python -m qualspec.testing.fakeserver``.

Prints the base URL on the first line of stdout, then serves until killed. Other
processes read its counters at ``GET /_stats`` and change faults at ``POST /_control``.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from types import FrameType

from qualspec.testing._fakeserver import DEFAULT_JUDGE_REPLY, FakeServer

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    """Serve until SIGINT/SIGTERM."""
    parser = argparse.ArgumentParser(prog="python -m qualspec.testing.fakeserver")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds per call")
    parser.add_argument("--require-key", default=None, help="answer 401 to other keys")
    parser.add_argument("--judge-reply", default=DEFAULT_JUDGE_REPLY)
    parser.add_argument("--no-log", action="store_true", help="do not keep a request log")
    args = parser.parse_args(argv)
    stop = threading.Event()

    def _on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, _on_signal)
    signal.signal(signal.SIGINT, _on_signal)
    server = FakeServer(
        latency=args.latency,
        require_key=args.require_key,
        judge_reply=args.judge_reply,
        host=args.host,
        port=args.port,
        log_requests=not args.no_log,
    )
    with server:
        print(server.base_url, flush=True)
        while not stop.wait(0.5):
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
