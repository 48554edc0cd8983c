"""The small seam: an evaluator written as one decorated async function.

::

    import qualspec

    @qualspec.evaluator(scope="response")
    async def short(subject, ctx):
        \"\"\"At most 50 words.\"\"\"
        words = len((subject.responses[0].text or "").split())
        return qualspec.Verdict(score=10.0 if words <= 50 else 0.0, reasoning=f"{words} words")

``short`` is then an evaluator factory: name it in a suite's ``judges:`` as
``{type: "my_module:short"}`` or register it under the entry point group
``qualspec.evaluators``. The function gets the :class:`Subject` (one answer, or a group's
answers) and a :class:`FunctionContext`, whose ``complete`` calls a model through the
run's engine (limits, retries, cache, cost); it returns a :class:`Verdict`, a score
(0-10) or a bool (passed: 10, failed: 0).

:class:`BaseEvaluator` is the same evaluator as a class with defaults for everything, for
the rare evaluator that needs more (several aspects, a versioned prompt, its own groups).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Self, overload

from qualspec.engine._evaluators import (
    EvalContext,
    Scope,
    Subject,
    Verdict,
    default_planned_calls,
)
from qualspec.engine._hooks import HookDefaults
from qualspec.errors import ConfigError

if TYPE_CHECKING:
    from qualspec.engine._calls import Reply
    from qualspec.engine._hooks import PlannedCalls
    from qualspec.engine._items import WorkItem
    from qualspec.providers import Message
    from qualspec.spec import EvaluatorConfig

__all__ = [
    "BaseEvaluator",
    "DecoratedEvaluator",
    "EvaluateFn",
    "FunctionContext",
    "FunctionEvaluator",
    "evaluator",
]


@dataclass(frozen=True, slots=True)
class FunctionContext:
    """What a decorated evaluator's function is given beside its subject.

    Attributes:
        evaluator: The evaluator running it (``name``, ``model``, ``threshold``,
            ``options``: the ``judges:`` entry's ``options``).
        aspect: The aspect being evaluated.
        engine: The engine's context (:class:`EvalContext`), for anything else.
    """

    evaluator: BaseEvaluator
    aspect: str
    engine: EvalContext

    @property
    def run_id(self) -> str:
        """The run being evaluated."""
        return self.engine.run_id

    async def complete(
        self,
        prompt: str | Sequence[Message],
        *,
        model: str | None = None,
        **settings: Any,
    ) -> Reply:
        """One model call through the run's engine (``EvalContext.complete``).

        ``prompt`` is the user message, or the messages; ``model`` defaults to the
        evaluator's (the ``judges:`` entry's ``model``); ``settings`` are
        ``EvalContext.complete``'s (``temperature``, ``max_tokens``, ``json_schema``,
        ``attempt``, ``kind``, ...). The reply's ``text`` is the answer, its ``error`` set
        when the call failed.
        """
        from qualspec.providers import Message

        address = model or self.evaluator.model
        if address is None:
            raise ConfigError(
                f"evaluator {self.evaluator.name!r} calls a model but has none: give its "
                "judges: entry a model (provider/model)"
            )
        messages = (Message("user", prompt),) if isinstance(prompt, str) else tuple(prompt)
        return await self.engine.complete(address, messages, **settings)


def _cell(item: WorkItem) -> str | None:
    """One group per cell of the matrix without its temperature and run."""
    return "/".join((item.scenario, item.input_id or "", item.role or "", item.candidate))


class BaseEvaluator(HookDefaults):
    """An evaluator with a default for everything but :meth:`evaluate`.

    A subclass sets ``scope`` (``"response"`` by default) and overrides ``evaluate``;
    the rest has defaults: one aspect named after the evaluator, no prompt to version,
    groups per matrix cell (scenario, input, role, candidate: every temperature and run
    of one answer) for group scope, candidate answers only (``kinds``), subjects that
    wait for their dependencies (``uses_dependencies``), one model call per aspect
    planned when it has a model (none without), and nothing to prepare. It is built from
    a ``judges:`` entry by ``create``, which is the factory to register::

        class Longest(qualspec.BaseEvaluator):
            scope = "group"

            async def evaluate(self, subject, aspect, ctx):
                ...

        # pyproject.toml: [project.entry-points."qualspec.evaluators"]
        # longest = "my_package:Longest.create"
    """

    scope: Scope = "response"

    def __init__(
        self,
        name: str,
        *,
        model: str | None = None,
        threshold: float | None = None,
        options: Mapping[str, Any] | None = None,
    ) -> None:
        self.name = name
        self.model = model
        self.threshold = threshold
        self.options: Mapping[str, Any] = dict(options or {})

    @classmethod
    def create(cls, config: EvaluatorConfig) -> Self:
        """The evaluator a ``judges:`` entry describes (its name, model, threshold and
        options): the factory to register."""
        return cls(
            config.label, model=config.model, threshold=config.threshold, options=config.options
        )

    def prompt(self) -> tuple[str, str] | None:
        """No prompt to version."""
        return None

    def group_of(self, item: WorkItem) -> str | None:
        """For group scope: one group per matrix cell across temperatures and runs."""
        return _cell(item) if self.scope == "group" else None

    def aspects(self, items: Sequence[WorkItem]) -> tuple[str, ...]:
        """One aspect, named after the evaluator."""
        return (self.name,)

    def planned_calls(self, items: Sequence[WorkItem]) -> Sequence[PlannedCalls]:
        """The model calls it plans for the subject made of ``items`` (``--dry-run`` and
        the cost estimate): none without a model, else one per aspect (a group: one
        comparison of every member's answer)."""
        return default_planned_calls(self, items)

    async def evaluate(self, subject: Subject, aspect: str, ctx: EvalContext) -> Verdict:
        """Evaluate one aspect of one subject (override it)."""
        raise NotImplementedError(f"{type(self).__name__}.evaluate")


EvaluateFn = Callable[[Subject, FunctionContext], Awaitable["Verdict | float | bool"]]
"""A decorated evaluator's function: ``async def f(subject, ctx) -> Verdict``."""


def as_verdict(result: Verdict | float | bool, name: str) -> Verdict:
    """A function's result as a verdict: a bool passes (10) or fails (0), a number is the
    score."""
    if isinstance(result, Verdict):
        return result
    if isinstance(result, bool):
        return Verdict(score=10.0 if result else 0.0, passed=result)
    if isinstance(result, int | float):
        return Verdict(score=float(result))
    raise TypeError(
        f"evaluator {name!r} returned {type(result).__name__}: return a qualspec.Verdict, a "
        "score (0-10) or a bool"
    )


class FunctionEvaluator(BaseEvaluator):
    """The evaluator a decorated function becomes (see :func:`evaluator`)."""

    def __init__(
        self,
        fn: EvaluateFn,
        name: str,
        *,
        scope: Scope,
        aspect: str,
        group_by: Callable[[WorkItem], str | None] | None,
        min_answers: int,
        kinds: tuple[str, ...],
        uses_dependencies: bool,
        model: str | None = None,
        threshold: float | None = None,
        options: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(name, model=model, threshold=threshold, options=options)
        self.fn = fn
        self.scope = scope
        self.aspect = aspect
        self.group_by = group_by or _cell
        self.min_answers = min_answers
        self.kinds = kinds
        self.uses_dependencies = uses_dependencies

    def group_of(self, item: WorkItem) -> str | None:
        """For group scope: the group ``group_by`` names (default: the matrix cell)."""
        return self.group_by(item) if self.scope == "group" else None

    def aspects(self, items: Sequence[WorkItem]) -> tuple[str, ...]:
        """Its one aspect, for a subject of at least ``min_answers`` answers."""
        return (self.aspect,) if len(items) >= self.min_answers else ()

    async def evaluate(self, subject: Subject, aspect: str, ctx: EvalContext) -> Verdict:
        """The function's verdict on the subject."""
        return as_verdict(await self.fn(subject, FunctionContext(self, aspect, ctx)), self.name)


@dataclass
class DecoratedEvaluator:
    """What ``@evaluator`` makes of a function: a factory of :class:`FunctionEvaluator`
    from a ``judges:`` entry (register it, or name it as ``module:function``)."""

    fn: EvaluateFn
    scope: Scope
    name: str
    aspect: str
    group_by: Callable[[WorkItem], str | None] | None
    min_answers: int
    kinds: tuple[str, ...]
    uses_dependencies: bool

    def __call__(self, config: EvaluatorConfig) -> FunctionEvaluator:
        """The evaluator for one ``judges:`` entry: named by its ``name``, else by its
        registered type, else (a ``module:function`` type) by the decorator's name."""
        default = self.name if ":" in config.type else config.type
        return FunctionEvaluator(
            self.fn,
            config.name or default,
            scope=self.scope,
            aspect=self.aspect,
            group_by=self.group_by,
            min_answers=self.min_answers,
            kinds=self.kinds,
            uses_dependencies=self.uses_dependencies,
            model=config.model,
            threshold=config.threshold,
            options=config.options,
        )


@overload
def evaluator(fn: EvaluateFn, /) -> DecoratedEvaluator: ...


@overload
def evaluator(
    *,
    scope: Scope = "response",
    name: str | None = None,
    aspect: str | None = None,
    group_by: Callable[[WorkItem], str | None] | None = None,
    min_answers: int = 1,
    kinds: Sequence[str] = ("candidate",),
    uses_dependencies: bool = True,
) -> Callable[[EvaluateFn], DecoratedEvaluator]: ...


def evaluator(
    fn: EvaluateFn | None = None,
    /,
    *,
    scope: Scope = "response",
    name: str | None = None,
    aspect: str | None = None,
    group_by: Callable[[WorkItem], str | None] | None = None,
    min_answers: int = 1,
    kinds: Sequence[str] = ("candidate",),
    uses_dependencies: bool = True,
) -> DecoratedEvaluator | Callable[[EvaluateFn], DecoratedEvaluator]:
    """Make an evaluator of ``async def f(subject, ctx) -> Verdict`` (see the module).

    Args:
        scope: ``"response"`` (each answer as soon as it exists) or ``"group"`` (the
            answers of a group, once all exist).
        name: Its default name in reports (a ``judges:`` entry's ``name`` wins); default:
            the function's name.
        aspect: The label of its records; default: the function's name.
        group_by: For group scope, the group of a work item (None: not evaluated);
            default: the matrix cell (scenario, input, role, candidate).
        min_answers: Evaluate only subjects of at least this many answers (2 for a
            comparison within a group).
        kinds: The kinds of work items it evaluates (add ``"reference"`` for reference
            answers).
        uses_dependencies: Whether its subjects wait for the answers their items depend
            on (a reference answer) and get them in ``subject.dependencies``.

    Returns:
        An evaluator factory (``EvaluatorConfig -> Evaluator``).
    """
    if scope not in ("response", "group"):
        raise ValueError(f"evaluator scope must be 'response' or 'group', got {scope!r}")

    def wrap(function: EvaluateFn) -> DecoratedEvaluator:
        label = getattr(function, "__name__", "evaluator")
        factory = DecoratedEvaluator(
            function,
            scope,
            name or label,
            aspect or label,
            group_by,
            min_answers,
            tuple(kinds),
            uses_dependencies,
        )
        for attr in ("__module__", "__name__", "__qualname__", "__doc__"):
            if hasattr(function, attr):
                setattr(factory, attr, getattr(function, attr))
        return factory

    return wrap(fn) if fn is not None else wrap
