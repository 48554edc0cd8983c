"""The analysis at size: the bootstrap intervals and the lexical stability are computed at
once (numpy), give the very numbers of the plain loops they replace, and do work that grows
with the answers, not with the resamples or the pairs of answers (counted in Python calls,
never timed)."""

from __future__ import annotations

import dataclasses
import random
import statistics
import sys
from collections.abc import Callable, Sequence
from typing import Any

import pytest
from helpers_runs import RunBuilder

from qualspec.analysis import _bootstrap as bootstrap_module
from qualspec.analysis import analyze_run, lexical_similarity, mean_pairwise_similarity
from qualspec.analysis._bootstrap import bootstrap_ci


def plain_bootstrap(diffs: Sequence[float], seed: int, samples: int = 2000) -> tuple[float, float]:
    """The loop bootstrap_ci replaced (qualspec 0.1.0), kept here as the reference."""
    if len(diffs) == 1:
        return diffs[0], diffs[0]
    rng = random.Random(seed)
    n = len(diffs)
    means = sorted(statistics.fmean(rng.choices(diffs, k=n)) for _ in range(samples))
    return means[int(0.025 * samples)], means[min(samples - 1, int(0.975 * samples))]


def plain_mean_similarity(texts: Sequence[str]) -> float | None:
    """The pairwise loop the lexical stability replaced, kept here as the reference."""
    if len(texts) < 2:
        return None
    pairs = [
        1.0 if texts[i] == texts[j] else lexical_similarity(texts[i], texts[j])
        for i in range(len(texts))
        for j in range(i + 1, len(texts))
    ]
    return round(sum(pairs) / len(pairs), 6)


def python_calls(fn: Callable[[], Any]) -> int:
    """How many Python functions (comprehensions included) ``fn`` calls."""
    calls = 0

    def profile(frame: Any, event: str, arg: Any) -> None:
        nonlocal calls
        if event == "call":
            calls += 1

    sys.setprofile(profile)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return calls


def value_sets() -> list[list[float]]:
    rng = random.Random(19)
    sets: list[list[float]] = []
    for n in (2, 3, 8, 30, 200, 500):
        sets.append([float(rng.randint(-4, 4)) for _ in range(n)])  # whole points: ties
        sets.append([rng.randint(-30, 30) / 3 for _ in range(n)])  # means of 3 criteria
        sets.append([rng.gauss(0.5, 2.0) for _ in range(n)])
        sets.append([rng.choice([0.1, 0.2, 0.7, -2 / 3]) for _ in range(n)])
    return [sorted(s) for s in sets]


def test_bootstrap_intervals_are_the_plain_loops_bit_for_bit() -> None:
    for k, values in enumerate(value_sets()):
        for samples in (2000, 7):
            assert bootstrap_ci(values, k, samples) == plain_bootstrap(values, k, samples)
    assert bootstrap_ci([3.5], 1) == (3.5, 3.5)
    with pytest.raises(ValueError, match="at least one value"):
        bootstrap_ci([], 1)


def test_bootstrap_intervals_are_exact_when_resamples_are_drawn_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # a large run's resamples are drawn a block at a time, and drawn again for the exact sums
    monkeypatch.setattr(bootstrap_module, "_CHUNK", 100)
    monkeypatch.setattr(bootstrap_module, "_KEEP", 0)
    for k, values in enumerate(value_sets()[-8:]):
        assert bootstrap_ci(values, k) == plain_bootstrap(values, k)


def test_a_bootstrap_interval_does_not_loop_over_its_resamples() -> None:
    rng = random.Random(3)
    values = sorted(rng.gauss(0, 2) for _ in range(500))
    bootstrap_ci(values, 6)  # numpy imported
    # the loop made two calls per resample (4,000 for 2,000 resamples)
    assert python_calls(lambda: bootstrap_ci(values, 7)) < 200


def answer(rng: random.Random, words: Sequence[str], n: int) -> str:
    return " ".join(rng.choice(words) for _ in range(n))


def test_lexical_stability_is_the_pairwise_formula() -> None:
    rng = random.Random(5)
    alphabet = ["a", "b", "A", " ", "\t\n", "é", "日", "\ud800", "😀", "ab", "abc", "\U00020000"]
    for _ in range(300):
        pool = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 6))) for _ in range(4)]
        texts = [rng.choice(pool) for _ in range(rng.randint(2, 7))]
        assert mean_pairwise_similarity(texts) == plain_mean_similarity(texts), texts
    # an alphabet of hundreds of characters (grams numbered by sorting, not by a table)
    han = [chr(c) for c in range(0x4E00, 0x4E00 + 300)]
    for _ in range(30):
        texts = ["".join(rng.choice(han) for _ in range(rng.randint(0, 40))) for _ in range(4)]
        assert mean_pairwise_similarity(texts) == plain_mean_similarity(texts)
    words = "the a cat sat on mat Paris is capital of France dog ran".split()
    texts = [answer(rng, words, 150) for _ in range(12)] + ["", "  ", "x"]
    assert mean_pairwise_similarity(texts) == plain_mean_similarity(texts)


