"""Stability similarity: the lexical measure, and the embeddings of the packaged model."""

from __future__ import annotations

import pytest
from helpers_runs import RunBuilder

from qualspec.analysis import (
    analyze_run,
    embeddings_available,
    lexical_similarity,
    mean_pairwise_similarity,
)

PARIS = "The capital of France is Paris."
PARIS_AGAIN = "Paris is the capital city of France."
UNRELATED = "Ibuprofen should not exceed 1200 mg a day without a doctor."


def test_lexical_identical_is_one_and_unrelated_is_lower() -> None:
    assert lexical_similarity(PARIS, PARIS) == 1.0
    assert lexical_similarity("Paris", "  paris ") == 1.0  # case and spaces folded
    related = lexical_similarity(PARIS, PARIS_AGAIN)
    unrelated = lexical_similarity(PARIS, UNRELATED)
    assert 0.0 <= unrelated < related < 1.0
    assert mean_pairwise_similarity([PARIS, PARIS, PARIS], "lexical") == 1.0
    assert mean_pairwise_similarity([PARIS], "lexical") is None
    assert lexical_similarity("", "") == 1.0 and lexical_similarity("abc", "") == 0.0


def test_forced_lexical_path_is_used_and_reported() -> None:
    b = RunBuilder()
    b.add(0.0, {"c": 9.0}, text=PARIS)
    b.add(1.0, {"c": 9.0}, text=UNRELATED)
    analysis = analyze_run(b.run(), similarity="lexical")
    assert analysis.similarity_method == "lexical"
    (cell,) = analysis.cells
    assert cell.similarity_method == "lexical"
    assert cell.stability == pytest.approx(lexical_similarity(PARIS, UNRELATED), abs=1e-6)
    with pytest.raises(ValueError, match="unknown similarity"):
        analyze_run(b.run(), similarity="cosine")


def test_embeddings_of_the_packaged_model_offline() -> None:
    assert embeddings_available()
    same = mean_pairwise_similarity([PARIS, PARIS], "embeddings")
    related = mean_pairwise_similarity([PARIS, PARIS_AGAIN], "embeddings")
    unrelated = mean_pairwise_similarity([PARIS, UNRELATED], "embeddings")
    assert same == 1.0
    assert related is not None and unrelated is not None
    assert unrelated < 0.5 < related < 1.0
    b = RunBuilder()
    b.add(0.0, {"c": 9.0}, text=PARIS)
    b.add(1.0, {"c": 9.0}, text=PARIS_AGAIN)
    analysis = analyze_run(b.run())  # the default when the extra is installed
    assert analysis.similarity_method == "embeddings"
    assert analysis.cells[0].stability == pytest.approx(related, abs=1e-6)
