"""The packages' lazy exports (qualspec.lazy): names import on first use, are listed by
dir(), and an unknown name is an AttributeError that names the package."""

from __future__ import annotations

import sys
import threading
from pathlib import Path
from typing import Any

import pytest

import qualspec
import qualspec.engine
import qualspec.store
from qualspec.lazy import lazy_modules


def test_a_lazy_name_resolves_and_is_kept_on_the_package() -> None:
    store_cls = qualspec.store.Store
    assert store_cls.__module__ == "qualspec.store._store"
    assert vars(qualspec.store)["Store"] is store_cls  # later lookups are plain reads


def test_dir_lists_the_lazy_names() -> None:
    assert "Store" in dir(qualspec.store)
    assert "Session" in dir(qualspec.engine)
    assert "run" in dir(qualspec)


def test_an_unknown_name_is_an_attribute_error_naming_the_package() -> None:
    with pytest.raises(AttributeError, match="module 'qualspec.engine' has no attribute 'nope'"):
        _ = qualspec.engine.nope  # type: ignore[attr-defined]


def test_a_lazy_module_read_while_another_thread_imports_it_waits_for_the_import(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The store's SQLAlchemy modules are imported on first use, from worker threads too: a
    thread that reads one while another thread is importing it gets the whole module, not
    an AttributeError for a name the import has not reached yet."""
    package = tmp_path / "lazypkg"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "slow.py").write_text(
        "def first():\n"
        "    return 1\n"
        "import lazypkg.gate as gate\n"
        "gate.started.set()\n"
        "gate.release.wait(60)\n"
        "def later():\n"
        "    return 2\n",
        encoding="utf-8",
    )
    (package / "gate.py").write_text(
        "import threading\nstarted = threading.Event()\nrelease = threading.Event()\n",
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    import lazypkg.gate as gate  # type: ignore[import-not-found]

    slow = lazy_modules("lazypkg", "slow")["slow"]
    results: dict[str, Any] = {}

    def read(name: str) -> None:
        try:
            results[name] = getattr(slow, name)()
        except Exception as exc:  # noqa: BLE001 - what the reader saw is the result
            results[name] = exc

    importer = threading.Thread(target=read, args=("first",))
    importer.start()
    assert gate.started.wait(60)  # the import is under way, stopped before `later`
    reader = threading.Thread(target=read, args=("later",))
    reader.start()
    reader.join(0.5)  # it waits for the import (it does not fail at once)
    gate.release.set()
    importer.join(60)
    reader.join(60)
    assert results == {"first": 1, "later": 2}
    for name in ("lazypkg", "lazypkg.slow", "lazypkg.gate"):
        monkeypatch.delitem(sys.modules, name, raising=False)
