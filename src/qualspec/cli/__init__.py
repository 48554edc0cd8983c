"""The ``qualspec`` command line. Thin: every command calls the library.

argparse keeps ``qualspec --help`` fast (no heavy imports before a command runs).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from qualspec.cli._app import build_parser, dispatch

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point of the ``qualspec`` script."""
    args = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    ns = parser.parse_args(args)
    raise SystemExit(dispatch(ns, args))
