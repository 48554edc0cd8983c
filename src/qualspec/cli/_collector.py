"""The cyclic garbage collector during a command's start-up.

A ``qualspec run`` imports hundreds of modules and builds its suite and plan before the
first call: objects that live until the process ends, and almost no garbage. Each
collection in that phase walked them all (two young collections of 40-90 ms each in the
benchmark's run, with ``main``'s larger young generation) to free about two thousand
objects. Paused, the start-up makes no collection; once the run starts, what was built is
frozen (never walked again) and the collector runs as usual, so a long run's garbage is
collected as before.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from qualspec.spec import Evaluation

__all__ = ["HTTP_TYPES", "collecting", "import_for_run", "paused_collector"]

HTTP_TYPES = frozenset({"openai", "anthropic"})  # the built-in provider types on aiohttp

_paused: list[bool] = []  # one entry per paused_collector block that turned collection off


@contextmanager
def paused_collector() -> Iterator[None]:
    """No cyclic garbage collection in the block until :func:`collecting` is called; the
    collector is on again when the block ends (if it was on when it began)."""
    was_on = gc.isenabled()
    gc.disable()
    _paused.append(was_on)
    try:
        yield
    finally:
        _paused.pop()
        if was_on:
            gc.enable()


def collecting() -> None:
    """The start-up is over: what exists now is frozen (the collector never walks it) and
    collection is on again, unless it was off before :func:`paused_collector`."""
    gc.freeze()
    if _paused and _paused[-1]:
        gc.enable()


def import_for_run(evaluation: Evaluation, judge_model: str) -> None:
    """Import, before :func:`collecting` freezes what exists, what the run's first call
    would import anyway: aiohttp (some 140 modules) when a candidate or the judge is on an
    HTTP provider. Imported at the first call instead, its objects were the young
    generation of the run's first collection (30-50 ms of CPU walking them)."""
    providers = evaluation.providers
    names = {c.model.partition("/")[0] for c in evaluation.candidates}
    names.add(judge_model.partition("/")[0])
    types = {providers[n].type if n in providers else n for n in names}
    if types & HTTP_TYPES:
        import aiohttp  # noqa: F401
