"""The base of every suite model: unknown keys are refused and a loaded suite is frozen."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

__all__ = ["_Model"]


class _Model(BaseModel):
    # defer_build: a model's validator is built when it is first used, not at import (most
    # models are only ever validated inside an Evaluation, whose validator includes them):
    # 50-60 ms less CPU for every command that loads a suite
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)
