"""A defensive pass over run metadata: secrets never reach the database."""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping
from typing import Any

from qualspec.store._url import display_url

__all__ = ["REDACTED", "redact", "redact_text", "redact_values"]

REDACTED = "***"
# Words of a setting's name that say its value is a secret: ``api_key``, ``x-api-key``,
# ``clientSecret``, ``Authorization``, ``access_token`` (not ``max_tokens``, ``monkey``,
# ``keyboard``).
_SECRET_WORDS = frozenset(
    {
        "key",
        "apikey",
        "token",
        "secret",
        "secrets",
        "password",
        "passwd",
        "passphrase",
        "authorization",
        "credential",
        "credentials",
    }
)
_WORDS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
# Mappings whose keys are names people gave (candidates, scenarios, input ids...): such a
# key is a name, never a setting, so the scenario "token ring" keeps its inputs.
_NAMED = frozenset({"candidates", "roles", "scenarios", "inputs", "dimensions"})
# An HTTP credential: "Bearer <token>", "Basic <base64 of user:password>", and whatever
# follows "Authorization:". Its token is checked by ``_is_credential``, so "basic
# greeting" and "bearer of news" are words, not credentials.
_SCHEME = (
    r"(?P<auth>\bauthorization\s*:\s*)?\b(?P<scheme>bearer|basic)\s+"
    r"(?P<token>[A-Za-z0-9._~+/=-]*[A-Za-z0-9_~+/=-])"
)
_CREDENTIAL = re.compile(rf"^\s*{_SCHEME}", re.IGNORECASE)
_AUTH_HEADER = re.compile(_SCHEME, re.IGNORECASE)
_TOKEN_SYMBOLS = re.compile(r"[0-9._~+/=-]")
_MIN_TOKEN = 8
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
# NAME=value / "name": "value" where the name says secret. The value stops before "...",
# so a cut marker right after it ("... (truncated)") is kept.
_ASSIGNED = re.compile(
    r"(?P<head>\b[\w.-]*(?:api[_-]?key|secret|token|password|passwd)[\w.-]*[\"']?"
    r"\s*[:=]\s*[\"']?)(?P<value>(?:(?!\.\.\.)[^\s\"',;]){6,})",
    re.IGNORECASE,
)


def redact(obj: Any) -> Any:
    """Return a copy of ``obj`` with secret-looking values replaced by ``"***"``.

    A value is replaced when its mapping key is a setting name with a secret word in it
    (``key``, ``token``, ``secret``, ``password``, ``authorization``, ``credentials``...:
    ``api_key``, ``X-Api-Key``, ``clientSecret``, not ``max_tokens`` or ``monkey``) and
    it is not a number, a boolean or None (so counts such as ``max_tokens: 256``
    survive). A key with a space in it, and the keys of ``candidates``, ``roles``,
    ``scenarios``, ``inputs`` and ``dimensions`` mappings, are names people gave, never
    read as settings. A string that is an HTTP credential (``Bearer <token>``, ``Basic
    <base64 of user:password>``, ``Authorization: ...``) is replaced whole, and such a
    credential inside a longer string is masked; "basic greeting" or "bearer of news" are
    not credentials. In every string, URL passwords and keys are masked
    (:func:`~qualspec.store.display_url`). Lists, tuples and
    nested mappings are walked recursively.

    Args:
        obj: A JSON-like value (mappings, sequences, scalars).

    Returns:
        The redacted copy; ``obj`` itself is not modified.

    Example:
        >>> redact({"scenarios": ["basic greeting"], "headers": {"X-Api-Key": "k-123"}})
        {'scenarios': ['basic greeting'], 'headers': {'X-Api-Key': '***'}}
    """
    return _redact(obj, named=False)


def _redact(obj: Any, *, named: bool) -> Any:
    if isinstance(obj, Mapping):
        out: dict[Any, Any] = {}
        for key, value in obj.items():
            if not named and _is_secret(key, value):
                out[key] = REDACTED
            else:
                out[key] = _redact(value, named=isinstance(key, str) and key in _NAMED)
        return out
    if isinstance(obj, list | tuple):
        return [_redact(v, named=False) for v in obj]
    if isinstance(obj, str):
        found = _CREDENTIAL.match(obj)
        if found and _is_credential(found):
            return REDACTED
        return display_url(_AUTH_HEADER.sub(_auth_header, obj))  # "... Bearer <token> ..."
    return obj


