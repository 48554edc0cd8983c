"""A comparison of a suite (``comparisons:``): which answers are judged side by side."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = ["COMPARISON_DIMENSIONS", "Comparison"]

COMPARISON_DIMENSIONS = ("candidates", "roles")
"""What a comparison compares (``compare:``) and what it holds fixed (``within:``)."""

ComparisonDimension = Literal["candidates", "roles"]


class Comparison(BaseModel):
    """A comparative judgment (``comparisons:``): the answers of one group side by side.

    ``compare: candidates, within: roles`` (the Ruby gem's ``compare :candidates, within:
    :roles``) makes one group per (scenario, input, temperature, run, role) holding every
    candidate's answer; ``compare: roles, within: candidates`` one per candidate holding its
    answer to every role. The judge sees a group's answers in one call, under neutral labels
    (Response A, B, ...) in a shuffled, recorded order, and scores each 0-10 and names a
    winner (or a tie). Example (YAML)::

        comparisons:
          - {compare: candidates, within: roles}
          - {compare: roles, within: candidates, debias: true, name: suppression}

    ``within`` defaults to the other dimension; ``model`` to the suite's judge model;
    ``criteria`` to each scenario's criteria; ``debias: true`` judges every group a second
    time in reversed order and averages the two.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)  # see spec._base

    compare: ComparisonDimension = Field(description="What is compared: candidates or roles.")
    within: ComparisonDimension | None = Field(
        default=None,
        description="What each group holds fixed: roles or candidates (default: the other).",
    )
    name: str | None = Field(
        default=None,
        min_length=1,
        description="Records are stored under it (default compare_<compare>_within_<within>).",
    )
    model: str | None = Field(
        default=None, description="provider/model of the judge (default: the suite's judge)."
    )
    criteria: list[str] | None = Field(
        default=None, description="What the answers are compared on (default: the scenario's)."
    )
    debias: bool = Field(
        default=False,
        description="Judge each group a second time in reversed order and average the scores.",
    )

    @model_validator(mode="after")
    def _different_dimensions(self) -> Comparison:
        if self.within is not None and self.within == self.compare:
            other = next(d for d in COMPARISON_DIMENSIONS if d != self.compare)
            raise ValueError(
                f"compare and within are both {self.compare!r}: a comparison holds one "
                f"dimension fixed and compares the other (e.g. compare: {self.compare}, "
                f"within: {other})"
            )
        return self

    @property
    def held(self) -> str:
        """The dimension each group holds fixed (``within``, or the other dimension)."""
        if self.within is not None:
            return self.within
        return next(d for d in COMPARISON_DIMENSIONS if d != self.compare)

    @property
    def label(self) -> str:
        """The name its records are stored under."""
        return self.name or f"compare_{self.compare}_within_{self.held}"
