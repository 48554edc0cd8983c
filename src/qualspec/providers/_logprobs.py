"""Token log-probabilities as OpenAI-compatible servers send them (OpenAI, llama.cpp's
server, llama-cpp-python's ``create_chat_completion``): ``choices[0].logprobs.content``."""

from __future__ import annotations

import math
import numbers
from typing import Any

from qualspec.providers._base import TokenLogprob

__all__ = ["read_logprobs"]


def _number(value: Any) -> float | None:
    # llama-cpp-python sends numpy floats (registered as numbers.Real)
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return None
    number = float(value)
    return number if not math.isnan(number) else None


def _token(entry: Any) -> TokenLogprob | None:
    if not isinstance(entry, dict):
        return None
    token, logprob = entry.get("token"), _number(entry.get("logprob"))
    if not isinstance(token, str) or logprob is None:
        return None
    top: list[tuple[str, float]] = []
    for alternative in entry.get("top_logprobs") or ():
        if not isinstance(alternative, dict):
            continue
        alt_token, alt_logprob = alternative.get("token"), _number(alternative.get("logprob"))
        if isinstance(alt_token, str) and alt_logprob is not None:
            top.append((alt_token, alt_logprob))
    return TokenLogprob(token, logprob, tuple(top))


def read_logprobs(value: Any) -> tuple[TokenLogprob, ...] | None:
    """The tokens of a chat choice's ``logprobs`` object, or None when it holds none.

    An entry that is not ``{"token": str, "logprob": number, ...}`` makes the whole list
    unreadable (None): a score is never read from tokens that do not spell the answer.

    Example:
        >>> read_logprobs({"content": [{"token": "7", "logprob": -0.5, "top_logprobs": []}]})
        (TokenLogprob(token='7', logprob=-0.5, top=()),)
    """
    content = value.get("content") if isinstance(value, dict) else None
    if not isinstance(content, list) or not content:
        return None
    tokens = [_token(entry) for entry in content]
    if any(t is None for t in tokens):
        return None
    return tuple(t for t in tokens if t is not None)
