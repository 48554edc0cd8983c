"""What was sent for one answer, from what the store keeps: the input row (its values,
stored once per row with the run) and the user message rebuilt from the scenario's prompt
template, the row and the role's preamble, exactly as the engine built it.

Pages show at most :data:`MAX_SHOWN` characters of a row or a message and say so; the
store keeps them whole (``qualspec runs export`` writes every row). Texts stay raw here:
the templates escape them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from qualspec.store import REDACTED

__all__ = ["MAX_SHOWN", "NOT_STORED", "capped", "row_has", "row_shown", "sent_message"]

MAX_SHOWN = 10_000  # characters of a row or a message a page shows
NOT_STORED = "not stored: this answer was recorded before qualspec kept input rows with a run"


def capped(text: str, what: str) -> tuple[str, str | None]:
    """``text`` cut to :data:`MAX_SHOWN` characters, and a note when it was cut."""
    if len(text) <= MAX_SHOWN:
        return text, None
    return text[:MAX_SHOWN], (
        f"the first {MAX_SHOWN:,} of {len(text):,} characters of the {what} are shown; "
        "the store keeps it whole (qualspec runs export RUN --format json)"
    )


def row_shown(
    input_id: str | None, values: Mapping[str, Any] | None
) -> tuple[str | None, str | None]:
    """(the row's values as indented JSON, cut for the page, or None; a note: cut, secrets
    masked, or why there is no row). (None, None) for an answer without an input row."""
    if input_id is None and values is None:
        return None, None
    if values is None:
        return None, NOT_STORED
    text = json.dumps(values, indent=2, ensure_ascii=False, default=str)
    shown, note = capped(text, "row")
    notes = [n for n in (note,) if n]
    if REDACTED in text:
        notes.append(f"{REDACTED} marks text that looked like a secret (masked when stored)")
    return shown, "; ".join(notes) or None


def sent_message(
    template: str | None,
    preamble: str | None,
    input_id: str | None,
    values: Mapping[str, Any] | None,
) -> tuple[str | None, str | None]:
    """(the user message as sent, cut for the page, or None when it cannot be rebuilt; a
    note when it was cut): the template as written without an input row, else rendered
    with the stored row, after the preamble and a blank line."""
    if template is None or (input_id is not None and values is None):
        return None, None
    body = template
    if values is not None:
        from qualspec.spec import render_prompt

        try:
            body = render_prompt(template, {str(k): v for k, v in values.items()})
        except KeyError:  # a variable the row lacks: the template is not this row's
            return None, None
    return capped(f"{preamble}\n\n{body}" if preamble else body, "message")


def row_has(values: Mapping[str, Any] | None, pattern: re.Pattern[str]) -> bool:
    """Whether ``pattern`` is found in one of the row's values (a search of the answers)."""
    if not values:
        return False
    for value in values.values():
        text = value if isinstance(value, str) else json.dumps(value, default=str)
        if pattern.search(text):
            return True
    return False
