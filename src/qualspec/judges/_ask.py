"""Ask a model until its answer can be read: the one ask / read / ask-again loop.

Every evaluator that parses a model's verdict (the criteria judge, the comparative judge,
the field grader, the Lab's evaluator, the rubric pipeline) asks through
:func:`ask_until_read`. The evaluator says how to make one call (``ask``) and how to read
one answer (``read``); the loop makes the calls, ``attempt`` 0, 1, 2... (each re-ask is a
call of its own: its own cache key and seed), appends a re-ask note naming what could not
be read, and stops at the first answer read, at a failed call, or after ``retries``
re-asks. What is still unread is left unread: nothing is guessed.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Generic, TypeVar

if TYPE_CHECKING:
    from qualspec.engine import Reply

__all__ = ["AskResult", "Read", "ask_until_read", "could_not_read"]

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Read(Generic[T]):
    """What a reader made of one answer.

    ``value`` is what was read (a reader that gathers over attempts may return a partial
    value); ``done`` is True when nothing is left to ask for; ``why`` says what could not
    be read (it goes into the re-ask note and is the unscored reason).
    """

    value: T
    done: bool
    why: str | None = None


@dataclass(frozen=True, slots=True)
class AskResult(Generic[T]):
    """Every call an :func:`ask_until_read` made, and the last answer's reading.

    ``last`` is the reading of the last answer that came back (None when none did: every
    call failed). A failed call after an answer leaves that answer's reading in ``last``
    and its error in ``error``.
    """

    replies: tuple[Reply, ...]
    last: Read[T] | None

    @property
    def value(self) -> T | None:
        """What the last answer read was read as (None when no answer came back)."""
        return None if self.last is None else self.last.value

    @property
    def done(self) -> bool:
        """True when the last answer was read in full."""
        return self.last is not None and self.last.done

    @property
    def why(self) -> str | None:
        """What the last answer read could not be read for (the unscored reason)."""
        return None if self.last is None else self.last.why

    @property
    def error(self) -> str | None:
        """The last call's error (None when it answered)."""
        return self.replies[-1].error if self.replies else None

    @property
    def texts(self) -> tuple[str | None, ...]:
        """The raw text of every answer, in order (failed calls have none)."""
        return tuple(r.text for r in self.replies if r.error is None)

    @property
    def text(self) -> str | None:
        """The raw text of the last answer (None when no call answered)."""
        texts = self.texts
        return texts[-1] if texts else None

    @property
    def calls(self) -> int:
        """How many calls were made (the first and every re-ask)."""
        return len(self.replies)

    @property
    def cached(self) -> bool:
        """True when every call was answered from the cache."""
        return bool(self.replies) and all(r.cached for r in self.replies)

    @property
    def input_tokens(self) -> int:
        """Prompt tokens over every call (unknown counts as 0)."""
        return sum(r.input_tokens or 0 for r in self.replies)

    @property
    def output_tokens(self) -> int:
        """Answer tokens over every call (unknown counts as 0)."""
        return sum(r.output_tokens or 0 for r in self.replies)

    @property
    def cost_usd(self) -> float | None:
        """The cost of every call, or None when any call's price is unknown."""
        costs = [r.cost_usd for r in self.replies]
        return None if any(c is None for c in costs) else sum(c or 0.0 for c in costs)

    @property
    def latency_s(self) -> float:
        """Seconds spent in calls, summed."""
        return sum(r.latency_s for r in self.replies)


Ask = Callable[[int, "str | None"], Awaitable["Reply"]]
"""Make one call: ``(attempt, re-ask note or None) -> Reply``."""


def could_not_read(instruction: str) -> Callable[[str | None], str]:
    """The usual re-ask note: what could not be read, then how to answer.

    Example:
        >>> could_not_read("Answer only with a number.")("no number")
        'Your previous answer could not be read (no number). Answer only with a number.'
    """

    def note(why: str | None) -> str:
        return f"Your previous answer could not be read ({why}). {instruction}"

    return note


async def ask_until_read(
    ask: Ask,
    read: Callable[[Reply], Read[T]],
    *,
    retries: int,
    re_ask_note: str | Callable[[str | None], str] | None = None,
    retry_errors: bool = False,
) -> AskResult[T]:
    """Call until ``read`` reads the answer in full, or ``retries`` re-asks are spent.

    Args:
        ask: Makes one call, given its ``attempt`` (0 first, then 1, 2...) and the re-ask
            note to append to the prompt (None on the first call, or without a note).
        read: Reads one answer (a reply without an error).
        retries: At most this many re-asks after the first call (below 0: none).
        re_ask_note: The note for the next call from the last answer's ``Read.why``: a
            callable, or a string of how to answer (:func:`could_not_read` of it); None:
            the same prompt is asked again.
        retry_errors: A failed call is asked again too (while re-asks are left) instead of
            ending the loop.

    Returns:
        Every reply, and the last answer's reading (see :class:`AskResult`).

    Example::

        asked = await ask_until_read(
            lambda attempt, note: ctx.complete(model, prompt(note), attempt=attempt),
            lambda reply: Read(n := parse(reply.text), n is not None, "no number"),
            retries=2, re_ask_note="Answer only with a number.")
    """
    note_for = could_not_read(re_ask_note) if isinstance(re_ask_note, str) else re_ask_note
    replies: list[Reply] = []
    last: Read[T] | None = None
    note: str | None = None
    for attempt in range(max(retries, 0) + 1):
        reply = await ask(attempt, note)
        replies.append(reply)
        if reply.error is not None:
            if retry_errors:
                continue
            break
        last = read(reply)
        if last.done:
            break
        if note_for is not None:
            note = note_for(last.why)
    return AskResult(tuple(replies), last)
