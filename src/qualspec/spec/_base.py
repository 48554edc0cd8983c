"""The base of every suite model: unknown keys are refused and a loaded suite is frozen."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

__all__ = ["_Model", "new_dict", "new_list"]


def new_list() -> list[Any]:
    """An empty list: the ``default_factory`` of the models' list fields.

    Not ``list`` itself: pydantic reads a factory's signature as it builds a validator,
    and a builtin's is parsed from its text by the tokenizer (4-5 ms of every command that
    loads a suite, most of it compiling the tokenizer's expression, for nothing)."""
    return []


def new_dict() -> dict[str, Any]:
    """An empty dict: the ``default_factory`` of the models' dict fields (see
    :func:`new_list`)."""
    return {}


class _Model(BaseModel):
    # defer_build: a model's validator is built when it is first used, not at import (most
    # models are only ever validated inside an Evaluation, whose validator includes them):
    # 50-60 ms less CPU for every command that loads a suite
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)
