"""Prompt versions: each distinct text stored once per name, with an increasing version."""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from qualspec.errors import StoreError
from qualspec.store._clock import now_utc
from qualspec.store._records import PromptVersion

if TYPE_CHECKING:
    from qualspec.store._db import Database

__all__ = ["PromptRegistry", "content_hash"]

_ATTEMPTS = 10


def content_hash(text: str) -> str:
    """SHA-256 of the prompt text (hex)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class PromptRegistry:
    """Finds or creates prompt versions, remembering ids already seen by this Store."""

    def __init__(self, db: Database | Any) -> None:
        self._db = db
        self._memo: dict[tuple[str, str], int] = {}
        self._lock = threading.Lock()

    def version_id(self, name: str, text: str) -> int:
        """The id of ``text`` under ``name``, created as version max+1 when new."""
        digest = content_hash(text)
        with self._lock:
            known = self._memo.get((name, digest))
        if known is not None:
            return known
        found = self._find_or_create(name, text, digest)
        with self._lock:
            self._memo[(name, digest)] = found
        return found

    def many(self, pairs: Iterable[tuple[str, str]]) -> list[int]:
        """``version_id`` for each (name, text) pair, in order."""
        return [self.version_id(name, text) for name, text in pairs]

    def _find_or_create(self, name: str, text: str, digest: str) -> int:
        from sqlalchemy import func, select

        from qualspec.store._schema import prompt_versions

        pv = prompt_versions.c
        for _ in range(_ATTEMPTS):
            try:
                with self._db.write() as conn:
                    existing = conn.execute(
                        select(pv.id).where(pv.name == name, pv.content_hash == digest)
                    ).scalar_one_or_none()
                    if existing is not None:
                        return int(existing)
                    top = conn.execute(
                        select(func.max(pv.version)).where(pv.name == name)
                    ).scalar_one_or_none()
                    inserted = conn.execute(
                        prompt_versions.insert()
                        .values(
                            name=name,
                            version=int(top or 0) + 1,
                            content_hash=digest,
                            text=text,
                            created_at=now_utc(),
                        )
                        .returning(pv.id)
                    ).scalar_one()
                    return int(inserted)
            except StoreError as exc:
                from sqlalchemy.exc import IntegrityError

                if not isinstance(exc.__cause__, IntegrityError):
                    raise
                # another writer took that version number or stored the same text: re-read
        raise StoreError(f"could not store a version of prompt '{name}': too much contention")

    def list_all(self, name: str | None = None) -> list[PromptVersion]:
        """Every stored prompt version (of ``name``), by name then version."""
        from sqlalchemy import select

        from qualspec.store._schema import prompt_versions

        query = select(prompt_versions).order_by(prompt_versions.c.name, prompt_versions.c.version)
        if name is not None:
            query = query.where(prompt_versions.c.name == name)
        with self._db.read() as conn:
            return [PromptVersion(**row) for row in conn.execute(query).mappings()]

    def get(self, name: str, version: int) -> PromptVersion:
        """One version of a named prompt."""
        from sqlalchemy import select

        from qualspec.store._schema import prompt_versions

        pv = prompt_versions.c
        with self._db.read() as conn:
            row = (
                conn.execute(select(prompt_versions).where(pv.name == name, pv.version == version))
                .mappings()
                .first()
            )
        if row is None:
            raise StoreError(f"no prompt '{name}' version {version}: see `qualspec prompts list`")
        return PromptVersion(**row)

    def get_by_id(self, version_id: int) -> PromptVersion:
        """A prompt version by its row id (as linked from responses and judgments)."""
        from sqlalchemy import select

        from qualspec.store._schema import prompt_versions

        with self._db.read() as conn:
            row = (
                conn.execute(select(prompt_versions).where(prompt_versions.c.id == version_id))
                .mappings()
                .first()
            )
        if row is None:
            raise StoreError(f"no prompt version with id {version_id}: see `qualspec prompts list`")
        return PromptVersion(**row)
