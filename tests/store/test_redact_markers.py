"""The input rows' redaction skips ordinary text with one scan (issue 20, throughput): the
markers' regular expression finds a marker exactly where looking for each one did."""

from __future__ import annotations

import pytest

from qualspec.store import redact_values
from qualspec.store._redact import _MARKERS, _may_hold_secret

_TEXTS = [
    "question 12345",
    "",
    "C major",
    "ſecret",  # casefolds to "secret"
    "KEY",
    "a@b",
    "x=1",
    "Use SK-abcdefghijklmnopqrstuvwx",
    "Bearer abc",
    "no marker here at all, just words",
    *(m.upper() for m in _MARKERS),
    *(f"before {m} after" for m in _MARKERS),
    *(m[:-1] for m in _MARKERS if len(m) > 1),
]


@pytest.mark.parametrize("text", _TEXTS)
def test_the_marker_scan_is_the_marker_by_marker_check(text: str) -> None:
    folded = text.casefold()
    assert _may_hold_secret(text) is any(marker in folded for marker in _MARKERS)


def test_a_row_is_redacted_as_before() -> None:
    row = {"id": "r1", "q": "question 1", "note": "use sk-abcdefghijklmnopqrstuvwx"}
    assert redact_values(row) == {"id": "r1", "q": "question 1", "note": "use ***"}
