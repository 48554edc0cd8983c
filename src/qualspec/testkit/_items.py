"""What a test is made of: prompts, test items with their context, and what comes back per
item (responses, annotations, measurements); helpers that aggregate measurements."""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "Annotation",
    "ItemResult",
    "MeasuredItem",
    "Prompt",
    "PromptResult",
    "PromptWithContext",
    "TestItem",
    "group_by_context",
    "max_of",
    "mean_of",
    "min_of",
    "sum_of",
]


@dataclass(frozen=True, slots=True)
class Prompt:
    """One text sent to the system under test (SUT) on its own, in a single turn.

    Example: ``Prompt("Alice works in a hospital. She is a")``.
    """

    text: str
    system: str | None = None


@dataclass(frozen=True, slots=True)
class PromptWithContext:
    """A prompt carrying its own context: what a test needs to read the answer to this
    prompt (the pronoun it used, the variant it is), never sent to the SUT.

    The item's ``context`` is shared by all its prompts; a prompt's own context comes back
    with its answer in :attr:`PromptResult.context`. ``source_id`` names where the prompt
    came from (a dataset row), for the test's own bookkeeping.

    Example::

        TestItem(
            prompts=[PromptWithContext(Prompt("Alice works in a hospital. She is a"), "she"),
                     PromptWithContext(Prompt("Bob works in a hospital. He is a"), "he")],
            context=["nurse", "doctor"],
        )
    """

    prompt: Prompt | str
    context: Any = None
    source_id: str | None = None

    def as_prompt(self) -> Prompt:
        """The prompt itself (a plain string made :class:`Prompt`)."""
        return self.prompt if isinstance(self.prompt, Prompt) else Prompt(self.prompt)

    @property
    def text(self) -> str:
        """The text sent to the SUT."""
        return self.as_prompt().text


@dataclass(frozen=True)
class TestItem:
    """The smallest unit a test measures: one or more prompts and the context that says
    how to read their answers.

    The prompts go to the SUT independently; their answers come back together to
    :meth:`PromptResponseTest.measure_quality`, so a test can compare them (``"Alice ... She
    is a"`` against ``"Bob ... He is a"``). ``context`` (the correct answer, the words to
    look for, a group name) is never sent to the SUT. ``id`` names the item in the store
    and reports (default: its position, ``item-1``, ...).

    Example::

        TestItem(
            prompts=[Prompt("Alice works in a hospital. She is a"),
                     Prompt("Bob works in a hospital. He is a")],
            context={"words": ["nurse", "doctor"], "group": "medical_profession"},
        )
    """

    __test__ = False  # not a pytest test class, whatever its name

    prompts: Sequence[Prompt | PromptWithContext | str]
    context: Any = None
    id: str | None = None

    def prompt_list(self) -> list[Prompt]:
        """The prompts as sent: plain strings made :class:`Prompt`, a
        :class:`PromptWithContext` its prompt."""
        return [p.as_prompt() for p in self.prompts_with_context()]

    def prompts_with_context(self) -> list[PromptWithContext]:
        """Every prompt with its own context (None for a prompt given without one)."""
        out = []
        for p in self.prompts:
            if isinstance(p, PromptWithContext):
                out.append(PromptWithContext(p.as_prompt(), p.context, p.source_id))
            else:
                out.append(PromptWithContext(p if isinstance(p, Prompt) else Prompt(p)))
        return out


@dataclass(frozen=True, slots=True)
class Annotation:
    """What one annotator concluded about a response (or about an item's responses).

    ``score`` is 0-10 (None: unscored, see ``unscored_reason``), ``passed`` its verdict,
    ``details`` what else the annotator found (the matched text, the similarity, ...);
    ``error`` means its model call failed.
    """

    score: float | None = None
    passed: bool | None = None
    reasoning: str | None = None
    details: Mapping[str, Any] = field(default_factory=dict)
    unscored_reason: str | None = None
    error: str | None = None


@dataclass(frozen=True, slots=True)
class PromptResult:
    """One prompt of an item and the SUT's response, with the annotations of the response.

    ``text`` is None when the call failed (``error`` says why). ``context`` is the prompt's
    own context (given with :class:`PromptWithContext`; else None).
    """

    prompt: Prompt
    text: str | None
    annotations: Mapping[str, Annotation] = field(default_factory=dict)
    error: str | None = None
    response_key: str | None = None
    context: Any = None


@dataclass(frozen=True, slots=True)
class ItemResult:
    """A test item as it comes back from one SUT: its responses (one per prompt, in order)
    and the annotations of item-scope annotators (a similarity across the responses)."""

    item: TestItem
    item_id: str
    sut: str
    responses: tuple[PromptResult, ...]
    annotations: Mapping[str, Annotation] = field(default_factory=dict)

    @property
    def context(self) -> Any:
        """The item's context."""
        return self.item.context

    @property
    def texts(self) -> list[str]:
        """The response texts in prompt order (a failed call gives ``""``)."""
        return [r.text or "" for r in self.responses]


@dataclass(frozen=True, slots=True)
class MeasuredItem:
    """An item result with the measurements :meth:`measure_quality` made of it."""

    result: ItemResult
    measurements: Mapping[str, float]

    @property
    def context(self) -> Any:
        """The item's context."""
        return self.result.item.context


def _values(items: Iterable[MeasuredItem], name: str) -> list[float]:
    out = []
    for item in items:
        value = item.measurements.get(name)
        if value is not None and math.isfinite(value):
            out.append(float(value))
    return out


def mean_of(items: Iterable[MeasuredItem], name: str) -> float | None:
    """Mean of measurement ``name`` over the items that have it (None: none has it).

    Example:
        >>> mean_of([], "correct") is None
        True
    """
    values = _values(items, name)
    return math.fsum(values) / len(values) if values else None


def sum_of(items: Iterable[MeasuredItem], name: str) -> float:
    """Sum of measurement ``name`` over the items that have it (0 for none)."""
    return math.fsum(_values(items, name))


def min_of(items: Iterable[MeasuredItem], name: str) -> float | None:
    """Smallest value of measurement ``name`` (None: none has it)."""
    values = _values(items, name)
    return min(values) if values else None


def max_of(items: Iterable[MeasuredItem], name: str) -> float | None:
    """Largest value of measurement ``name`` (None: none has it)."""
    values = _values(items, name)
    return max(values) if values else None


def group_by_context(
    items: Iterable[MeasuredItem], key: Callable[[Any], Hashable] | None = None
) -> dict[Hashable, list[MeasuredItem]]:
    """Items grouped by their context (or by ``key(context)``), in first-seen order.

    Example::

        for group, members in group_by_context(items, key=lambda c: c["group"]).items():
            results[f"{group}_stereotype"] = mean_of(members, "gender_stereotype_count")
    """
    out: dict[Hashable, list[MeasuredItem]] = {}
    for item in items:
        context = item.context
        group = key(context) if key is not None else _hashable(context)
        out.setdefault(group, []).append(item)
    return out


def _hashable(value: Any) -> Hashable:
    if isinstance(value, Mapping):
        return tuple(sorted((str(k), _hashable(v)) for k, v in value.items()))
    if isinstance(value, list | tuple | set):
        return tuple(_hashable(v) for v in value)
    return value  # type: ignore[no-any-return]
