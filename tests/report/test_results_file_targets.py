"""Where a results or HTML file goes: a device or a pipe is written in place, never replaced.

Writing ``-o /dev/null`` as root used to rename a temporary file over ``/dev/null``, leaving
a regular file where the device was (and every later ``> /dev/null`` of other programs, such
as PostgreSQL's ``initdb``, failing for users without write access to it).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from qualspec.report import write_text_atomic


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_a_pipe_is_written_in_place_and_stays_a_pipe(tmp_path: Path) -> None:
    fifo = tmp_path / "out.json"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # a reader waits, as `cat` would
    try:
        write_text_atomic(fifo, '{"ok": true}\n')
        assert stat.S_ISFIFO(os.stat(fifo).st_mode), "the pipe was replaced by a file"
        assert os.read(reader, 1024) == b'{"ok": true}\n'
    finally:
        os.close(reader)
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"], "a temporary file was left"


def test_a_link_to_a_file_stays_a_link_and_its_target_gets_the_text(tmp_path: Path) -> None:
    real = tmp_path / "real.json"
    real.write_text("old", encoding="utf-8")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    write_text_atomic(link, "new")
    assert link.is_symlink()
    assert real.read_text(encoding="utf-8") == "new"


def test_a_new_file_and_an_existing_file_are_written_whole(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "results.json"
    write_text_atomic(path, "one")
    write_text_atomic(path, "two")
    assert path.read_text(encoding="utf-8") == "two"
    assert sorted(p.name for p in path.parent.iterdir()) == ["results.json"]
