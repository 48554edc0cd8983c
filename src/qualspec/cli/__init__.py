"""The ``qualspec`` command line. Thin: every command calls the library.

argparse keeps ``qualspec --help`` fast (no heavy imports before a command runs).
"""

from __future__ import annotations

import gc
import sys
from collections.abc import Sequence

from qualspec.cli._app import build_parser, dispatch

__all__ = ["main"]

# A command is a short process that imports a lot (pydantic, SQLAlchemy, aiohttp) and then
# makes many small allocations. With Python's default young-generation threshold (700) the
# collector runs hundreds of times and walks the whole heap a few times: about a tenth of
# the CPU of a `qualspec run`. A larger young generation finds the same garbage in a few
# passes; the older generations keep their thresholds, so long runs are collected as usual.
_GC_YOUNG_THRESHOLD = 50_000


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point of the ``qualspec`` script."""
    args = list(sys.argv[1:] if argv is None else argv)
    saved = gc.get_threshold()
    gc.set_threshold(max(saved[0], _GC_YOUNG_THRESHOLD), *saved[1:])
    try:
        parser = build_parser()
        ns = parser.parse_args(args)
        code = dispatch(ns, args)
    finally:
        gc.set_threshold(*saved)
    raise SystemExit(code)
