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

    async def session(self) -> Session:
        """The open session (opened now if need be)."""
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
        if session is not None and self._owned:
            self._owned = False
            await session.aclose()
