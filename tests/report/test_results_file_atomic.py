"""Atomic writes: a failure at any step leaves no truncated target and no temp file."""

from __future__ import annotations

import errno
import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from qualspec.report import (
    ResultsFileError,
    read_results_file,
    write_json_atomic,
    write_text_atomic,
)

OLD = '{"old": "content, complete"}\n'


class Explodes:
    """Serializing this raises, after earlier values were already written out."""


def big_data(bad: Any = None) -> dict[str, Any]:
    data: dict[str, Any] = {"first": "x" * 200_000, "items": list(range(20_000))}
    if bad is not None:
        data["zz_last"] = bad
    return data


@pytest.fixture
def target(tmp_path: Path) -> Path:
    path = tmp_path / "out" / "results.json"
    path.parent.mkdir()
    path.write_text(OLD, encoding="utf-8")
    return path


def assert_untouched(target: Path) -> None:
    assert target.read_text(encoding="utf-8") == OLD
    assert sorted(p.name for p in target.parent.iterdir()) == [target.name]


def test_writes_complete_file_with_normal_permissions(tmp_path: Path) -> None:
    path = tmp_path / "new" / "deeper" / "r.json"  # parent folders are created
    write_json_atomic(path, big_data())
    assert json.loads(path.read_text(encoding="utf-8")) == big_data()
    mask = os.umask(0)
    os.umask(mask)
    assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~mask
    assert [p.name for p in path.parent.iterdir()] == ["r.json"]


def test_replaces_existing_file(target: Path) -> None:
    write_text_atomic(target, "new\n")
    assert target.read_text(encoding="utf-8") == "new\n"
    assert [p.name for p in target.parent.iterdir()] == ["results.json"]


def test_serialization_error_mid_write(target: Path) -> None:
    with pytest.raises(TypeError, match="Explodes is not JSON serializable"):
        write_json_atomic(target, big_data(Explodes()))
    assert_untouched(target)


def test_serialization_error_without_existing_target(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    with pytest.raises(TypeError):
        write_json_atomic(path, big_data(Explodes()))
    assert list(tmp_path.iterdir()) == []


def test_disk_full_during_write(target: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real_fdopen = os.fdopen
    written: list[int] = []

    class FullDisk:
        def __init__(self, handle: Any) -> None:
            self.handle = handle

        def write(self, text: str) -> int:
            if sum(written) > 50_000:
                raise OSError(errno.ENOSPC, "No space left on device")
            written.append(len(text))
            return int(self.handle.write(text))

        def __getattr__(self, name: str) -> Any:
            return getattr(self.handle, name)

        def __enter__(self) -> FullDisk:
            return self

        def __exit__(self, *exc: object) -> None:
            self.handle.close()

    def fdopen(fd: int, *args: Any, **kwargs: Any) -> FullDisk:
        return FullDisk(real_fdopen(fd, *args, **kwargs))

    monkeypatch.setattr(os, "fdopen", fdopen)
    with pytest.raises(ResultsFileError) as info:
        write_json_atomic(target, big_data())
    assert written, "the write really started before the disk filled up"
    message = str(info.value)
    assert message.startswith(f"Cannot write {target}: No space left on device: free some")
    assert "\n" not in message
    monkeypatch.undo()
    assert_untouched(target)


@pytest.mark.parametrize("step", ["fsync", "replace", "chmod"])
def test_os_error_at_each_step(target: Path, monkeypatch: pytest.MonkeyPatch, step: str) -> None:
    def fail(*args: Any, **kwargs: Any) -> None:
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(os, step, fail)
    with pytest.raises(ResultsFileError, match="Input/output error"):
        write_json_atomic(target, big_data())
    monkeypatch.undo()
    assert_untouched(target)


def test_keyboard_interrupt_mid_write(target: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def interrupted(*args: Any, **kwargs: Any) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "fsync", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_text_atomic(target, "half")
    monkeypatch.undo()
    assert_untouched(target)


def test_unwritable_directory(tmp_path: Path) -> None:
    # a regular file where the parent folder should be: no temp file can be created
    blocker = tmp_path / "blocker"
    blocker.write_text("x", encoding="utf-8")
    with pytest.raises(ResultsFileError, match=f"^Cannot write {blocker / 'r.json'}: "):
        write_json_atomic(blocker / "r.json", {"a": 1})
    assert blocker.read_text(encoding="utf-8") == "x"


def test_half_written_file_is_never_visible(target: Path) -> None:
    # a complete, readable results file is never replaced by a broken one
    with pytest.raises(TypeError):
        write_json_atomic(target, {"schema_version": "1.0", "bad": Explodes()})
    with pytest.raises(ResultsFileError, match="no schema_version"):
        read_results_file(target)  # the old (non-results) content, intact and parseable
