"""What an evaluator tells the engine about itself beyond evaluating: the calls it plans
(for ``--dry-run`` and cost) and what it does before a run (``prepare``: a judge's
calibration on known pairs).

The engine learns these through the :class:`~qualspec.engine.Evaluator` protocol only; it
knows no evaluator by its type.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

if TYPE_CHECKING:
    from qualspec.engine import Session  # the package's name: no file cycle (see tests)
    from qualspec.engine._items import WorkItem
    from qualspec.spec import ProviderConfig

__all__ = [
    "CHARS_PER_TOKEN",
    "DEFAULT_OUTPUT_TOKENS",
    "JUDGE_OUTPUT_TOKENS",
    "JUDGE_PROMPT_TOKENS",
    "PER_MESSAGE_TOKENS",
    "Calibrated",
    "HookDefaults",
    "PlannedCalls",
    "PrepareContext",
    "answer_tokens",
    "judged_tokens",
    "message_tokens",
]

_T = TypeVar("_T")

CHARS_PER_TOKEN = 4
DEFAULT_OUTPUT_TOKENS = 256
JUDGE_OUTPUT_TOKENS = 120
JUDGE_PROMPT_TOKENS = 220  # the judge template itself, measured on the shipped prompt
PER_MESSAGE_TOKENS = 8

Calibrated = Callable[[Any, int], bool]
"""Whether a measurement of this evaluator on that many known pairs is cached (so its
``prepare`` makes none)."""


@dataclass(frozen=True, slots=True)
class PlannedCalls:
    """Calls an evaluator plans: ``calls`` calls of about ``input_tokens`` in and
    ``output_tokens`` out each, each asked again up to ``retries`` times when its answer
    cannot be read.

    ``kind`` is the dry run's row (``judge``, ``grader``, ``compare``, ``calibration``);
    ``model`` the address called (None: the evaluator's). For a preparation (a
    calibration): ``pairs`` known pairs, ``role`` (``judge`` or ``grader``), and ``key``:
    preparations with the same key are made once per run (and counted once).
    """

    calls: int
    input_tokens: int
    output_tokens: int
    retries: int = 0
    kind: str = "judge"
    model: str | None = None
    pairs: int = 0
    role: str = "judge"
    key: str | None = None


def message_tokens(item: WorkItem) -> int:
    """Estimated tokens of the messages a work item sends (about 4 characters a token)."""
    return sum(len(m.content) for m in item.messages) // CHARS_PER_TOKEN + PER_MESSAGE_TOKENS


def answer_tokens(item: WorkItem) -> int:
    """Estimated tokens of a work item's answer: its ``max_tokens`` parameter, or 256."""
    return int(item.params.get("max_tokens") or DEFAULT_OUTPUT_TOKENS)


class PrepareContext(Protocol):
    """What an evaluator's ``prepare`` may use before (and alongside) a run's calls.

    Attributes:
        session: The session (its store, ``complete``, ``recording`` for a run of its own).
        providers: The suite's named provider connections.
        calibrate: Whether the run measures its judges (not ``--no-calibration``).
    """

    session: Session
    providers: Mapping[str, ProviderConfig]
    calibrate: bool

    def warn(self, line: str) -> None:
        """A warning for the run's outcome (printed by the CLI)."""
        ...

    async def ready(self) -> None:
        """Wait until the run's calls have begun (a provider answered one), so that the
        preparation's calls go alongside them. What a preparation does before it calls
        this (cache lookups, opening a run of its own) is done before the run is created;
        one that never calls it is done before the run is created."""
        ...

    async def once(self, key: str, make: Callable[[], Awaitable[_T]]) -> _T:
        """``make()``'s result, made once per run for every ``key`` (evaluators that share
        a measurement wait for the same one)."""
        ...


def judged_tokens(item: WorkItem) -> int:
    """Estimated tokens a judge reads of one answer: the prompt's last message and the
    answer (its ``max_tokens``), without the judge's own template."""
    return len(item.messages[-1].content) // CHARS_PER_TOKEN + answer_tokens(item)


class HookDefaults:
    """Mixed into an evaluator: the protocol's defaults for the members it leaves out
    (items of kind ``candidate``, waits for dependencies, does not score the suite's
    criteria, no planned calls, nothing to prepare)."""

    kinds: Sequence[str] = ("candidate",)
    uses_dependencies: bool = True
    scores_criteria: bool = False

    def planned_calls(self, items: Sequence[WorkItem]) -> Sequence[PlannedCalls]:
        """No model call."""
        return ()

    def planned_preparation(
        self, *, calibrate: bool, calibrated: Calibrated | None
    ) -> Sequence[PlannedCalls]:
        """No preparation."""
        return ()

    async def prepare(self, ctx: PrepareContext) -> Mapping[str, Any] | None:
        """Nothing to prepare."""
        return None
