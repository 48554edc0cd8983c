"""The evaluator protocol: how any judge, grader or annotator plugs into the engine.

An evaluator says which subjects it judges (each answer on its own, or groups of answers
that it names), which aspects of a subject it records (criteria, fields, ...), and
evaluates one (subject, aspect) at a time, calling models only through the context it is
given. It returns a :class:`Verdict`; the engine turns that into a stored record and adds
the accounting (tokens, cost, latency, attempts, cache) of the calls it made.

Evaluators are created from a suite's ``judges:`` entries by factories registered under
the entry point group ``qualspec.evaluators`` (the built-ins are registered the same way),
or named by a dotted path ``package.module:factory``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

from qualspec.errors import ConfigError
from qualspec.plugins import Registry

if TYPE_CHECKING:
    from qualspec.engine._calls import Reply
    from qualspec.engine._items import WorkItem
    from qualspec.providers import Message
    from qualspec.spec import EvaluatorConfig
    from qualspec.store import ResponseRecord

__all__ = [
    "EVALUATOR_ENTRY_POINT_GROUP",
    "EvalContext",
    "Evaluator",
    "EvaluatorFactory",
    "Scope",
    "Subject",
    "Verdict",
    "available_evaluators",
    "create_evaluator",
    "evaluates",
    "group_subject_key",
    "uses_dependencies",
]

EVALUATOR_ENTRY_POINT_GROUP = "qualspec.evaluators"

Scope = Literal["response", "group"]


@dataclass(frozen=True, slots=True)
class Subject:
    """What one evaluation looks at.

    ``items`` and ``responses`` are parallel: the work items and their successful answers.
    For a response-scope evaluator there is one of each and ``key`` is the response key;
    for a group-scope evaluator they are every answered member of ``group`` and ``key``
    is derived from the members' keys (so a changed membership is a new subject).

    ``dependencies`` holds the answers of the items the subject's items depend on
    (``WorkItem.depends_on``, e.g. a candidate's reference answer), by item key; the
    evaluation waited for them. Empty for an evaluator with ``uses_dependencies = False``.
    """

    key: str
    items: tuple[WorkItem, ...]
    responses: tuple[ResponseRecord, ...]
    group: str | None = None
    dependencies: Mapping[str, ResponseRecord] = field(default_factory=dict)
    # the work items of ``dependencies``, by the same keys (their call keys, messages, ...)
    dependency_items: Mapping[str, WorkItem] = field(default_factory=dict)
    # the cache keys of ``dependencies`` (the call on its endpoint: the key a reference
    # answer is reviewed under), by the same keys
    dependency_call_keys: Mapping[str, str] = field(default_factory=dict)


@dataclass(slots=True)
class Verdict:
    """What an evaluator concluded about one aspect of one subject.

    ``score`` is None when the output could not be read (say why in ``unscored_reason``);
    ``error`` means a call failed: the record is kept and resume evaluates it again.
    ``passed`` defaults to ``score >= threshold`` when the evaluator has a threshold.
    ``scores`` holds several scores (per field, per response key) and ``details`` anything
    else worth keeping (a winner, an order seed, ...).
    """

    score: float | None = None
    passed: bool | None = None
    reasoning: str | None = None
    unscored_reason: str | None = None
    raw_text: str | None = None
    scores: dict[str, float | None] | None = None
    details: dict[str, Any] | None = None
    error: str | None = None


class EvalContext(Protocol):
    """What an evaluator may use: model calls through the engine, and where it runs."""

    run_id: str
    prompt_version: int | None

    async def complete(
        self,
        model: str,
        messages: Sequence[Message],
        *,
        temperature: float = 0.0,
        max_tokens: int | None = None,
        params: Mapping[str, Any] | None = None,
        json_schema: Mapping[str, Any] | None = None,
        attempt: int = 0,
        kind: str = "judge",
        structured_mode: str = "auto",
    ) -> Reply:
        """One model call (``provider/model``) with the run's limits, retries, cache, cost.

        ``attempt`` distinguishes deliberate re-asks (it is part of the cache key and the
        default seed), so a parse retry is not answered from the cache. With
        ``json_schema``, ``structured_mode`` is ``auto`` (negotiated per endpoint:
        ``json_schema``, then ``json_object``, then plain instructions) or one of them.
        """
        ...


@runtime_checkable
class Evaluator(Protocol):
    """An evaluator plugin (see the module docstring).

    Attributes:
        name: Unique within a run; records are stored under it.
        scope: ``"response"`` (each answer as soon as it exists) or ``"group"`` (waits for
            every answer of a group named by :meth:`group_of`).
        model: The ``provider/model`` it calls, or None when it calls none.
        threshold: Pass mark for ``score`` (0-10), or None.

    Two optional attributes (read with defaults, so older plugins need neither):
    ``kinds`` (default ``("candidate",)``), the kinds of work items it evaluates (add
    ``"reference"`` to see reference answers as subjects too); ``uses_dependencies``
    (default True), whether its subjects wait for the answers their items depend on and
    get them in ``Subject.dependencies`` (a failed dependency makes its evaluation an
    error record, evaluated again on resume). An evaluator that never reads them (the
    criteria judge, ``expect``) sets it False and is not held up by them.
    """

    name: str
    scope: Scope
    model: str | None
    threshold: float | None

    def prompt(self) -> tuple[str, str] | None:
        """``(name, template text)`` of its prompt, versioned by content in the store."""
        ...

    def group_of(self, item: WorkItem) -> str | None:
        """For group scope: the group an item belongs to (None: not evaluated)."""
        ...

    def aspects(self, items: Sequence[WorkItem]) -> tuple[str, ...]:
        """The aspects recorded for a subject made of ``items`` (one record each)."""
        ...

    async def evaluate(self, subject: Subject, aspect: str, ctx: EvalContext) -> Verdict:
        """Evaluate one aspect of one subject."""
        ...


EvaluatorFactory = Callable[["EvaluatorConfig"], Evaluator]


def evaluates(evaluator: Evaluator, item: WorkItem) -> bool:
    """Whether ``evaluator`` evaluates items of ``item``'s kind (its ``kinds``)."""
    kinds: Sequence[str] = getattr(evaluator, "kinds", None) or ("candidate",)
    return item.kind in kinds


def uses_dependencies(evaluator: Evaluator) -> bool:
    """Whether ``evaluator``'s subjects wait for (and get) their items' dependencies."""
    return bool(getattr(evaluator, "uses_dependencies", True))


def group_subject_key(evaluator: str, item_keys: Sequence[str]) -> str:
    """The subject key of a group: the evaluator's name and its members' keys, hashed."""
    text = "\x1f".join([evaluator, *sorted(item_keys)])
    return "g" + hashlib.sha256(text.encode()).hexdigest()[:31]


REGISTRY = Registry(
    EVALUATOR_ENTRY_POINT_GROUP,
    "evaluator type",
    "module:factory",
    "install its plugin or give module:factory",
)
"""The evaluator types: entry points ``qualspec.evaluators`` or ``module:factory``."""


def available_evaluators() -> list[str]:
    """Types of the registered evaluators (built-ins and plugins), sorted."""
    return REGISTRY.names()


def _load_factory(type_name: str) -> EvaluatorFactory:
    factory: Any = REGISTRY.load(type_name)
    return factory  # type: ignore[no-any-return]


def create_evaluator(config: EvaluatorConfig) -> Evaluator:
    """Create the evaluator a ``judges:`` entry describes.

    Raises:
        ConfigError: The type is unknown, cannot be loaded, or rejects its options.
    """
    evaluator = _load_factory(config.type)(config)
    if not isinstance(evaluator, Evaluator):
        raise ConfigError(
            f"evaluator type {config.type!r} returned {type(evaluator).__name__}, which lacks "
            "the Evaluator attributes (name, scope, model, threshold, prompt, group_of, "
            "aspects, evaluate)"
        )
    if evaluator.scope not in ("response", "group"):
        raise ConfigError(
            f"evaluator {evaluator.name!r}: scope must be 'response' or 'group', "
            f"got {evaluator.scope!r}"
        )
    return evaluator
