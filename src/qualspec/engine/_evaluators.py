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

from qualspec.engine._hooks import HookDefaults
from qualspec.errors import ConfigError
from qualspec.plugins import Registry

if TYPE_CHECKING:
    from qualspec.engine._calls import Reply
    from qualspec.engine._hooks import Calibrated, PlannedCalls, PrepareContext
    from qualspec.engine._items import WorkItem
    from qualspec.providers import Message
    from qualspec.spec import EvaluatorConfig
    from qualspec.store import ResponseRecord

__all__ = [
    "EVALUATOR_ENTRY_POINT_GROUP",
    "EvalContext",
    "Evaluator",
    "EvaluatorCore",
    "EvaluatorFactory",
    "Scope",
    "Subject",
    "Verdict",
    "available_evaluators",
    "create_evaluator",
    "evaluates",
    "group_subject_key",
    "uses_dependencies",
    "with_defaults",
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


class EvaluatorCore(Protocol):
    """What an object needs to be an evaluator (see :class:`Evaluator`, which adds the
    members that have defaults: :func:`with_defaults` gives them)."""

    name: str
    scope: Scope
    model: str | None
    threshold: float | None

    def prompt(self) -> tuple[str, str] | None: ...

    def group_of(self, item: WorkItem) -> str | None: ...

    def aspects(self, items: Sequence[WorkItem]) -> tuple[str, ...]: ...

    async def evaluate(self, subject: Subject, aspect: str, ctx: EvalContext) -> Verdict: ...


@runtime_checkable
class Evaluator(Protocol):
    """An evaluator plugin (see the module docstring).

    Attributes:
        name: Unique within a run; records are stored under it.
        scope: ``"response"`` (each answer as soon as it exists) or ``"group"`` (waits for
            every answer of a group named by :meth:`group_of`).
        model: The ``provider/model`` it calls, or None when it calls none.
        threshold: Pass mark for ``score`` (0-10), or None.
        kinds: The kinds of work items it evaluates (``("candidate",)``; add
            ``"reference"`` to see reference answers as subjects too).
        uses_dependencies: Whether its subjects wait for the answers their items depend
            on and get them in ``Subject.dependencies`` (a failed dependency makes its
            evaluation an error record, evaluated again on resume). An evaluator that
            never reads them (the criteria judge, ``expect``) says False and is not held
            up by them.
        scores_criteria: Whether its aspects are each answer's criteria (the suite's
            ``criteria:``, ``rubric:`` and ``at_temperature:``), as the criteria judge's
            are. Such an evaluator is left out of a run whose answers have no criteria
            (nothing to call, prepare or check), a judged run with one refuses scenarios
            with nothing to judge, and its calls are the plan's ``judge_calls``.

    Besides evaluating, it says what it plans (:meth:`planned_calls`,
    :meth:`planned_preparation`: what ``--dry-run`` counts) and may prepare before the
    run's evaluations (:meth:`prepare`: the criteria judge and the field grader measure
    themselves on known pairs there, alongside the run's first calls).

    The engine knows evaluators through these members only. An object with the members
    up to :meth:`evaluate` is an evaluator too (plugins written before the others
    existed): :func:`with_defaults` gives it the defaults (``kinds``
    ``("candidate",)``, ``uses_dependencies`` True, ``scores_criteria`` False, one call
    per aspect, no preparation).
    """

    name: str
    scope: Scope
    model: str | None
    threshold: float | None
    kinds: Sequence[str]
    uses_dependencies: bool
    scores_criteria: bool

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

    def planned_calls(self, items: Sequence[WorkItem]) -> Sequence[PlannedCalls]:
        """The model calls it plans for the subject made of ``items`` (none: empty)."""
        ...

    def planned_preparation(
        self, *, calibrate: bool, calibrated: Calibrated | None
    ) -> Sequence[PlannedCalls]:
        """The model calls :meth:`prepare` plans (``calibrate``: the run measures its
        judges; ``calibrated(self, pairs)``: a measurement is cached, so none is made)."""
        ...

    async def prepare(self, ctx: PrepareContext) -> Mapping[str, Any] | None:
        """Run once before the run's evaluations need it (concurrently with the run's
        calls); what it returns is recorded in the run's metadata under
        ``judge_calibration`` by the evaluator's name (None: nothing)."""
        ...


CORE_MEMBERS = ("name", "scope", "model", "threshold", "prompt", "group_of", "aspects", "evaluate")
"""What an object needs to be an evaluator; :func:`with_defaults` adds the rest."""


def default_planned_calls(evaluator: Any, items: Sequence[WorkItem]) -> Sequence[PlannedCalls]:
    """The calls an evaluator that declares none plans, as the dry run always counted them:
    none without a model; else one call per aspect (a group: one comparison of every
    member's answer per aspect), each asked again up to its ``parse_retries``."""
    from qualspec.engine._hooks import (
        JUDGE_OUTPUT_TOKENS,
        JUDGE_PROMPT_TOKENS,
        PER_MESSAGE_TOKENS,
        PlannedCalls,
        answer_tokens,
        judged_tokens,
        message_tokens,
    )

    aspects = evaluator.aspects(items)
    if not aspects or evaluator.model is None:
        return ()
    # an older plugin's ``parse_retries``, as the dry run always read it
    retries = max(int(getattr(evaluator, "parse_retries", 0) or 0), 0)
    if evaluator.scope == "group":  # one comparison of every member's answer
        calls = len(aspects) * int(getattr(evaluator, "calls_per_subject", 1))
        tokens_in = JUDGE_PROMPT_TOKENS + sum(
            message_tokens(i) - PER_MESSAGE_TOKENS + answer_tokens(i) for i in items
        )
        return (PlannedCalls(calls, tokens_in, JUDGE_OUTPUT_TOKENS, retries, "compare"),)
    tokens_in = JUDGE_PROMPT_TOKENS + judged_tokens(items[0])
    return (PlannedCalls(len(aspects), tokens_in, JUDGE_OUTPUT_TOKENS, retries),)


class _WithDefaults(HookDefaults):
    """An evaluator with only some members, given the protocol's defaults for the others
    (the members it has stay its own)."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.kinds: Sequence[str] = ("candidate",)
        self.uses_dependencies = True
        self.scores_criteria = False

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def planned_calls(self, items: Sequence[WorkItem]) -> Sequence[PlannedCalls]:
        own = getattr(self._inner, "planned_calls", None)
        return own(items) if own is not None else default_planned_calls(self._inner, items)

    def planned_preparation(
        self, *, calibrate: bool, calibrated: Calibrated | None
    ) -> Sequence[PlannedCalls]:
        own = getattr(self._inner, "planned_preparation", None)
        if own is None:
            return ()
        found: Sequence[PlannedCalls] = own(calibrate=calibrate, calibrated=calibrated)
        return found

    async def prepare(self, ctx: PrepareContext) -> Mapping[str, Any] | None:
        own = getattr(self._inner, "prepare", None)
        if own is None:
            return None
        found: Mapping[str, Any] | None = await own(ctx)
        return found


def with_defaults(evaluator: EvaluatorCore) -> Evaluator:
    """``evaluator`` itself when it has every member of :class:`Evaluator`; an object with
    the core members (:data:`CORE_MEMBERS`) gets the defaults of the others (``kinds``
    ``("candidate",)``, ``uses_dependencies`` True, ``scores_criteria`` False, one call
    per aspect, no preparation) from a wrapper that passes everything else through (the
    members it has, an evaluator written before ``scores_criteria`` existed included,
    stay its own).

    Raises:
        ConfigError: A core member is missing.
    """
    if isinstance(evaluator, Evaluator):
        return evaluator
    missing = [m for m in CORE_MEMBERS if not hasattr(evaluator, m)]
    if missing:
        raise ConfigError(
            f"{type(evaluator).__name__} lacks the Evaluator attributes {', '.join(missing)} "
            f"(an evaluator has {', '.join(CORE_MEMBERS)})"
        )
    wrapped = _WithDefaults(evaluator)
    for name in ("kinds", "uses_dependencies", "scores_criteria"):  # declared: its own
        if hasattr(evaluator, name):
            setattr(wrapped, name, getattr(evaluator, name))
    kinds = wrapped.kinds or ("candidate",)
    wrapped.kinds = tuple(kinds)
    found: Evaluator = wrapped  # its other members: __getattr__
    return found


EvaluatorFactory = Callable[["EvaluatorConfig"], Evaluator]


def evaluates(evaluator: Evaluator, item: WorkItem) -> bool:
    """Whether ``evaluator`` evaluates items of ``item``'s kind (its ``kinds``)."""
    return item.kind in evaluator.kinds


def uses_dependencies(evaluator: Evaluator) -> bool:
    """Whether ``evaluator``'s subjects wait for (and get) their items' dependencies."""
    return bool(evaluator.uses_dependencies)


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
    made = _load_factory(config.type)(config)
    if not all(hasattr(made, m) for m in CORE_MEMBERS):
        raise ConfigError(
            f"evaluator type {config.type!r} returned {type(made).__name__}, which lacks "
            "the Evaluator attributes (name, scope, model, threshold, prompt, group_of, "
            "aspects, evaluate)"
        )
    evaluator = with_defaults(made)
    if evaluator.scope not in ("response", "group"):
        raise ConfigError(
            f"evaluator {evaluator.name!r}: scope must be 'response' or 'group', "
            f"got {evaluator.scope!r}"
        )
    return evaluator
