"""The patterns a judge's verdict is read with (see :mod:`qualspec.judges._parsing`)."""

from __future__ import annotations

import re

from qualspec.judges._lazy_re import lazy_compile

__all__ = ["MAX_REASONING_CHARS"]

MAX_REASONING_CHARS = 1000
_REASON_KEYS = ("reasoning", "explanation", "reason", "rationale", "justification")

_NUM = r"[-+]?(?:\d+(?:\.\d+)?|\.\d+)"
_NONFINITE = r"[-+]?(?:nan|inf(?:inity)?)"
_EMPH = r"[*_]{0,3}"
# The start of a SCORE line: optional heading marks and emphasis, the keyword, a colon.
_SCORE_PREFIX = lazy_compile(
    rf"^[ \t]*(?:#{{1,6}}[ \t]*)?{_EMPH}[ \t]*score[ \t]*{_EMPH}[ \t]*:(?P<value>.*)$",
    re.IGNORECASE,
)
# A SCORE verdict at the end of the answer's last line, after a sentence or a label
# ("It is correct. SCORE: 8", "Judged on its merits: SCORE: 0"): read only as a clean number.
_TRAILING_SCORE = lazy_compile(
    rf"(?<=[.!?:])[ \t]+{_EMPH}[ \t]*score[ \t]*{_EMPH}[ \t]*:(?P<value>[^:]*)$", re.IGNORECASE
)
# The value of a SCORE line (emphasis and a final period already stripped).
_VALUE = lazy_compile(
    rf"(?P<num>{_NUM}|{_NONFINITE})(?:\s*(?:/|\bout\s+of\b)\s*(?P<den>{_NUM}))?",
    re.IGNORECASE,
)
_RANGE = lazy_compile(rf"{_NUM}\s*(?:-|–|—|\.\.|\bto\b)\s*{_NUM}", re.IGNORECASE)
_SCALE_RANGE = lazy_compile(r"\(?\s*[01]\s*(?:-|–|—|\.\.|to)\s*10\s*\)?", re.IGNORECASE)
_ALTERNATIVE = lazy_compile(rf"{_NUM}\s*(?:\bor\b|\band\b|\|)\s*{_NUM}", re.IGNORECASE)
_DECIMAL_COMMA = lazy_compile(r"[-+]?\d+,\d+(?:\s*/\s*\d+)?")
_PERCENT = lazy_compile(rf"{_NUM}\s*(?:%|percent\b)", re.IGNORECASE)
_NUMBER_START = lazy_compile(rf"(?:{_NUM}|{_NONFINITE})(?!\w)", re.IGNORECASE)
_SCALE_ECHO = lazy_compile(r"\(?\s*(?:/|out\s+of\b)\s*\d", re.IGNORECASE)
# An answer that starts like a JSON object ({"score": ...), so an unbalanced one is cut off.
_JSON_START = lazy_compile(r"\{\s*[\"']?\w+[\"']?\s*:")
_FENCE = lazy_compile(r"^```[A-Za-z]*\s*\n?(?P<body>.*?)\n?\s*```$", re.DOTALL)
_FENCE_OPEN = lazy_compile(r"^```[A-Za-z]*[ \t]*\n")
# A sentence after a verdict that takes it back ("On reflection, 6 would be fairer").
_REVISION = lazy_compile(
    r"\b(?:on\s+(?:second\s+|further\s+)?(?:reflection|thought)|correction|"
    r"revis(?:e|ed|ing)\s+(?:my|the|this)\s+score|reconsider\w*|"
    r"change\s+(?:it|that|my\s+score|the\s+score)\s+to|make\s+(?:it|that)\s+an?\b|"
    r"would\s+be\s+(?:fairer|more\s+accurate|more\s+appropriate)|"
    r"(?:i'd|i\s+would)\s+(?:rather|actually)\s+(?:give|say))",
    re.IGNORECASE,
)
_SENTENCE_END = lazy_compile(r"(?<!\d)[.!?](?!\d)|\n")
_SMALL_NUMBER = lazy_compile(r"(?<![\w.,/])(?:10|\d)(?:\.\d+)?(?![\w,]|\.\d)")
_LABEL = lazy_compile(
    r"^(?:reasoning|explanation|reason|rationale|justification)\s*[:=-]\s*", re.IGNORECASE
)
_PARTIAL_REASONING = lazy_compile(
    r"[\"'](?:reasoning|explanation|reason|rationale|justification)[\"']\s*:\s*[\"'](?P<text>.+)",
    re.IGNORECASE | re.DOTALL,
)
# A line that gives a score under another label ("Overall score: 2", "**Final rating:** 9",
# "Grade (0-10): 7"). Alone it is not read (the judge was asked for SCORE), but beside a
# verdict it must agree with it: two verdicts that disagree are unscored, whatever labels.
_LABELLED = lazy_compile(
    rf"^[ \t]*(?:[-*+][ \t]+)?(?:#{{1,6}}[ \t]*)?{_EMPH}[ \t]*"
    r"(?P<label>(?:(?:my|the|our|final|overall|total)[ \t]+)?(?:[A-Za-z]{2,20}[ \t_-]?)?"
    r"(?:score|rating|grade|verdict)|overall|final)"
    rf"[ \t]*{_EMPH}[ \t]*(?:\([^)\n]{{0,20}}\))?[ \t]*{_EMPH}[ \t]*[:=](?P<value>.*)$",
    re.IGNORECASE,
)
# A top-level JSON key that gives a score under another name ("overall_score", "rating").
_LABELLED_KEY = lazy_compile(r"^[a-z ]*[ _-]?(?:score|rating|grade)$", re.IGNORECASE)
_NOT_A_VERDICT_KEY = lazy_compile(
    r"max|min|scale|threshold|pass|target|possible|out_of|range|confidence", re.IGNORECASE
)
# The prompt's own placeholder given back as the reasoning ("<why, in one sentence>", "...").
_PLACEHOLDER = lazy_compile(r"^\s*(?:<[^<>]{0,80}>|\.{2,}|…|\[[^\[\]]{0,80}\])\s*$")
_EDGE_NOISE = " \t\r\n*_#`,;:.-=\"'{}[]()>"
_TRAILING_NOISE = " \t\r\n*_#`,;:-=\"'{}[]("
