"""A plan's stream cut into blocks (the items of one scenario and input row, in a row)
and batches of blocks: what the executor schedules, looks up and forgets together.

A block holds every answer a group evaluator compares (its groups never leave a
scenario and input row) and every reference answer its candidates depend on, so once a
block is done nothing of it is needed again.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from qualspec.engine._evaluators import Evaluator, evaluates
from qualspec.engine._items import WorkItem

__all__ = ["Block", "batches", "blocks", "groups_of", "response_aspects"]


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
