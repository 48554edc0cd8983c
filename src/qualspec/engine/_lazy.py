"""A plan's work items produced on demand: :class:`LazyItems`.

A plan of a million cells is never a list: each pass over it expands the suite again
(inputs files read row by row), one item at a time. What the rest of a run needs to know
up front (how many items, whether any has criteria or checks) is computed from the
suite's dimensions when the plan is built, not by walking the items.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, overload

from qualspec.engine._items import WorkItem, call_key, reference_key

if TYPE_CHECKING:
    from qualspec.engine._plan_check import PlanSurvey

__all__ = ["LazyItems", "any_item", "with_reference_items"]


class LazyItems(Sequence[WorkItem]):
    """Work items expanded on demand: every ``iter()`` produces them afresh, one at a time.

    ``len()`` is ``count`` when the plan's builder knew it (else one counting pass);
    indexing builds the whole list once (meant for small plans and tests: a run only
    iterates). ``criteria`` and ``checks``: whether some item has criteria / checks
    (None: unknown, found by looking). ``keep``: the first iteration builds the list and
    later ones read it (a small plan whose rows are in memory). ``survey``: what one pass
    over the items would find (their models and prompt parts), known from the suite's
    dimensions; ``input_order``: the input ids of each scenario with inputs, in file order,
    read from the suite's rows. With both known, a run walks the plan once: the run itself.
    """

    def __init__(
        self,
        produce: Callable[[], Iterator[WorkItem]],
        *,
        count: int | None = None,
        criteria: bool | None = None,
        checks: bool | None = None,
        keep: bool = False,
        survey: PlanSurvey | None = None,
        input_order: Callable[[], dict[str, list[str]]] | None = None,
    ) -> None:
        self.produce = produce
        self._count = count
        self.criteria = criteria
        self.checks = checks
        self.keep = keep
        self.survey = survey
        self.input_order = input_order
        self._list: list[WorkItem] | None = None

    def __iter__(self) -> Iterator[WorkItem]:
        if self._list is None and self.keep:
            self._whole()
        return iter(self._list) if self._list is not None else self.produce()

    def __len__(self) -> int:
        if self._count is None:
            self._count = sum(1 for _ in self)
        return self._count

    def __bool__(self) -> bool:
        return len(self) > 0

    def _whole(self) -> list[WorkItem]:
        if self._list is None:
            self._list = list(self.produce())
            self._count = len(self._list)
        return self._list

    @overload
    def __getitem__(self, index: int) -> WorkItem: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[WorkItem]: ...
    def __getitem__(self, index: int | slice) -> WorkItem | Sequence[WorkItem]:
        return self._whole()[index]

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if isinstance(other, Sequence):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"LazyItems(count={self._count})"


def any_item(items: Sequence[WorkItem], fact: str, test: Callable[[WorkItem], bool]) -> bool:
    """Whether some item passes ``test``: known up front for a lazy plan (its ``fact``
    attribute, ``criteria`` or ``checks``), else found by looking."""
    if isinstance(items, LazyItems):
        known = getattr(items, fact)
        if isinstance(known, bool):
            return known
    return any(test(item) for item in items)


def with_reference_items(
    items: Iterable[WorkItem],
    address: tuple[str, str],
    chosen: Collection[str],
    params: Mapping[str, Any],
) -> Iterator[WorkItem]:
    """``items`` with a reference answer (of ``address``, at temperature 0) right before
    the first candidate of its scenario and input that is sent its messages; every
    candidate of ``chosen`` scenarios depends on its reference. A reference already in
    the plan (met earlier in its scenario and input) is not added again."""
    provider, model = address
    block: tuple[str, str | None] | None = None
    known: set[str] = set()
    ref_params = {**params, "temperature": 0.0}
    for item in items:
        if (item.scenario, item.input_id) != block:
            block, known = (item.scenario, item.input_id), set()
        if item.kind != "candidate" or item.scenario not in chosen:
            known.add(item.key)
            yield item
            continue
        call = call_key(provider, model, item.messages, ref_params, 0, item.json_schema)
        key = reference_key(call, item.scenario, item.input_id)
        if key not in known:
            known.add(key)
            yield WorkItem(
                key=key,
                call_key=call,
                candidate="reference",
                role=item.role,
                scenario=item.scenario,
                input_id=item.input_id,
                temperature=0.0,
                run_index=0,
                provider=provider,
                model=model,
                messages=item.messages,
                params=dict(params),
                criteria=(),
                context=item.context,
                prompt_parts=item.prompt_parts,
                input_values=item.input_values,
                kind="reference",
                json_schema=item.json_schema,
            )
        if key not in item.depends_on:
            item = dataclasses.replace(item, depends_on=(*item.depends_on, key))
        yield item
