"""The annotators as evaluator types: each is registered under the entry point group
``qualspec.evaluators`` like every other evaluator (``pyproject.toml``), so a suite's
``judges:`` can name one and the registry lists them.

Each factory builds its annotator from a ``judges:`` entry: the annotator's parameters are
the entry's ``options`` (``{type: regex, options: {pattern: "Paris"}}``), its name the
entry's label; the LLM judge also takes the entry's ``model``, ``threshold`` and ``params``,
the similarity annotator a ``threshold`` given in the entry. A parameter the annotator
refuses is a ``ConfigError`` naming the entry.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from qualspec.errors import ConfigError
from qualspec.testkit._annotators import (
    Annotator,
    JSONSchemaAnnotator,
    KeywordAnnotator,
    LLMJudgeAnnotator,
    RefusalAnnotator,
    RegexAnnotator,
    SimilarityAnnotator,
)

if TYPE_CHECKING:
    from qualspec.spec import EvaluatorConfig

__all__ = ["json_schema", "keyword", "llm_judge", "refusal", "regex", "similarity"]

_A = TypeVar("_A", bound=Annotator)


def _build(config: EvaluatorConfig, make: Callable[..., _A], **extra: Any) -> _A:
    try:
        annotator = make(**config.options, **extra)
    except (TypeError, ValueError) as exc:
        raise ConfigError(
            f"evaluator {config.label!r} of type {config.type}: {exc}; give the annotator's "
            "parameters under options:"
        ) from exc
    annotator.name = config.label
    return annotator


def _threshold(config: EvaluatorConfig) -> dict[str, Any]:
    """The entry's threshold when it gives one (the annotators default to none)."""
    return {"threshold": config.threshold} if "threshold" in config.model_fields_set else {}


def regex(config: EvaluatorConfig) -> RegexAnnotator:
    """``{type: regex, options: {pattern: ..., flags: 0}}``."""
    return _build(config, RegexAnnotator)


def keyword(config: EvaluatorConfig) -> KeywordAnnotator:
    """``{type: keyword, options: {keywords: [...]}}``."""
    return _build(config, KeywordAnnotator)


def refusal(config: EvaluatorConfig) -> RefusalAnnotator:
    """``{type: refusal, options: {expected: true}}`` (``expected`` optional)."""
    return _build(config, RefusalAnnotator)


def json_schema(config: EvaluatorConfig) -> JSONSchemaAnnotator:
    """``{type: json_schema, options: {schema: {...}}}``."""
    return _build(config, JSONSchemaAnnotator)


def similarity(config: EvaluatorConfig) -> SimilarityAnnotator:
    """``{type: similarity, options: {method: lexical}}`` (per test item and SUT)."""
    return _build(config, SimilarityAnnotator, **_threshold(config))


def llm_judge(config: EvaluatorConfig) -> LLMJudgeAnnotator:
    """``{type: llm_judge, model: ..., options: {criteria: [...]}}``."""
    return _build(
        config,
        LLMJudgeAnnotator,
        model=config.model,
        threshold=config.threshold,
        params=config.params or None,
    )