def _is_secret(key: object, value: object) -> bool:
    if not isinstance(key, str) or any(c.isspace() for c in key):
        return False  # a name with a space is a name people gave, not a setting
    if not any(w.lower() in _SECRET_WORDS for w in _WORDS.findall(key)):
        return False
    return not (value is None or isinstance(value, bool | int | float))


def _is_credential(found: re.Match[str]) -> bool:
    """Whether a ``Bearer``/``Basic`` match holds a credential rather than a word.

    After ``Authorization:`` anything is. A Bearer token has at least 8 characters and a
    digit or a symbol in it (``sk-...``, ``abc.def.ghi``), or 20 and more characters; a
    Basic one is base64 of ``user:password``.
    """
    token = found.group("token")
    if found.group("auth"):
        return True
    if found.group("scheme").lower() == "basic":
        return _is_basic(token)
    if len(token) < _MIN_TOKEN:
        return False
    return len(token) >= 20 or _TOKEN_SYMBOLS.search(token) is not None


def _is_basic(token: str) -> bool:
    try:
        decoded = base64.b64decode(token + "=" * (-len(token) % 4), validate=True)
        text = decoded.decode("utf-8")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return False
    return ":" in text and text.isprintable()


def redact_text(text: str) -> str:
    """``text`` with whatever looks like an API key, token or password replaced by ``***``.

    For free text that leaves the machine (a coding session sent to a judge model): keys
    recognisable by their shape (``sk-...``, ``sk-ant-...``, ``ghp_...``, ``AKIA...``,
    ``xoxb-...``, ``AIza...``, ``hf_...``, JWTs, PEM private keys), ``Bearer <token>`` and
    ``Basic <base64>`` credentials (not "basic greeting"), values assigned to a
    secret-sounding name (``OPENAI_API_KEY=...``, ``"password": "..."``) and URL passwords
    (:func:`~qualspec.store.display_url`). A cut marker right after a hidden value
    (``... (truncated)``) is kept. Idempotent.

    Example:
        >>> redact_text("export OPENAI_API_KEY=sk-abcdefghijklmnopqrstuvwx")
        'export OPENAI_API_KEY=***'
    """
    text = _TOKEN_SHAPES.sub(REDACTED, text)
    text = _AUTH_HEADER.sub(_auth_header, text)
    text = _ASSIGNED.sub(_assigned, text)
    return display_url(text)


def redact_values(obj: Any) -> Any:
    """A copy of a data value (an input row) with :func:`redact_text` applied to every
    string in it, at any depth.

    Unlike :func:`redact` (for settings), key names are never read: a row's keys are
    column names people gave (a ``token`` or ``key`` column is data), as the keys of
    ``inputs`` are in run metadata. Only the values' shapes count: ``sk-...``, ``Bearer
    ...``, ``password=...``, a URL's password.

    Example:
        >>> redact_values({"key": "C major", "note": "use sk-abcdefghijklmnopqrstuvwx"})
        {'key': 'C major', 'note': 'use ***'}
    """
    if isinstance(obj, str):
        return redact_text(obj) if _may_hold_secret(obj) else obj
    if isinstance(obj, Mapping):
        return {key: redact_values(value) for key, value in obj.items()}
    if isinstance(obj, list | tuple):
        return [redact_values(v) for v in obj]
    return obj


# Every pattern ``redact_text`` replaces needs one of these in the text, case-folded (the
# case-insensitive ones match what casefold() makes of "ſ" or "K" too): one scan of the
# text skips the patterns for ordinary text, such as most values of an input row.
_MARKERS = (
    *("-----begin", "sk-", "pk-", "rk-", "ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
    *("github_pat_", "glpat-", "xox", "akia", "aiza", "hf_", "eyj"),  # _TOKEN_SHAPES
    *("bearer", "basic"),  # _AUTH_HEADER
    *("api", "secret", "token", "passw"),  # _ASSIGNED
    *("=", "@"),  # display_url
)


# any marker, found in one scan (a check per marker was most of an ordinary row's cost)
_ANY_MARKER = re.compile("|".join(re.escape(marker) for marker in _MARKERS))


def _may_hold_secret(text: str) -> bool:
    return _ANY_MARKER.search(text.casefold()) is not None


def _auth_header(match: re.Match[str]) -> str:
    token = match.group("token")
    if token == REDACTED or not _is_credential(match):
        return match.group(0)
    return match.group(0)[: match.start("token") - match.start()] + REDACTED


def _assigned(match: re.Match[str]) -> str:
    value = match.group("value")
    if value == REDACTED or value.startswith("$") or value.isdigit():
        return match.group(0)  # already masked, a variable reference, or a count
    return match.group("head") + REDACTED