def test_lexical_stability_does_not_loop_over_pairs() -> None:
    rng = random.Random(8)
    words = "the a cat sat on mat Paris is capital of France dog ran".split()
    texts = [answer(rng, words, 200) for _ in range(60)]
    mean_pairwise_similarity(texts[:3])  # numpy imported
    # 60 answers make 1,770 pairs: the pairwise loop made at least one call per pair
    assert python_calls(lambda: mean_pairwise_similarity(texts)) < 400


def test_analyze_run_work_grows_with_answers_not_pairs() -> None:
    rng = random.Random(11)
    words = "the a cat sat on mat Paris is capital of France dog ran".split()
    b = RunBuilder()
    for cand in ("small", "large"):
        for role in ("novice", "expert"):
            for scenario in ("s1", "s2"):
                for temp in (0.0, 0.7):
                    for run in range(10):
                        b.add(
                            temp,
                            {"clear": float(rng.randint(4, 10)), "correct": 8.0},
                            candidate=cand,
                            role=role,
                            scenario=scenario,
                            run_index=run,
                            text=answer(rng, words, 150),
                            checks={"max_words 160": rng.random() < 0.9},
                        )
    run = b.run(dimensions={"roles": ["novice", "expert"], "candidates": ["small", "large"]})
    analysis = analyze_run(run, similarity="lexical")  # numpy imported
    assert len(analysis.role_gaps) == 6 and all(g.ci_low is not None for g in analysis.role_gaps)
    answers = len(run.responses)
    # 160 answers in cells of 20 (190 pairs each) and 6 bootstrap intervals: the loops made
    # hundreds of calls per answer
    assert python_calls(lambda: analyze_run(run, similarity="lexical")) < 150 * answers


def test_a_stored_analysis_reads_back_as_computed(tmp_path: Any) -> None:
    from qualspec.analysis import analysis_from_dict, analysis_to_dict, stored_analysis
    from qualspec.store import Store

    rng = random.Random(2)
    b = RunBuilder()
    for role in ("novice", "expert"):
        for temp in (0.0, 0.5, 1.0):
            for run in range(4):
                b.add(temp, {"clear": float(rng.randint(3, 10))}, role=role, run_index=run)
    run = b.run(dimensions={"roles": ["novice", "expert"], "candidates": ["gpt"]})
    analysis = analyze_run(run, similarity="lexical")
    assert analysis.role_gaps and analysis.recommendations and analysis.cells
    assert analysis_from_dict(analysis_to_dict(analysis)) == analysis
    finished = dataclasses.replace(
        run, summary=dataclasses.replace(run.summary, finished_at=run.summary.started_at)
    )
    with Store(f"sqlite:///{tmp_path / 'a.db'}") as store:
        assert stored_analysis(store, finished, similarity="lexical") == analysis
        assert store.cache_stats()["kinds"]["analysis"]["entries"] == 1
        assert stored_analysis(store, finished, similarity="lexical") == analysis
        # another threshold is another analysis
        other = stored_analysis(store, finished, similarity="lexical", threshold=9.0)
        assert other == analyze_run(run, similarity="lexical", threshold=9.0) != analysis
        assert store.cache_stats()["kinds"]["analysis"]["entries"] == 2


class FakeEncoder:
    """Stands in for the embedding model: a text's vector from its hash; counts texts."""

    def __init__(self) -> None:
        self.encoded: list[str] = []

    def encode(self, texts: list[str], **kw: Any) -> Any:
        import numpy as np

        self.encoded += texts
        rows = [np.random.default_rng(len(t) + sum(map(ord, t))).random(8) for t in texts]
        vectors = np.array(rows, dtype=np.float32)
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def test_each_distinct_text_is_embedded_once_and_kept_by_hash(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from qualspec.analysis import _similarity, stored_analysis
    from qualspec.store import Store

    encoder = FakeEncoder()
    monkeypatch.setattr(_similarity, "_model", lambda: encoder)
    b = RunBuilder()
    for temp in (0.0, 1.0):
        for run in range(3):
            text = "same answer" if temp == 0.0 else f"answer {run} at {temp}"
            b.add(temp, {"clear": 8.0}, run_index=run, text=text)
    run = b.run()
    finished = dataclasses.replace(
        run, summary=dataclasses.replace(run.summary, finished_at=run.summary.started_at)
    )
    with Store(f"sqlite:///{tmp_path / 'e.db'}") as store:
        first = stored_analysis(store, finished, similarity="embeddings")
        assert sorted(encoder.encoded) == sorted({r.text for r in run.responses if r.text})
        assert store.cache_stats()["kinds"]["embedding"]["entries"] == 4
        store.cache_clear(kind="analysis")  # computed again: from the kept embeddings
        encoder.encoded.clear()
        again = stored_analysis(store, finished, similarity="embeddings")
        assert encoder.encoded == [] and again == first
        assert (
            first.cells[0].stability == analyze_run(run, similarity="embeddings").cells[0].stability
        )
