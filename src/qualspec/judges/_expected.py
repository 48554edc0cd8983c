"""Probability-weighted ("expected") scores, G-Eval style, from the judge's token
log-probabilities.

Where the verdict's score is written, the server gives the most likely tokens and their
log-probabilities. The expected score is the mean of the scores 0-10 weighted by the
probability of their tokens, normalised by the probability mass on score tokens::

    expected = sum(p(v) * v) / sum(p(v))        score_mass = sum(p(v))

The score position is found in the judge's own verdict only: the answer must be one JSON
object whose top-level ``score`` key holds the score the parser read; its value's offset
is found by scanning the object's top-level keys (strings are skipped whole, so a
``"score": 10`` inside the reasoning or a quoted answer is never taken). The token at that
offset is the score token; an alternative there counts as a score when, after the JSON
text the sampled token carries before its digits (``":``, a space), it is a whole number
0-10 followed by nothing but a space, ``,`` or ``}``.

**10 as one token or two.** Tokenizers that write ``10`` as one token (OpenAI's) show it
among the alternatives; the token ``1`` then means 1. Tokenizers that split numbers into
digits (Llama's, SmolLM2's) write 10 as ``1`` then ``0``: when the judge wrote ``1`` at
the score position, the next position says how ``1`` goes on, so ``p("1")`` is split into
``p(10) = p("1") * p(next "0")`` and ``p(1) = p("1") * p(next ends the number)``. When the
judge wrote another score, whether its ``1`` meant 1 or 10 is unknown: that probability
is left out of the expected score and of ``score_mass`` and recorded as ``unresolved_mass``.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass

from qualspec.providers import TokenLogprob

__all__ = [
    "LOGPROB_PARAMS",
    "TOP_LOGPROBS",
    "Expected",
    "ExpectedScoring",
    "expected_score",
    "score_span",
]

log = logging.getLogger("qualspec.judges")

TOP_LOGPROBS = 20
"""Alternatives asked for per token (OpenAI's maximum): room for all 11 scores."""
LOGPROB_PARAMS = {"logprobs": True, "top_logprobs": TOP_LOGPROBS}
"""The request parameters of an expected-score judge call."""

_ENDS = frozenset(" ,}\n\r\t")
_DECODER = json.JSONDecoder()
_SPACE = " \t\n\r"


@dataclass(frozen=True, slots=True)
class Expected:
    """An expected score, the mass on score tokens it rests on, and each score's share.

    ``probabilities`` maps each score seen (as text, "0".."10") to its probability;
    ``unresolved_mass`` is the probability of a ``1`` that may have been 1 or 10 (see the
    module docstring), left out of both.
    """

    score: float
    mass: float
    probabilities: dict[str, float]
    unresolved_mass: float = 0.0

    def details(self, sampled: float) -> dict[str, object]:
        """What a judgment records about it (``judgments.details``)."""
        out: dict[str, object] = {
            "scoring": "expected",
            "expected_score": self.score,
            "score_mass": self.mass,
            "sampled_score": int(sampled),
            "score_probabilities": self.probabilities,
        }
        if self.unresolved_mass > 0:
            out["unresolved_mass"] = self.unresolved_mass
        return out


def _skip(text: str, at: int) -> int:
    while at < len(text) and text[at] in _SPACE:
        at += 1
    return at


def score_span(text: str) -> tuple[int, int] | None:
    """Where the value of the top-level ``score`` key is written in a verdict that is one
    JSON object (whitespace around it allowed; cut off after its score, as an answer out of
    tokens is, it still counts), or None: not such an object, text after it, no ``score``
    key before a cut, or that key given twice.

    Example:
        >>> text = '{"reasoning": "said \\\\"score\\\\": 10", "score": 7}'
        >>> start, end = score_span(text)
        >>> text[start:end]
        '7'
    """
    at = _skip(text, 0)
    if at >= len(text) or text[at] != "{":
        return None
    found: tuple[int, int] | None = None
    at = _skip(text, at + 1)
    try:
        while at < len(text) and text[at] != "}":
            if text[at] != '"':
                return None
            key, at = json.decoder.scanstring(text, at + 1)  # type: ignore[attr-defined]
            at = _skip(text, at)
            if at >= len(text) or text[at] != ":":
                return None
            start = _skip(text, at + 1)
            _, end = _DECODER.raw_decode(text, start)
            if key == "score":
                if found is not None:
                    return None
                found = (start, end)
            at = _skip(text, end)
            if at < len(text) and text[at] == ",":
                at = _skip(text, at + 1)
        if at >= len(text):  # cut off (out of tokens) after its last whole value
            return found
        if _skip(text, at + 1) != len(text):
            return None  # text after the object
    except ValueError:  # cut off inside a key or value: the keys before it stand
        return found
    return found


def _score_of(alternative: str, prefix: str) -> tuple[str, bool] | None:
    """The score an alternative token writes after ``prefix`` (its digits, and whether it
    ends there: nothing after them in the token), or None: not a score."""
    if not alternative.startswith(prefix):
        return None
    rest = alternative[len(prefix) :].lstrip(" ")
    digits = rest[: len(rest) - len(rest.lstrip("0123456789"))]
    after = rest[len(digits) :]
    if not digits or (len(digits) > 1 and digits[0] == "0") or int(digits) > 10:
        return None
    if any(c not in _ENDS for c in after):
        return None
    return digits, not after


def _alternatives(token: TokenLogprob) -> list[tuple[str, float]]:
    """The alternatives at a position, the written token among them, each text once."""
    seen: dict[str, float] = {}
    for text, logprob in (*token.top, (token.token, token.logprob)):
        seen.setdefault(text, logprob)
    return list(seen.items())


def _ends_number(tokens: Sequence[TokenLogprob], index: int) -> tuple[float, float] | None:
    """After a ``1`` at ``index``: (p(next token is "0..."), p(next ends the number))."""
    if index + 1 >= len(tokens):
        return None
    zero = end = 0.0
    for text, logprob in _alternatives(tokens[index + 1]):
        if not text:
            continue
        if text[0] == "0":
            zero += math.exp(logprob)
        elif text[0] in _ENDS:
            end += math.exp(logprob)
    return zero, end


def _locate(text: str, tokens: Sequence[TokenLogprob], start: int) -> tuple[int, str] | str:
    """The index of the token holding offset ``start`` of ``text`` and the text it carries
    before it, or why the tokens cannot be placed on the answer."""
    joined = "".join(t.token for t in tokens)
    body = text.strip()
    shift = joined.find(body) - (len(text) - len(text.lstrip()))
    if not body or joined.find(body) < 0:
        return "the tokens with log-probabilities do not spell the judge's answer"
    at, offset = start + shift, 0
    for index, token in enumerate(tokens):
        if offset <= at < offset + len(token.token):
            prefix = joined[offset:at]
            if any(c.isdigit() for c in prefix):
                return "the score shares a token with other digits"
            return index, prefix
        offset += len(token.token)
    return "no token holds the score"


def expected_score(
    text: str, logprobs: Sequence[TokenLogprob] | None, sampled: float
) -> Expected | str:
    """The expected score of a verdict from its tokens' log-probabilities, or why there is
    none (the reason a judgment records as ``scoring_fallback``).

    ``sampled`` is the score the parser read from ``text``; the verdict must be one JSON
    object holding it under its top-level ``score`` key.
    """
    if not logprobs:
        return "the endpoint returned no token log-probabilities"
    span = score_span(text)
    if span is None or text[span[0] : span[1]] != str(int(sampled)):
        return "the verdict is not one JSON object with its score under a score key"
    where = _locate(text, logprobs, span[0])
    if isinstance(where, str):
        return where
    index, prefix = where
    written = _score_of(logprobs[index].token, prefix)
    if written is None:
        return "the score token is not a number"
    choices = [
        (s, p)
        for s, p in ((_score_of(a, prefix), lp) for a, lp in _alternatives(logprobs[index]))
        if s is not None
    ]
    one_token_ten = any(digits == "10" for (digits, _), _ in choices)
    probabilities: dict[str, float] = {}
    unresolved = 0.0
    for (digits, ends), logprob in choices:
        p = math.exp(logprob)
        if digits != "1" or not ends or one_token_ten:
            probabilities[digits] = probabilities.get(digits, 0.0) + p
            continue
        split = _ends_number(logprobs, index) if written == ("1", True) else None
        if split is None:
            unresolved += p
            continue
        probabilities["10"] = probabilities.get("10", 0.0) + p * split[0]
        probabilities["1"] = probabilities.get("1", 0.0) + p * split[1]
    mass = sum(probabilities.values())
    if mass <= 0:
        return "no probability on score tokens at the score position"
    score = sum(int(d) * p for d, p in probabilities.items()) / mass
    ordered = dict(sorted(probabilities.items(), key=lambda kv: int(kv[0])))
    return Expected(score, mass, ordered, unresolved)


class ExpectedScoring:
    """A criteria judge's expected scoring over a run: the request parameters it adds,
    the score and details of each verdict, and one warning per judge and reason when it
    falls back to the sampled score."""

    def __init__(self, judge: str) -> None:
        self.judge = judge
        self.refused = False  # the endpoint refused the logprobs parameters: not asked again
        self._warned: set[str] = set()

    def params(self, params: dict[str, object]) -> dict[str, object]:
        """``params`` with the log-probability request (the judge's own params win)."""
        return params if self.refused else {**LOGPROB_PARAMS, **params}

    def refused_by(self, error: str | None) -> bool:
        """True when ``error`` is the endpoint refusing the logprobs parameters: the call
        is made again without them, and the judge keeps to sampled scores from now on
        (one warning, however many calls were in flight)."""
        if error is None or "logprob" not in error.lower():
            return False
        if not self.refused:
            self.refused = True
            self._warn(f"the endpoint refused token log-probabilities ({error[:160]})")
        return True

    def score(
        self, text: str, logprobs: Sequence[TokenLogprob] | None, sampled: float
    ) -> tuple[float, dict[str, object]]:
        """The judgment's score and details: the expected score, or the sampled one with
        ``scoring_fallback`` saying why."""
        if self.refused:
            found: Expected | str = "the endpoint refused token log-probabilities"
        else:
            found = expected_score(text, logprobs, sampled)
        if isinstance(found, Expected):
            return found.score, found.details(sampled)
        self._warn(found)
        return sampled, {
            "scoring": "expected",
            "scoring_fallback": found,
            "sampled_score": int(sampled),
        }

    def _warn(self, reason: str) -> None:
        key = reason.split(" (")[0]
        if key in self._warned:
            return
        self._warned.add(key)
        log.warning(
            "judge %r: scoring: expected falls back to the sampled score: %s "
            "(details.scoring_fallback of each judgment says so)",
            self.judge,
            reason,
        )
