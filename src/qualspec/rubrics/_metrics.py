"""Session metrics: the numbers that choose high-quality sessions and the efficiency scores.

* ``turns`` and ``user_turns`` (turns that start with a user message);
* ``tokens``: input (with cache reads and writes) plus output tokens, summed over the
  assistant replies' ``usage`` (one per ``message.id``: the lines of one reply repeat it);
* ``code_growth``: lines written by ``Write`` (its ``content``), ``Edit`` (``new_string``
  lines less ``old_string`` lines), ``MultiEdit`` (the same over its edits) and
  ``NotebookEdit`` (``new_source``);
* ``token_efficiency`` = code growth per 1,000 tokens, ``user_turn_efficiency`` = code
  growth per user turn (None when the divisor is 0).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from qualspec.rubrics._sessions import ChatSession

__all__ = ["SessionMetrics", "session_metrics"]

_TOKEN_FIELDS = (
    "input_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
    "output_tokens",
)


@dataclass(frozen=True)
class SessionMetrics:
    """The measured size and efficiency of one session (see the module docstring)."""

    turns: int
    user_turns: int
    tokens: int
    code_growth: int
    token_efficiency: float | None
    user_turn_efficiency: float | None

    def as_dict(self) -> dict[str, Any]:
        """The metrics as a JSON-ready mapping."""
        return asdict(self)

    def value(self, name: str) -> float | None:
        """The metric named ``name`` (a field of this class), as a number or None."""
        value = getattr(self, name, None)
        return float(value) if isinstance(value, int | float) else None


def _lines(text: Any) -> int:
    return len(text.splitlines()) if isinstance(text, str) else 0


def _edit_growth(edit: Mapping[str, Any]) -> int:
    return _lines(edit.get("new_string")) - _lines(edit.get("old_string"))


def session_metrics(session: ChatSession) -> SessionMetrics:
    """Measure ``session`` (see the module docstring)."""
    tokens = 0
    for usage in session.usage:
        for name in _TOKEN_FIELDS:
            value = usage.get(name)
            if isinstance(value, int) and not isinstance(value, bool) and value > 0:
                tokens += value
    growth = 0
    for turn in session.turns:
        for call in turn.tool_calls:
            params = call.input
            if call.name == "Write":
                growth += _lines(params.get("content"))
            elif call.name == "Edit":
                growth += _edit_growth(params)
            elif call.name == "MultiEdit" and isinstance(params.get("edits"), list):
                growth += sum(_edit_growth(e) for e in params["edits"] if isinstance(e, dict))
            elif call.name == "NotebookEdit":
                growth += _lines(params.get("new_source"))
    user_turns = session.user_turns
    return SessionMetrics(
        turns=len(session.turns),
        user_turns=user_turns,
        tokens=tokens,
        code_growth=growth,
        token_efficiency=round(growth * 1000 / tokens, 4) if tokens else None,
        user_turn_efficiency=round(growth / user_turns, 4) if user_turns else None,
    )
