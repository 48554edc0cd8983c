"""A defensive pass over run metadata: secrets never reach the database."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from qualspec.store._url import display_url

__all__ = ["REDACTED", "redact"]

REDACTED = "***"
_SECRET_KEY = re.compile(r"key|token|secret|password|authorization", re.IGNORECASE)
_BEARER = re.compile(r"^\s*(bearer|basic)\s+\S", re.IGNORECASE)


def redact(obj: Any) -> Any:
    """Return a copy of ``obj`` with secret-looking values replaced by ``"***"``.

    A value is replaced when its mapping key matches
    ``key|token|secret|password|authorization`` (case-insensitive) and it is not a
    number, a boolean or None (so counts such as ``max_tokens: 256`` survive), and any
    string that starts like an HTTP ``Bearer``/``Basic`` credential is replaced wherever
    it appears; in every other string, URL passwords and keys are masked
    (:func:`~qualspec.store.display_url`). Lists, tuples and nested mappings are walked
    recursively.

    Args:
        obj: A JSON-like value (mappings, sequences, scalars).

    Returns:
        The redacted copy; ``obj`` itself is not modified.
    """
    if isinstance(obj, Mapping):
        out: dict[Any, Any] = {}
        for key, value in obj.items():
            if _is_secret(key, value):
                out[key] = REDACTED
            else:
                out[key] = redact(value)
        return out
    if isinstance(obj, list | tuple):
        return [redact(v) for v in obj]
    if isinstance(obj, str):
        return REDACTED if _BEARER.match(obj) else display_url(obj)
    return obj


def _is_secret(key: object, value: object) -> bool:
    if not isinstance(key, str) or not _SECRET_KEY.search(key):
        return False
    return not (value is None or isinstance(value, bool | int | float))
