"""``PromptResponseTest``: a test's items run on SUTs through the engine, then measured.

A test run is a stored run like a suite's (its suite name is the test's name): the items'
prompts are the input rows of one scenario (``item-1/p1``, ``item-1/p2``, ...), each SUT a
candidate, each annotator an evaluator. So every call has the session's limits, retries,
cache, cost and budget, ``--resume`` finishes an interrupted test run, and ``qualspec runs``,
``runs show``, ``runs export`` and ``diff`` work on test runs as on suites. The
measurements and results are recorded in the run's metadata under ``test``.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from qualspec.errors import ConfigError, SpecError
from qualspec.testkit._annotators import PROMPT_SEPARATOR, Annotator
from qualspec.testkit._items import (
    Annotation,
    ItemResult,
    MeasuredItem,
    PromptResult,
    TestItem,
    mean_of,
)

if TYPE_CHECKING:
    from qualspec.engine import ExecuteOptions, ProgressFn, RunOutcome, Session
    from qualspec.spec import LoadedSuite, ProviderConfig
    from qualspec.store import JudgmentRecord, RunRecord

__all__ = ["PlannedPrompt", "PromptResponseTest", "TestRun"]

SCENARIO = "prompts"
"""The one scenario of a test run: the items' prompts are its input rows."""


@dataclass(frozen=True, slots=True)
class PlannedPrompt:
    """One call a test run would make: the SUT, the item and prompt it is for (``prompt_id``
    as stored: ``item-1/p1``), and the messages exactly as they would be sent."""

    sut: str
    item_id: str
    prompt_id: str
    messages: tuple[tuple[str, str], ...]  # (role, content)
    params: Mapping[str, Any] = field(default_factory=dict)
    temperature: float | None = None


@dataclass
class TestRun:
    """A finished test run: the stored run, and per SUT the measured items and results."""

    __test__ = False  # not a pytest test class

    run_id: str
    status: str
    results: dict[str, dict[str, float | None]]
    items: dict[str, list[MeasuredItem]]
    outcome: RunOutcome
    warnings: list[str] = field(default_factory=list)


