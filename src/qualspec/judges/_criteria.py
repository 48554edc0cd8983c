"""The criteria judge's prompt: one criterion, a 0-10 score and brief reasoning as JSON."""

from __future__ import annotations

import re
from typing import Any

from qualspec.prompts import load_template, render_template
from qualspec.providers import Message

__all__ = [
    "DEFAULT_MAX_RESPONSE_CHARS",
    "JUDGE_PROMPT_NAME",
    "JUDGE_SCHEMA",
    "build_judge_messages",
    "judge_prompt_text",
    "truncate_text",
]

JUDGE_PROMPT_NAME = "judge_criteria"
DEFAULT_MAX_RESPONSE_CHARS = 4000
# The embedded judge has a 2048-token window: the prompt and context are capped as well.
_MAX_PROMPT_CHARS = 1200
_MAX_CONTEXT_CHARS = 600

JUDGE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "score": {"type": "integer", "minimum": 0, "maximum": 10},
        "reasoning": {"type": "string"},
    },
    "required": ["score", "reasoning"],
    "additionalProperties": False,
}

_SECTION = re.compile(r"^\[(system|user)\]\s*$", re.MULTILINE)


def judge_prompt_text() -> str:
    """Return the criteria judge's template text (the store versions it by content hash)."""
    return load_template(JUDGE_PROMPT_NAME)


def truncate_text(text: str, max_chars: int, *, what: str = "response") -> str:
    """Cut ``text`` to ``max_chars`` characters, marking the cut so the judge knows.

    Args:
        text: The text to shorten.
        max_chars: How many characters of ``text`` to keep (``<= 0`` keeps none).
        what: What the text is, named in the marker.

    Returns:
        ``text`` unchanged when short enough, else its head plus a marker line such as
        ``[... response truncated: 1200 more characters not shown]``.
    """
    if len(text) <= max_chars:
        return text
    keep = max(max_chars, 0)
    hidden = len(text) - keep
    return f"{text[:keep]}\n[... {what} truncated: {hidden} more characters not shown]"


def _sections(template: str) -> dict[str, str]:
    parts = _SECTION.split(template)
    # parts = [preamble, name1, body1, name2, body2, ...]
    sections = {parts[i]: parts[i + 1].strip() for i in range(1, len(parts) - 1, 2)}
    if set(sections) != {"system", "user"}:
        raise ValueError(
            f"prompt template {JUDGE_PROMPT_NAME!r} must have a [system] and a [user] section; "
            "reinstall qualspec if the file was edited"
        )
    return sections


def build_judge_messages(
    *,
    criterion: str,
    prompt: str,
    response: str,
    context: str | None = None,
    max_response_chars: int = DEFAULT_MAX_RESPONSE_CHARS,
    retry_note: str | None = None,
) -> tuple[Message, ...]:
    """Build the judge's chat messages for scoring one response on one criterion.

    Args:
        criterion: The single criterion to score (e.g. ``"Cites its sources"``).
        prompt: The prompt the candidate answered (capped at 1,200 characters).
        response: The candidate's answer, cut to ``max_response_chars`` with a marker.
        context: Background for the judge only (capped at 600 characters), or ``None``.
        max_response_chars: How much of the response the judge sees.
        retry_note: Appended to the user message when the previous judge answer could not
            be parsed, e.g. ``"Your previous answer could not be read: ..."``.

    Returns:
        ``(system message, user message)``.

    Example:
        >>> msgs = build_judge_messages(criterion="Is polite", prompt="Hi", response="Hello!")
        >>> [m.role for m in msgs]
        ['system', 'user']
    """
    sections = _sections(judge_prompt_text())
    context_block = ""
    if context is not None and context.strip():
        background = truncate_text(context.strip(), _MAX_CONTEXT_CHARS, what="background")
        context_block = f"Background for judging (not shown to the model):\n{background}\n"
    values = {
        "criterion": " ".join(criterion.split()),
        "prompt": truncate_text(prompt, _MAX_PROMPT_CHARS, what="prompt"),
        "response": truncate_text(response, max_response_chars, what="response"),
        "context_block": context_block,
    }
    user = render_template(sections["user"], values)
    if retry_note:
        user = f"{user}\n\n{retry_note.strip()}"
    system = render_template(sections["system"], values)
    return (Message(role="system", content=system), Message(role="user", content=user))
