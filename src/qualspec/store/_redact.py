"""A defensive pass over run metadata: secrets never reach the database."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from qualspec.store._url import display_url

__all__ = ["REDACTED", "redact", "redact_text"]

REDACTED = "***"
_SECRET_KEY = re.compile(r"key|token|secret|password|authorization", re.IGNORECASE)
_BEARER = re.compile(r"^\s*(bearer|basic)\s+\S", re.IGNORECASE)
# Credentials recognisable by their shape, wherever they stand in free text.
_TOKEN_SHAPES = re.compile(
    r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?-----END [A-Z ]*PRIVATE KEY-----"
    r"|\b(?:sk|pk|rk)-(?:[A-Za-z0-9]+-)*[A-Za-z0-9_]{16,}"  # OpenAI, Anthropic, Stripe
    r"|\bgh[pousr]_[A-Za-z0-9]{20,}|\bgithub_pat_[A-Za-z0-9_]{20,}"  # GitHub
    r"|\bglpat-[A-Za-z0-9_-]{20,}"  # GitLab
    r"|\bxox[abprs]-[A-Za-z0-9-]{10,}"  # Slack
    r"|\bAKIA[0-9A-Z]{16}\b"  # AWS access key id
    r"|\bAIza[0-9A-Za-z_-]{30,}"  # Google
    r"|\bhf_[A-Za-z0-9]{30,}"  # Hugging Face
    r"|\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",  # a JWT
    re.DOTALL,
)
# "Bearer <token>" anywhere, and NAME=value / "name": "value" where the name says secret.
_AUTH_HEADER = re.compile(r"(?P<head>\b(?:bearer|basic)\s+)[A-Za-z0-9._~+/=-]{8,}", re.I)
_ASSIGNED = re.compile(
    r"(?P<head>\b[\w.-]*(?:api[_-]?key|secret|token|password|passwd)[\w.-]*[\"']?"
    r"\s*[:=]\s*[\"']?)(?P<value>[^\s\"',;]{6,})",
    re.IGNORECASE,
)


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


def redact_text(text: str) -> str:
    """``text`` with whatever looks like an API key, token or password replaced by ``***``.

    For free text that leaves the machine (a coding session sent to a judge model): keys
    recognisable by their shape (``sk-...``, ``sk-ant-...``, ``ghp_...``, ``AKIA...``,
    ``xoxb-...``, ``AIza...``, ``hf_...``, JWTs, PEM private keys), ``Bearer <token>``,
    values assigned to a secret-sounding name (``OPENAI_API_KEY=...``,
    ``"password": "..."``) and URL passwords (:func:`~qualspec.store.display_url`).
    Idempotent.

    Example:
        >>> redact_text("export OPENAI_API_KEY=sk-abcdefghijklmnopqrstuvwx")
        'export OPENAI_API_KEY=***'
    """
    text = _TOKEN_SHAPES.sub(REDACTED, text)
    text = _AUTH_HEADER.sub(rf"\g<head>{REDACTED}", text)
    text = _ASSIGNED.sub(_assigned, text)
    return display_url(text)


def _assigned(match: re.Match[str]) -> str:
    value = match.group("value")
    if value == REDACTED or value.startswith("$") or value.isdigit():
        return match.group(0)  # already masked, a variable reference, or a count
    return match.group("head") + REDACTED
