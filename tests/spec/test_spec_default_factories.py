"""The suite models make their empty lists and dicts with Python functions, not the
builtins: pydantic reads a factory's signature as it builds a validator, and a builtin's is
parsed from its text by the tokenizer (4-5 ms of every command that loads a suite)."""

from __future__ import annotations

import inspect

from pydantic import BaseModel

import qualspec.spec


def _models() -> list[type[BaseModel]]:
    found = [getattr(qualspec.spec, name) for name in qualspec.spec.__all__]
    return [m for m in found if inspect.isclass(m) and issubclass(m, BaseModel)]


def test_no_suite_model_field_has_a_builtin_default_factory() -> None:
    models = _models()
    assert len(models) >= 10  # the suite, its scenarios, judges, providers, ...
    builtin = [
        f"{model.__name__}.{name}"
        for model in models
        for name, field in model.model_fields.items()
        if inspect.isbuiltin(field.default_factory) or field.default_factory in (list, dict)
    ]
    assert builtin == []


SUITE = {
    "name": "factories",
    "candidates": [{"name": "a", "model": "p/m"}],
    "scenarios": [{"name": "s", "prompt": "hi"}],
}


def test_each_field_still_gets_a_new_empty_container() -> None:
    evaluation = qualspec.spec.Evaluation.model_validate(SUITE)
    again = qualspec.spec.Evaluation.model_validate(SUITE)
    assert evaluation.providers == {} and evaluation.roles == []
    assert evaluation.providers is not again.providers and evaluation.roles is not again.roles
