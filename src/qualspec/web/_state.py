"""What the web app holds: one ``Session``, opened in the server's own event loop."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from qualspec.engine import Session
    from qualspec.spec import ProviderConfig

__all__ = ["WebState"]


class WebState:
    """The app's session, opened on first use in the loop that serves requests.

    Args:
        db: The database URL (default: ``$QUALSPEC_DATABASE_URL`` or ``.qualspec/``).
        providers: Named provider connections for the Lab's models.
        session: An open session to use instead (not closed by the app).
    """

    def __init__(
        self,
        *,
        db: str | None = None,
        providers: Mapping[str, ProviderConfig] | None = None,
        session: Session | None = None,
    ) -> None:
        self.db = db
        self.providers = dict(providers) if providers else None
        self._session = session
        self._owned = False
        self._lock: asyncio.Lock | None = None
        self._retired: list[Session] = []

    async def session(self) -> Session:
        """The open session (opened now if need be).

        A session the app opened that stopped calling (a provider refused its key: the
        engine then refuses every call, to every provider) is replaced by a fresh one, so
        one Lab request with a bad key does not fail every later one; the old one is
        closed with the app (requests still using it keep it)."""
        current = self._session
        if current is not None and self._owned and current.calls.stop_reason is not None:
            self._retired.append(current)
            self._session = None
        if self._session is not None:
            return self._session
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            if self._session is None:
                from qualspec.engine import Session

                session = Session(db=self.db, providers=self.providers)
                await session.open()
                self._session, self._owned = session, True
        return self._session

    async def aclose(self) -> None:
        """Close the session if the app opened it."""
        session, self._session = self._session, None
        retired, self._retired = self._retired, []
        for old in retired:
            await old.aclose()
        if session is not None and self._owned:
            self._owned = False
            await session.aclose()
