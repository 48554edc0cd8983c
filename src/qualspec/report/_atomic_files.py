"""Files written whole or not at all: a temporary file beside the target, renamed over it (a
path that is not a regular file, such as a pipe, is written in place)."""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Iterator
from datetime import date, datetime
from pathlib import Path
from typing import IO, Any

from qualspec.errors import StoreError
from qualspec.report._json_text import dumps_indented

__all__ = ["ResultsFileError", "write_json_atomic", "write_text_atomic"]


class ResultsFileError(StoreError):
    """A results file cannot be read or written (missing, not JSON, malformed, disk error)."""


def _json_default(value: Any) -> Any:
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if isinstance(value, set | frozenset | tuple):
        return list(value)
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextlib.contextmanager
def _atomic_writer(path: str | os.PathLike[str]) -> Iterator[IO[str]]:
    """Yield a text file whose content replaces ``path`` only if the block succeeds.

    A path that is not a regular file (``/dev/null``, a FIFO, ``/dev/stdout``) is written
    in place: replacing it would put a regular file where a device or a pipe was. A link
    to a regular file is followed, so the link stays and its target gets the content.
    """
    target = Path(path)
    try:
        mode: int | None = os.stat(target).st_mode
    except FileNotFoundError:
        mode = None  # a new file: written beside its name, then renamed into place
    except OSError as exc:
        raise ResultsFileError(
            f"Cannot write {target}: {exc.strerror or exc}: check the path and its permissions"
        ) from None
    if mode is not None and not stat.S_ISREG(mode):
        try:
            direct = open(target, "w", encoding="utf-8", newline="")
        except OSError as exc:
            raise ResultsFileError(
                f"Cannot write {target}: {exc.strerror or exc}: check its permissions"
            ) from None
        with direct:
            yield direct
        return
    if mode is not None:
        target = target.resolve()
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    except OSError as exc:
        raise ResultsFileError(
            f"Cannot write {target}: {exc.strerror or exc}: check the directory exists and is "
            "writable"
        ) from None
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, target)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        if isinstance(exc, OSError):
            raise ResultsFileError(
                f"Cannot write {target}: {exc.strerror or exc}: free some disk space or "
                "check permissions, then export again"
            ) from exc
        raise


def write_text_atomic(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` to ``path`` atomically (temp file in the same directory, fsync, rename).

    On any error the temporary file is removed and an existing ``path`` is left untouched.

    Raises:
        ResultsFileError: The disk or the operating system refused the write.
    """
    with _atomic_writer(path) as handle:
        handle.write(text)


def write_json_atomic(path: str | os.PathLike[str], data: Any) -> None:
    """Write ``data`` as indented UTF-8 JSON to ``path`` atomically.

    Date-times are written in ISO 8601. On any error (disk full, a value that cannot be
    serialized, ...) the temporary file is removed and an existing ``path`` is untouched.

    Raises:
        ResultsFileError: The disk or the operating system refused the write.
        TypeError: A value cannot be turned into JSON (nothing is written).
    """
    # one string, one write: json.dump would make a write call per token (tens of thousands
    # for a run of a few hundred answers); a value that cannot be serialized fails here,
    # before the temporary file exists. The text of json.dumps(data, indent=2,
    # ensure_ascii=False, default=_json_default), made in half the time.
    text = dumps_indented(data, _json_default)
    with _atomic_writer(path) as handle:
        handle.write(text)
        handle.write("\n")
