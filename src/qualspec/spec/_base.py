"""The base of every suite model: unknown keys are refused and a loaded suite is frozen."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

__all__ = ["_Model"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
