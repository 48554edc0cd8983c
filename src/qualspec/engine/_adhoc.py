"""What ``Session.complete`` sends and records: its messages, and the record of its
answer (placed under its model and kind in the session's own run)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from qualspec.engine._items import cell_key
from qualspec.providers import Message, split_address
from qualspec.store import ResponseRecord

if TYPE_CHECKING:
    from qualspec.engine._options import CallOptions
    from qualspec.engine._reply import Reply

__all__ = ["adhoc_messages", "adhoc_record"]


def adhoc_messages(prompt: str | Sequence[Message], system: str | None) -> tuple[Message, ...]:
    """A prompt (a user message, or the messages) with ``system`` first."""
    messages = (Message("user", prompt),) if isinstance(prompt, str) else tuple(prompt)
    return messages if system is None else (Message("system", system), *messages)


def adhoc_record(reply: Reply, model: str, kind: str, options: CallOptions) -> ResponseRecord:
    """The record of a single call (``Session.complete``) to ``model``: the call (everything
    sent, where to) placed under its model and kind."""
    name, model_name = split_address(model)
    return ResponseRecord.from_reply(
        reply,
        key=cell_key(reply.key, model, None, kind, None),
        candidate=model,
        temperature=options.temperature,  # None: none was sent (the provider's default)
        run_index=options.attempt,
        provider=name,
        model=model_name,
        created_at=datetime.now(UTC),
        kind=kind,
        call_key=reply.key,
    )
