"""The packages' lazy exports (qualspec.lazy): names import on first use, are listed by
dir(), and an unknown name is an AttributeError that names the package."""

from __future__ import annotations

import pytest

import qualspec
import qualspec.engine
import qualspec.store


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
