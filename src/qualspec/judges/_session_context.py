"""An evaluator context over a :class:`~qualspec.engine.Session`, outside any run.

What calibration (``qualspec judge-check``) and ``qualspec grader-check`` give an evaluator
to re-score known answers: every call goes through ``Session.complete`` (limits, retries,
cache, cost, the session's own recorded run). ``attempt_offset`` is added to the
evaluator's own ``attempt``: a repeat is then a fresh call (its own cache key and seed), and
a parse re-ask within it too.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from qualspec.engine import CallOptions, Reply, Session
    from qualspec.providers import Message
    from qualspec.spec import ProviderConfig
    from qualspec.store import ReferenceReview, Store

__all__ = ["SessionContext"]


class SessionContext:
    """An ``EvalContext`` whose calls are the session's.

    Args:
        session: The open session.
        attempt_offset: Added to every call's ``attempt``.
        kind: The kind every call is recorded and cached as (None: the evaluator's own).
        providers: Named provider connections (a suite's ``providers:``).
    """

    def __init__(
        self,
        session: Session,
        *,
        attempt_offset: int = 0,
        kind: str | None = None,
        providers: Mapping[str, ProviderConfig] | None = None,
    ) -> None:
        self._session = session
        self._offset = attempt_offset
        self._kind = kind
        self._providers = providers
        self.run_id = ""
        self.prompt_version: int | None = None

    @property
    def store(self) -> Store:
        """The session's results database (what an evaluator may read, e.g. reviews)."""
        return self._session.store

    async def reference_review(self, call_key: str) -> ReferenceReview | None:
        """The store's review of a reference answer (status, a person's override), or None:
        what the field grader reads, as it does in a run."""
        return await asyncio.to_thread(self._session.store.reference_review, call_key)

    async def complete(
        self,
        model: str,
        messages: Sequence[Message],
        *,
        temperature: float = 0.0,
        max_tokens: int | None = None,
        params: Mapping[str, Any] | None = None,
        json_schema: Mapping[str, Any] | None = None,
        attempt: int = 0,
        kind: str = "judge",
        structured_mode: str = "auto",
    ) -> Reply:
        """One call through the session (see ``EvalContext.complete``)."""
        from qualspec.engine import CallOptions

        options = CallOptions(
            temperature=temperature,
            max_tokens=max_tokens,
            params=params,
            json_schema=json_schema,
            attempt=attempt + self._offset,
            structured_mode=structured_mode,
        )
        return await self.call(model, messages, kind=self._kind or kind, options=options)

    async def call(
        self, model: str, messages: Sequence[Message], *, kind: str, options: CallOptions
    ) -> Reply:
        """The call :meth:`complete` makes (its settings as one ``CallOptions``, the
        attempt offset added): ``Session.complete`` with the context's providers."""
        return await self._session.complete(
            model, list(messages), kind=kind, options=options, providers=self._providers
        )
