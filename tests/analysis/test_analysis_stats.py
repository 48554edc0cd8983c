"""compare_paired on constructed data: a known improvement is significant, identical samples
are no change, the interval covers the true difference in a seeded simulation."""

from __future__ import annotations

import random

import pytest

from qualspec.analysis import compare_paired, permutation_p_value


def test_a_known_improvement_is_detected_as_significant() -> None:
    rng = random.Random(7)
    before = [rng.uniform(55, 80) for _ in range(20)]
    after = [x + 12 + rng.gauss(0, 4) for x in before]  # +12 points, a little noise
    result = compare_paired(before, after, seed=1)
    assert result.verdict == "improved"
    assert result.significant
    assert 9 < result.difference < 15
    assert 0 < result.ci_low < result.difference < result.ci_high
    assert result.p_value < 0.001
    assert result.effect == "large" and result.effect_size is not None
    assert result.effect_size > 0.8
    assert not result.exact  # 20 pairs: the seeded Monte Carlo test


def test_a_known_regression_is_regressed_and_the_same_data_give_the_same_numbers() -> None:
    rng = random.Random(3)
    before = [rng.uniform(60, 90) for _ in range(15)]
    after = [x - 8 + rng.gauss(0, 3) for x in before]
    first = compare_paired(before, after, seed=5)
    assert first.verdict == "regressed"
    assert first.ci_high < 0
    assert compare_paired(before, after, seed=5) == first  # seeded: reproducible


def test_identical_runs_give_no_detectable_change() -> None:
    scores = [72.0, 85.0, 60.0, 91.0, 78.0, 66.0]
    result = compare_paired(scores, list(scores))
    assert result.verdict == "no detectable change"
    assert result.difference == 0.0
    assert (result.ci_low, result.ci_high) == (0.0, 0.0)
    assert result.p_value == 1.0
    assert result.effect == "negligible" and result.effect_size is None


def test_pure_noise_is_no_detectable_change() -> None:
    rng = random.Random(11)
    before = [rng.uniform(50, 90) for _ in range(30)]
    after = [x + rng.gauss(0, 5) for x in before]  # no true difference
    result = compare_paired(before, after, seed=2)
    assert result.verdict == "no detectable change"
    assert result.ci_low < 0 < result.ci_high
    assert result.p_value > 0.05


def test_the_exact_test_enumerates_every_sign_assignment() -> None:
    # 1, 2, 3: only +++ and --- reach |sum| 6: p = 2/8
    assert permutation_p_value([1.0, 2.0, 3.0]) == (0.25, True)
    # five positive differences: the smallest p five pairs can give is 2/32
    p, exact = permutation_p_value([4.0, 5.0, 6.0, 5.0, 4.0])
    assert exact and p == pytest.approx(2 / 32)
    result = compare_paired([70, 72, 68, 75, 71], [80, 83, 79, 84, 81])
    assert result.verdict == "no detectable change"  # 5 pairs can never reach p < 0.05
    assert result.difference == pytest.approx(10.2)


def test_effect_size_labels() -> None:
    base = [50.0, 60.0, 70.0, 80.0, 55.0, 65.0, 75.0, 85.0]
    small = [b + d for b, d in zip(base, [3, -2, 4, -3, 2, 5, -4, 1], strict=True)]
    assert compare_paired(base, small).effect in ("negligible", "small")
    constant = [b + 5 for b in base]  # every difference equal: no spread, dz undefined
    result = compare_paired(base, constant)
    assert result.effect_size is None and result.effect == "large"
    assert result.verdict == "improved"


def test_bad_input_is_refused() -> None:
    with pytest.raises(ValueError, match="length"):
        compare_paired([1.0], [1.0, 2.0])
    with pytest.raises(ValueError, match="at least one"):
        compare_paired([], [])


def test_the_interval_covers_the_true_difference_in_a_seeded_simulation() -> None:
    """100 seeded trials of 30 pairs with a true difference of +4 (sd 6): the nominal 95%
    interval should cover +4 in about 95 of them. The percentile bootstrap is known to be
    a little narrow at n = 30 (about 93%), and 100 trials add binomial noise (sd about 2):
    the tolerance is 5 trials, so at least 90 must cover it."""
    true_difference = 4.0
    covered = 0
    for trial in range(100):
        rng = random.Random(1000 + trial)
        before = [rng.uniform(40, 90) for _ in range(30)]
        after = [x + true_difference + rng.gauss(0, 6) for x in before]
        result = compare_paired(before, after, seed=trial, samples=1000, permutations=200)
        covered += result.ci_low <= true_difference <= result.ci_high
    assert covered >= 90, covered
