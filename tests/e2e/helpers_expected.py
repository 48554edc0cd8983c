"""What every expected-score judgment must hold, whatever the real model wrote (shared by
the embedded-model and llama_cpp.server tests)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import pytest


def assert_expected_consistent(score: float | None, details: Mapping[str, Any]) -> None:
    """The judgment's score is the probability-weighted mean of the recorded score
    probabilities, its mass their sum, and the sampled score the judge's own."""
    assert score is not None, details
    assert details["scoring"] == "expected"
    assert "scoring_fallback" not in details, details
    probabilities = {int(k): float(v) for k, v in details["score_probabilities"].items()}
    assert probabilities and all(0 <= k <= 10 and 0 < p <= 1 for k, p in probabilities.items())
    mass = sum(probabilities.values())
    weighted = sum(k * p for k, p in probabilities.items()) / mass
    assert details["score_mass"] == pytest.approx(mass, rel=1e-9)
    assert 0 < details["score_mass"] <= 1 + 1e-6
    assert score == pytest.approx(weighted, rel=1e-9)
    assert details["expected_score"] == pytest.approx(score, rel=1e-12)
    assert 0 <= score <= 10
    sampled = details["sampled_score"]
    assert isinstance(sampled, int) and 0 <= sampled <= 10
    unresolved = details.get("unresolved_mass", 0.0)
    assert 0 <= unresolved <= 1 and math.isfinite(unresolved)
    # the sampled score is one the distribution gives weight to (or its ambiguous "1")
    assert sampled in probabilities or (sampled in (1, 10) and unresolved > 0)
