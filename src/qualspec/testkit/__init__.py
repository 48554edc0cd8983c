"""qualspec.testkit: prompt-response tests with annotators, their registry, built-in tests.

A test makes items (several prompts plus a context), names annotators, measures each item
and aggregates the measurements; every call goes through a :class:`qualspec.Session`, and a
test run is a stored run. The pytest plugin (``qualspec_judge``) lives here too and is
loaded by pytest through the ``pytest11`` entry point.

Names load on first use, so that importing the package (as the pytest plugin does in every
test session) stays light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from qualspec.lazy import lazy_exports

if TYPE_CHECKING:
    from qualspec.testkit._annotators import (
        Annotator,
        JSONSchemaAnnotator,
        KeywordAnnotator,
        LLMJudgeAnnotator,
        RefusalAnnotator,
        RegexAnnotator,
        SimilarityAnnotator,
        find_keywords,
    )
    from qualspec.testkit._builtin import GenderStereotypeTest, MultipleChoiceTest, RefusalTest
    from qualspec.testkit._items import (
        Annotation,
        ItemResult,
        MeasuredItem,
        Prompt,
        PromptResult,
        PromptWithContext,
        TestItem,
        group_by_context,
        max_of,
        mean_of,
        min_of,
        sum_of,
    )
    from qualspec.testkit._judge import JudgeResult, judge_response
    from qualspec.testkit._registry import TEST_ENTRY_POINT_GROUP, available_tests, load_test
    from qualspec.testkit._test import PlannedPrompt, PromptResponseTest, TestRun

_EXPORTS: dict[str, str] = {
    "Annotation": "_items",
    "Annotator": "_annotators",
    "GenderStereotypeTest": "_builtin",
    "ItemResult": "_items",
    "JSONSchemaAnnotator": "_annotators",
    "JudgeResult": "_judge",
    "KeywordAnnotator": "_annotators",
    "LLMJudgeAnnotator": "_annotators",
    "MeasuredItem": "_items",
    "MultipleChoiceTest": "_builtin",
    "PlannedPrompt": "_test",
    "Prompt": "_items",
    "PromptResponseTest": "_test",
    "PromptResult": "_items",
    "PromptWithContext": "_items",
    "RefusalAnnotator": "_annotators",
    "RefusalTest": "_builtin",
    "RegexAnnotator": "_annotators",
    "SimilarityAnnotator": "_annotators",
    "TEST_ENTRY_POINT_GROUP": "_registry",
    "TestItem": "_items",
    "TestRun": "_test",
    "available_tests": "_registry",
    "find_keywords": "_annotators",
    "group_by_context": "_items",
    "judge_response": "_judge",
    "load_test": "_registry",
    "max_of": "_items",
    "mean_of": "_items",
    "min_of": "_items",
    "sum_of": "_items",
}

__all__ = [
    "Annotation",
    "Annotator",
    "GenderStereotypeTest",
    "ItemResult",
    "JSONSchemaAnnotator",
    "JudgeResult",
    "KeywordAnnotator",
    "LLMJudgeAnnotator",
    "MeasuredItem",
    "MultipleChoiceTest",
    "PlannedPrompt",
    "Prompt",
    "PromptResponseTest",
    "PromptResult",
    "PromptWithContext",
    "RefusalAnnotator",
    "RefusalTest",
    "RegexAnnotator",
    "SimilarityAnnotator",
    "TEST_ENTRY_POINT_GROUP",
    "TestItem",
    "TestRun",
    "available_tests",
    "find_keywords",
    "group_by_context",
    "judge_response",
    "load_test",
    "max_of",
    "mean_of",
    "min_of",
    "sum_of",
]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