class PromptResponseTest:
    """A test of single-turn prompts: subclass it and define the four steps.

    Example::

        class Capitals(PromptResponseTest):
            name = "capitals"
            def make_test_items(self):
                return [TestItem(["Capital of France? One word."], context="Paris")]
            def get_annotators(self):
                return {"refusal": RefusalAnnotator()}
            def measure_quality(self, item):
                return {"correct": float(item.context in item.texts[0])}

        outcome = Capitals().run(["local/smollm2"])
        print(outcome.results)          # {"local/smollm2": {"correct": 1.0}}

    Class attributes: ``name`` (the stored runs' suite name; default the class name),
    ``description``, ``max_tokens`` (per response; None: the provider's default) and
    ``temperature`` (None: none is sent).
    """

    __test__ = False  # not a pytest test class

    name: ClassVar[str] = ""
    description: ClassVar[str] = ""
    max_tokens: ClassVar[int | None] = 256
    temperature: ClassVar[float | None] = 0.0

    # ------------------------------------------------------------ the four steps

    def make_test_items(self) -> Sequence[TestItem]:
        """The test's items (prompts plus context)."""
        raise NotImplementedError(f"{type(self).__name__} must define make_test_items")

    def get_annotators(self) -> Mapping[str, Annotator]:
        """The annotators to run on the responses, by the name their annotations get."""
        return {}

    def measure_quality(self, item: ItemResult) -> dict[str, float]:
        """The measurements of one item's responses and annotations."""
        raise NotImplementedError(f"{type(self).__name__} must define measure_quality")

    def aggregate_measurements(self, items: Sequence[MeasuredItem]) -> dict[str, float | None]:
        """The results of one SUT from its measured items: by default the mean of each
        measurement."""
        names = dict.fromkeys(name for item in items for name in item.measurements)
        return {name: mean_of(items, name) for name in names}

    # ------------------------------------------------------------ running

    @classmethod
    def test_name(cls) -> str:
        """The name runs of this test are stored under."""
        return cls.name or cls.__name__

    def plan_prompts(
        self,
        suts: Sequence[str],
        *,
        limit: int | None = None,
        providers: Mapping[str, ProviderConfig] | None = None,
    ) -> list[PlannedPrompt]:
        """Every prompt a run of the test on ``suts`` would send, per SUT, before anything
        is sent (no call, no store): what ``qualspec test run --dry-run`` lists. Annotators'
        own model calls (a judge's) are not among them.

        Raises:
            ConfigError: As :meth:`arun` does (no SUT, no item, an unknown provider, ...).

        Example:
            >>> for p in MultipleChoiceTest().plan_prompts(["local/smollm2"], limit=1):
            ...     print(p.sut, p.prompt_id, p.messages[-1][1].splitlines()[0])
            local/smollm2 question-1/p1 What is the capital of France?
        """
        from qualspec.engine import expand

        suts = list(dict.fromkeys(suts))
        items = list(self.make_test_items())[:limit]
        ids = [item.id or f"item-{number}" for number, item in enumerate(items, 1)]
        plan = expand(self._suite(items, ids, suts, providers or {}))
        out = []
        for work in plan.items:
            if work.kind != "candidate":
                continue
            prompt_id = work.input_id or ""
            out.append(
                PlannedPrompt(
                    sut=work.candidate,
                    item_id=prompt_id.rsplit(PROMPT_SEPARATOR, 1)[0],
                    prompt_id=prompt_id,
                    messages=tuple((m.role, m.content) for m in work.messages),
                    params=dict(work.params),
                    temperature=work.temperature,
                )
            )
        order = {sut: n for n, sut in enumerate(suts)}
        prompt_order: dict[str, int] = {}
        for item_id, item in zip(ids, items, strict=True):
            for index in range(1, len(item.prompts) + 1):
                prompt_order[f"{item_id}{PROMPT_SEPARATOR}{index}"] = len(prompt_order)
        return sorted(out, key=lambda p: (order.get(p.sut, 0), prompt_order.get(p.prompt_id, 0)))

    def run(
        self,
        suts: Sequence[str],
        *,
        db: str | None = None,
        options: ExecuteOptions | None = None,
        providers: Mapping[str, ProviderConfig] | None = None,
        limit: int | None = None,
        resume: str | bool | None = None,
    ) -> TestRun:
        """Run the test on ``suts`` (``provider/model`` each) in a session of its own:
        synchronous :meth:`arun`."""
        from qualspec.engine import Session, run_sync

        async def main() -> TestRun:
            async with Session(db=db, options=options, providers=providers) as session:
                return await self.arun(session, suts, limit=limit, resume=resume)

        return run_sync(main)

    async def arun(
        self,
        session: Session,
        suts: Sequence[str],
        *,
        limit: int | None = None,
        resume: str | bool | None = None,
        progress: ProgressFn | None = None,
        argv: Sequence[str] | None = None,
    ) -> TestRun:
        """Run the test on ``suts`` in ``session``; ``limit`` keeps the first items only.

        Raises:
            ConfigError: No SUT, no item, an unknown provider, or an item without prompts.
        """
        from qualspec.engine import expand
        from qualspec.spec import EvaluatorConfig

        suts = list(dict.fromkeys(suts))  # a SUT named twice runs once
        items = list(self.make_test_items())[:limit]
        ids = [item.id or f"item-{number}" for number, item in enumerate(items, 1)]
        annotators = dict(self.get_annotators())
        loaded = self._suite(items, ids, suts, session.provider_configs)
        plan = expand(loaded)
        for key, annotator in annotators.items():
            annotator.name = key
        configs = tuple(
            EvaluatorConfig(
                type=f"{type(a).__module__}:{type(a).__qualname__}",
                name=key,
                model=a.model,
                options=a.describe(),
            )
            for key, a in annotators.items()
        )
        plan = dataclasses.replace(plan, judges=configs)
        try:
            outcome = await session.run_plan(
                loaded,
                plan,
                resume=resume,
                progress=progress,
                argv=argv,
                evaluators=list(annotators.values()),
            )
        except SpecError as exc:  # the suite is made here: name what the user gave
            raise _sut_error(exc, suts) from None
        measured = self._measure(items, ids, suts, outcome.record)
        results = {sut: self.aggregate_measurements(found) for sut, found in measured.items()}
        await asyncio.to_thread(
            session.store.update_run_metadata,
            outcome.run_id,
            {
                "test": {
                    "name": self.test_name(),
                    "class": f"{type(self).__module__}:{type(self).__qualname__}",
                    "suts": list(suts),
                    "results": results,
                    "measurements": {
                        sut: {m.result.item_id: dict(m.measurements) for m in found}
                        for sut, found in measured.items()
                    },
                }
            },
        )
        return TestRun(
            run_id=outcome.run_id,
            status=outcome.status,
            results=results,
            items=measured,
            outcome=outcome,
            warnings=list(outcome.warnings),
        )

    # ------------------------------------------------------------ internals

    def _suite(
        self,
        items: list[TestItem],
        ids: list[str],
        suts: Sequence[str],
        providers: Mapping[str, ProviderConfig],
    ) -> LoadedSuite:
        from qualspec.spec import Candidate, Evaluation, Scenario, load_evaluation

        name = self.test_name()
        if not suts:
            raise ConfigError(f"test {name!r}: give at least one SUT (--sut provider/model)")
        if not items:
            raise ConfigError(f"test {name!r} made no test items: make_test_items returned none")
        rows = []
        # a prompt's system prompt is sent as the system message: the prompts of one system
        # text form a scenario of their own (none: the one scenario "prompts", as always)
        by_system: dict[str | None, list[dict[str, str]]] = {}
        for item_id, item in zip(ids, items, strict=True):
            prompts = item.prompt_list()
            if not prompts:
                raise ConfigError(f"test {name!r}: item {item_id} has no prompts: give one or more")
            for index, prompt in enumerate(prompts, 1):
                row = {"id": f"{item_id}{PROMPT_SEPARATOR}{index}", "prompt": prompt.text}
                rows.append(row)
                by_system.setdefault(prompt.system, []).append(row)
        scenarios = [
            Scenario(
                name=SCENARIO if system is None else f"{SCENARIO}-system-{number}",
                prompt="{{ prompt }}",
                system_prompt=system,
                inputs=members,
            )
            for number, (system, members) in enumerate(by_system.items(), 1)
        ]
        ids = [row["id"] for row in rows]
        if len(set(ids)) != len(ids):
            raise ConfigError(f"test {name!r}: two test items have the same id: make them unique")
        params: dict[str, Any] = {}
        if self.max_tokens is not None:
            params["max_tokens"] = self.max_tokens
        evaluation = Evaluation(
            name=name,
            description=self.description,
            candidates=[Candidate(name=sut, model=sut, params=params) for sut in suts],
            scenarios=scenarios,
            temperatures=None if self.temperature is None else [self.temperature],
            providers=dict(providers),
        )
        try:
            return load_evaluation(evaluation, Path.cwd())
        except SpecError as exc:
            raise _sut_error(exc, suts) from None

    def _measure(
        self, items: list[TestItem], ids: list[str], suts: Sequence[str], record: RunRecord
    ) -> dict[str, list[MeasuredItem]]:
        by_response: dict[str, dict[str, Annotation]] = {}
        by_subject: dict[str, dict[str, Annotation]] = {}
        for judgment in record.judgments:
            annotation = _annotation(judgment)
            if judgment.subject is None:
                by_response.setdefault(judgment.response_key, {})[judgment.evaluator] = annotation
            else:
                for member in judgment.subject:
                    by_subject.setdefault(member, {})[judgment.evaluator] = annotation
        cells = {(r.candidate, r.input_id): r for r in record.responses}
        out: dict[str, list[MeasuredItem]] = {}
        for sut in suts:
            measured = []
            for item_id, item in zip(ids, items, strict=True):
                answers = []
                shared: dict[str, Annotation] = {}
                for index, given in enumerate(item.prompts_with_context(), 1):
                    prompt, context = given.as_prompt(), given.context
                    response = cells.get((sut, f"{item_id}{PROMPT_SEPARATOR}{index}"))
                    if response is None:
                        answers.append(
                            PromptResult(prompt, None, error="not answered", context=context)
                        )
                        continue
                    shared.update(by_subject.get(response.key, {}))
                    answers.append(
                        PromptResult(
                            prompt,
                            response.text if response.error is None else None,
                            annotations=by_response.get(response.key, {}),
                            error=response.error,
                            response_key=response.key,
                            context=context,
                        )
                    )
                result = ItemResult(item, item_id, sut, tuple(answers), shared)
                measured.append(MeasuredItem(result, dict(self.measure_quality(result))))
            out[sut] = measured
        return out


def _sut_error(exc: SpecError, suts: Sequence[str]) -> ConfigError:
    """A problem found in the suite made of a test, said of the SUT it comes from."""
    import re

    issue = exc.issues[0]
    found = re.fullmatch(r"candidates\[(\d+)\]\.model", issue.field)
    if found is not None and int(found.group(1)) < len(suts):
        return ConfigError(f"--sut {suts[int(found.group(1))]}: {issue.message}")
    return ConfigError(f"{issue.field}: {issue.message}" if issue.field else issue.message)


def _annotation(judgment: JudgmentRecord) -> Annotation:
    return Annotation(
        score=judgment.score,
        passed=judgment.passed,
        reasoning=judgment.reasoning,
        details=dict(judgment.details or {}),
        unscored_reason=judgment.unscored_reason,
        error=judgment.error,
    )
