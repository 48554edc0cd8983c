"""Agreement statistics: Krippendorff's alpha against the values published with the method
and against small cases computed by hand, its bootstrap interval, and pairwise agreement."""

from __future__ import annotations

import pytest

from qualspec.analysis import (
    TENTATIVE_ALPHA,
    alpha_with_interval,
    krippendorff_alpha,
    pairwise_agreement,
)
from qualspec.judges import combine_scores

N = None
# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", section C: four
# observers, twelve units, missing values; published alpha 0.743 (nominal), 0.849 (interval)
PUBLISHED = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, N, N, N],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, N, 3],
    [N, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, N],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, N],
]


def test_the_published_worked_example() -> None:
    nominal = alpha_with_interval(PUBLISHED, "nominal")
    interval = alpha_with_interval(PUBLISHED, "interval")
    assert round(nominal.alpha or 0, 3) == 0.743
    assert round(interval.alpha or 0, 3) == 0.849
    # unit 12 has one value only: 11 pairable units
    assert nominal.n_items == interval.n_items == 11
    for found in (nominal, interval):
        assert found.low is not None and found.high is not None
        assert found.low <= found.alpha <= found.high <= 1.0  # type: ignore[operator]


def test_two_raters_three_items_by_hand() -> None:
    """A = 1 2 3, B = 1 2 4. Six values (n = 6): 1 1 2 2 3 4.

    Interval: observed disagreement 2 * (3 - 4)^2 / 6 = 1/3; expected: the sum of squared
    differences over ordered pairs of values, 2 * (6 * 35 - 13^2) = 82, over 6 * 5: 82/30;
    alpha = 1 - (1/3) / (82/30) = 72/82. Nominal: observed 2/6, expected
    (36 - (4 + 4 + 1 + 1)) / 30 = 26/30; alpha = 1 - (1/3) / (26/30) = 16/26.
    """
    ratings = [[1, 2, 3], [1, 2, 4]]
    assert krippendorff_alpha(ratings, "interval") == pytest.approx(72 / 82)
    assert krippendorff_alpha(ratings, "nominal") == pytest.approx(16 / 26)
    (pair,) = pairwise_agreement(["a", "b"], ratings)
    assert (pair.n, pair.exact, pair.within_one) == (3, pytest.approx(2 / 3), 1.0)


def test_a_missing_rating_leaves_its_item_out_of_the_pairs() -> None:
    # item 3 rated by one rater only: as if A = 1 2, B = 1 3 (four values 1 1 2 3)
    # interval: observed 2 * 1 / 4 = 1/2; expected 2 * (4 * 15 - 49) / 12 = 22/12
    found = alpha_with_interval([[1, 2, 5], [1, 3, None]], "interval")
    assert found.alpha == pytest.approx(1 - 0.5 / (22 / 12))
    assert found.n_items == 2
    (pair,) = pairwise_agreement(["a", "b"], [[1, 2, 5], [1, 3, None]])
    assert (pair.n, pair.exact, pair.within_one) == (2, 0.5, 1.0)


def test_undefined_alpha_is_none_and_never_flagged() -> None:
    same = alpha_with_interval([[7, 7, 7], [7, 7, 7]])  # no variation: nothing to disagree on
    assert same.alpha is None and not same.flagged and same.n_items == 3
    assert "n/a (no variation)" in same.text()
    alone = alpha_with_interval([[7, None], [None, 3]])  # no item rated twice
    assert alone.alpha is None and alone.n_items == 0
    assert pairwise_agreement(["a", "b"], [[7, None], [None, 3]])[0].exact is None


def test_the_interval_is_seeded_and_brackets_alpha() -> None:
    ratings = [[8, 6, 9, 3, 7, 5, 4, 9], [8, 7, 9, 2, 5, 5, 6, 8], [7, 6, 8, 3, 6, 4, 5, 9]]
    first = alpha_with_interval(ratings, samples=500, seed=3)
    assert first == alpha_with_interval(ratings, samples=500, seed=3)
    assert first.low is not None and first.high is not None
    assert first.low < first.alpha < first.high  # type: ignore[operator]
    perfect = alpha_with_interval([[1, 5, 9, 3], [1, 5, 9, 3]])
    assert (perfect.alpha, perfect.low, perfect.high) == (1.0, 1.0, 1.0)


def test_flagged_below_krippendorffs_tentative_bound() -> None:
    assert TENTATIVE_ALPHA == 0.667
    disagree = alpha_with_interval([[9, 2, 8, 5, 7, 3], [3, 8, 4, 9, 6, 7]])
    assert disagree.alpha is not None and disagree.alpha < 0 and disagree.flagged
    assert disagree.as_dict()["flagged"] is True


@pytest.mark.parametrize(
    ("method", "scores", "expected"),
    [
        ("median", [6, 8, 7], (7, True)),
        ("median", [6, 8], (7, True)),
        ("mean", [6, 8, 9], (pytest.approx(23 / 3), True)),
        ("min", [6, 8, 9], (6, False)),
        ("majority", [8, 9, 3], (8, True)),
        ("majority", [8, 3], (5.5, False)),  # a tie fails
        ("majority", [3, 4, 9], (4, False)),
        ("median", [], (None, None)),
    ],
)
def test_how_a_panel_combines(method: str, scores: list[float], expected: tuple) -> None:  # type: ignore[type-arg]
    assert combine_scores(method, scores, 7) == expected
