"""A plan's stream cut into blocks (the items of one scenario and input row, in a row)
and batches of blocks: what the executor schedules, looks up and forgets together.

A block holds every reference answer its candidates depend on; a group evaluator's
group may span consecutive blocks (:class:`OpenGroups`). Once a block and the groups
holding it are done, nothing of it is needed again.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from qualspec.engine._evaluators import Evaluator, evaluates
from qualspec.engine._items import WorkItem

__all__ = ["Block", "OpenGroups", "batches", "blocks", "groups_of", "response_aspects"]


@dataclass(eq=False)
class Block:
    """The items of one scenario and input row, and what the executor keeps for them
    until every task of the block is done (``pending``)."""

    items: list[WorkItem]
    pending: int = 0
    closed: bool = False
    evaluations: set[tuple[str, str, str]] = field(default_factory=set)

    def keys(self) -> Iterator[str]:
        """The keys of the block's items."""
        return (item.key for item in self.items)

    def hold(self, found: set[tuple[str, str, str]]) -> set[tuple[str, str, str]]:
        """Keep the done evaluations of ``found`` whose subject is one of the block's
        answers (forgotten with the block); returns them."""
        mine = set(self.keys())
        self.evaluations = {e for e in found if e[1] in mine}
        return self.evaluations


def blocks(items: Iterable[WorkItem]) -> Iterator[list[WorkItem]]:
    """The items of one scenario and input row at a time, in plan order."""
    block: list[WorkItem] = []
    where: tuple[str, str | None] | None = None
    for item in items:
        here = (item.scenario, item.input_id)
        if here != where and block:
            yield block
            block = []
        where = here
        block.append(item)
    if block:
        yield block


def batches(items: Iterable[WorkItem], size: int) -> Iterator[list[Block]]:
    """Whole blocks, about ``size`` items a batch (a larger block is a batch alone)."""
    batch: list[Block] = []
    n = 0
    for block in blocks(items):
        if batch and n + len(block) > size:
            yield batch
            batch, n = [], 0
        batch.append(Block(block))
        n += len(block)
    if batch:
        yield batch


def groups_of(evaluator: Evaluator, items: Iterable[WorkItem]) -> dict[str, list[WorkItem]]:
    """The groups a group evaluator makes of ``items`` (a block's), by group id."""
    groups: dict[str, list[WorkItem]] = {}
    for item in items:
        group_id = evaluator.group_of(item)
        if group_id is not None and evaluates(evaluator, item):
            groups.setdefault(group_id, []).append(item)
    return groups


def response_aspects(evaluator: Evaluator, items: Iterable[WorkItem]) -> int:
    """How many aspects an answer-scope evaluator records for ``items``."""
    return sum(len(evaluator.aspects((item,))) for item in items if evaluates(evaluator, item))


class OpenGroups:
    """The groups of group evaluators still taking members. A group stays open while
    consecutive blocks add members to it (a test item's prompts are rows of their own),
    and closes at the first block that adds none: then its evaluation can start. Each
    block a group holds counts in its ``pending`` until the group is evaluated."""

    def __init__(self, evaluators: Sequence[Evaluator]) -> None:
        self._evaluators = list(evaluators)
        self._open: dict[tuple[int, str], tuple[list[WorkItem], list[Block]]] = {}

    def add(self, block: Block) -> list[tuple[int, str, list[WorkItem], list[Block]]]:
        """Add a block's items to their groups; the groups this block closed."""
        touched: set[tuple[int, str]] = set()
        for index, evaluator in enumerate(self._evaluators):
            for group_id, members in groups_of(evaluator, block.items).items():
                key = (index, group_id)
                items, blocks = self._open.setdefault(key, ([], []))
                items.extend(members)
                blocks.append(block)
                block.pending += 1
                touched.add(key)
        return self._closed_groups([key for key in self._open if key not in touched])

    def rest(self) -> list[tuple[int, str, list[WorkItem], list[Block]]]:
        """Every group still open (the plan has ended)."""
        return self._closed_groups(list(self._open))

    def _closed_groups(
        self, keys: list[tuple[int, str]]
    ) -> list[tuple[int, str, list[WorkItem], list[Block]]]:
        out = []
        for key in keys:
            items, blocks = self._open.pop(key)
            out.append((key[0], key[1], items, blocks))
        return out
