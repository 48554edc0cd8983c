"""Judge panels: several judges score every (answer, criterion), their scores combined
(``judge: {panel: [...], combine: median}`` and the same in ``judges:`` entries)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from qualspec.spec._base import _Model, new_dict

__all__ = ["COMBINE_METHODS", "DEFAULT_JUDGE_MODEL", "PanelFields", "PanelMember", "check_scoring"]

DEFAULT_JUDGE_MODEL = "local/smollm2"

COMBINE_METHODS = ("median", "mean", "majority", "min")
Combine = Literal["median", "mean", "majority", "min"]


class PanelMember(_Model):
    """One judge of a panel: its model, and optionally a name and request parameters.

    Example (YAML): ``{model: openai/gpt-4o-mini, name: mini, params: {max_tokens: 200}}``
    """

    model: str = Field(min_length=1, description="provider/model of this judge.")
    name: str | None = Field(
        default=None, min_length=1, description="Its name in reports (default: the model)."
    )
    params: dict[str, Any] = Field(
        default_factory=new_dict, description="Request parameters of its calls (max_tokens, ...)."
    )

    @property
    def label(self) -> str:
        """The name the member's scores are kept under."""
        return self.name or self.model


class PanelFields(_Model):
    """The panel settings shared by ``judge:`` and the entries of ``judges:``."""

    panel: list[PanelMember] | None = Field(
        default=None,
        description="Several judges that each score every answer on every criterion "
        "(instead of model:); their scores are combined by combine:.",
    )
    combine: Combine = Field(
        default="median",
        description="How a panel's scores combine: median, mean, min (0-10 scores), or "
        "majority (pass/fail votes; a tie fails).",
    )

    @property
    def main_model(self) -> str:
        """The judge's model, or a panel's first member's (the default of the field
        grader's and the comparisons' model)."""
        if self.panel:
            return self.panel[0].model
        model: str | None = getattr(self, "model", None)
        return model or DEFAULT_JUDGE_MODEL

    @model_validator(mode="after")
    def _panel_form(self) -> PanelFields:
        if self.panel is None:
            # a dump's default (combine: median beside panel: null) reloads
            if "combine" in self.model_fields_set and self.combine != "median":
                raise ValueError("combine: needs a panel: (a list of judges, {model: ...} each)")
            return self
        if len(self.panel) < 2:
            raise ValueError(
                "a panel needs at least two judges ({model: ...} each); for one judge give "
                "model: instead of panel:"
            )
        if "model" in self.model_fields_set:
            raise ValueError("give either model: (one judge) or panel: (several judges), not both")
        labels = [m.label for m in self.panel]
        for label in labels:
            if labels.count(label) > 1:
                raise ValueError(
                    f"the panel lists {label!r} twice: give each member a unique name: "
                    "(e.g. {model: ..., name: second})"
                )
        return self


def check_scoring(scoring: str, mode: str) -> None:
    """Refuse ``scoring: expected`` beside ``mode: all_criteria`` (one score per call)."""
    if scoring == "expected" and mode != "per_criterion":
        raise ValueError(
            "scoring: expected needs mode: per_criterion (one score per call); remove "
            "mode: all_criteria or scoring: expected"
        )
