"""Annotators: evaluators that describe a test's responses (``get_annotators``).

An annotator is an engine evaluator (:class:`qualspec.engine.Evaluator`): it runs on each
answer as soon as it exists (or, for an item-scope annotator, on all the answers of an item),
calls models only through the engine (limits, retries, cache, cost), and its annotations
are stored as the run's evaluation records, so a resumed test run does not redo them. The
LLM judge is the criteria judge's machinery; the regex, keyword, refusal and JSON-schema
annotators are the ``expect:`` checks' code; the similarity annotator is the analysis'
similarity.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from qualspec.engine import EvalContext, Scope, Subject, Verdict, WorkItem

__all__ = [
    "Annotator",
    "JSONSchemaAnnotator",
    "KeywordAnnotator",
    "LLMJudgeAnnotator",
    "RefusalAnnotator",
    "RegexAnnotator",
    "SimilarityAnnotator",
    "item_id_of",
]

PROMPT_SEPARATOR = "/p"
"""Between an item's id and its prompt's number in a test's input ids (``item-1/p2``)."""


def item_id_of(item: WorkItem) -> str:
    """The test item a work item of a test run answers (from its input id)."""
    return (item.input_id or "").rpartition(PROMPT_SEPARATOR)[0]


class Annotator:
    """The base of the annotators: a response-scope evaluator that calls no model.

    Subclasses set ``aspect`` (the record's label) and implement :meth:`annotate`; the
    test gives each annotator its name (its key in ``get_annotators``).
    """

    scope: Scope = "response"
    uses_dependencies = False
    aspect = "annotation"

    def __init__(self) -> None:
        self.name = type(self).__name__
        self.model: str | None = None
        self.threshold: float | None = None

    def prompt(self) -> tuple[str, str] | None:
        """No prompt to version."""
        return None

    def group_of(self, item: WorkItem) -> str | None:
        """Not an item-scope annotator."""
        return None

    def aspects(self, items: Sequence[WorkItem]) -> tuple[str, ...]:
        """One record per response."""
        return (self.aspect,)

    def annotate(self, text: str) -> Verdict:
        """The annotation of one response text."""
        raise NotImplementedError

    async def evaluate(self, subject: Subject, aspect: str, ctx: EvalContext) -> Verdict:
        """Annotate the subject's response."""
        return self.annotate(subject.responses[0].text or "")

    def describe(self) -> dict[str, Any]:
        """What the run's metadata records about it."""
        return {"aspect": self.aspect}


def _texts(owner: str, param: str, value: Any) -> list[str]:
    """A string or a sequence of strings as a list, each non-empty; TypeError/ValueError
    naming ``owner(param=...)`` otherwise (at construction, not deep in a run)."""
    if isinstance(value, str):
        items: list[Any] = [value]
    elif isinstance(value, Sequence) and not isinstance(value, bytes | bytearray):
        items = list(value)
    else:
        raise TypeError(
            f"{owner}: {param} must be a string or a list of strings, got {type(value).__name__}"
        )
    if not items:
        raise ValueError(f"{owner}: {param} is empty: give at least one")
    for item in items:
        if not isinstance(item, str):
            raise TypeError(
                f"{owner}: each of {param} must be a string, got {type(item).__name__} ({item!r})"
            )
        if not item.strip():
            raise ValueError(f"{owner}: {param} has an empty string: remove it or fill it in")
    return items


def _threshold(owner: str, value: Any, top: float = 10.0) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"{owner}: threshold must be a number, got {type(value).__name__}")
    if not 0 <= value <= top:
        raise ValueError(f"{owner}: threshold must be between 0 and {top:g}, got {value:g}")
    return float(value)


def _check(name: str, value: Any, text: str, details: dict[str, Any] | None = None) -> Verdict:
    from qualspec.engine import Verdict
    from qualspec.judges import run_check

    ok, reason = run_check(name, value, text)
    return Verdict(score=10.0 if ok else 0.0, passed=ok, reasoning=reason, details=details)


class RegexAnnotator(Annotator):
    """Whether a response matches a regular expression; ``details["match"]`` holds the
    first match (its first group when the pattern has one).

    Example: ``RegexAnnotator(r"\\b([A-D])\\b")`` reads a multiple-choice letter.
    """

    def __init__(self, pattern: str, *, flags: int = 0) -> None:
        import re

        super().__init__()
        if not isinstance(pattern, str | re.Pattern):
            raise TypeError(
                f"RegexAnnotator: pattern must be a string, got {type(pattern).__name__}"
            )
        try:
            self.pattern = re.compile(pattern, flags)
        except re.error as exc:
            raise ValueError(f"RegexAnnotator: invalid pattern {pattern!r}: {exc}") from None
        self.aspect = f"regex {pattern}"

    def annotate(self, text: str) -> Verdict:
        """Search the response."""
        match = self.pattern.search(text)
        found = None
        if match is not None:
            found = match.group(1) if self.pattern.groups else match.group(0)
        return _check("regex", self.pattern.pattern, text, {"match": found})


class KeywordAnnotator(Annotator):
    """Which of ``keywords`` a response contains (case-insensitive, whole words):
    ``details["found"]`` lists them in keyword order; it passes when one is found.

    Example: ``KeywordAnnotator(["nurse", "doctor"])``.
    """

    def __init__(self, keywords: str | Sequence[str]) -> None:
        super().__init__()
        if not keywords:
            raise ValueError("KeywordAnnotator needs at least one keyword")
        # one keyword given as a string is one keyword, not its letters
        self.keywords = _texts("KeywordAnnotator", "keywords", keywords)
        self.aspect = "keywords " + ", ".join(self.keywords)

    def annotate(self, text: str) -> Verdict:
        """Find the keywords."""
        from qualspec.engine import Verdict

        found = find_keywords(text, self.keywords)
        reason = f"found {', '.join(found)}" if found else "no keyword found"
        return Verdict(
            score=10.0 if found else 0.0,
            passed=bool(found),
            reasoning=reason,
            details={"found": found},
        )


def find_keywords(text: str, keywords: Sequence[str]) -> list[str]:
    """The keywords ``text`` contains as whole words (any case), in keyword order.

    Example:
        >>> find_keywords("She is a Nurse.", ["nurse", "doctor"])
        ['nurse']
    """
    import re

    return [
        word
        for word in keywords
        if re.search(rf"(?<!\w){re.escape(word)}(?!\w)", text, re.IGNORECASE) is not None
    ]


class RefusalAnnotator(Annotator):
    """Whether a response refuses (the ``expect: refusal`` check's phrases), in
    ``details["refused"]`` (score 10 when it refuses, else 0). An annotation, not a verdict:
    ``passed`` is set only with ``expected`` (True: it should refuse; False: it should not).
    """

    aspect = "refusal"

    def __init__(self, expected: bool | None = None) -> None:
        super().__init__()
        if expected is not None and not isinstance(expected, bool):
            raise TypeError(
                f"RefusalAnnotator: expected must be True, False or None, got {expected!r}"
            )
        self.expected = expected

    def annotate(self, text: str) -> Verdict:
        """Look for a refusal."""
        from qualspec.engine import Verdict
        from qualspec.judges import looks_like_refusal

        refused = looks_like_refusal(text)
        return Verdict(
            score=10.0 if refused else 0.0,
            passed=None if self.expected is None else refused == self.expected,
            reasoning="the answer refuses" if refused else "no refusal",
            details={"refused": refused},
        )


class JSONSchemaAnnotator(Annotator):
    """Whether a response is JSON (bare or fenced) matching ``schema`` (the ``expect:
    json_schema`` check's subset of JSON Schema)."""

    def __init__(self, schema: Mapping[str, Any]) -> None:
        super().__init__()
        if not isinstance(schema, Mapping):
            raise TypeError(
                f"JSONSchemaAnnotator: schema must be a mapping (a JSON Schema object), got "
                f"{type(schema).__name__}"
            )
        self.schema = dict(schema)
        self.aspect = "json_schema"

    def annotate(self, text: str) -> Verdict:
        """Validate the response."""
        return _check("json_schema", self.schema, text)

    def describe(self) -> dict[str, Any]:
        """The schema, with the aspect."""
        return {"aspect": self.aspect, "schema": self.schema}


class SimilarityAnnotator(Annotator):
    """How alike the responses of one test item are (mean pairwise similarity, 0-1, in
    ``details["similarity"]``; the score is it times 10): an item-scope annotator, one
    annotation per item and SUT. ``method`` is ``lexical`` (default) or ``embeddings``."""

    scope: Scope = "group"
    aspect = "similarity"

    def __init__(self, method: str = "lexical", *, threshold: float | None = None) -> None:
        super().__init__()
        if method not in ("lexical", "embeddings"):
            raise ValueError(f"unknown similarity {method!r}: use lexical or embeddings")
        self.method = method
        self.threshold = _threshold("SimilarityAnnotator", threshold)

    def group_of(self, item: WorkItem) -> str | None:
        """The responses of one item from one SUT at one temperature and run."""
        return "\x1f".join(
            [item.candidate, item_id_of(item), str(item.temperature), str(item.run_index)]
        )

    async def evaluate(self, subject: Subject, aspect: str, ctx: EvalContext) -> Verdict:
        """Compare the item's responses."""
        import asyncio

        from qualspec.analysis import mean_pairwise_similarity
        from qualspec.engine import Verdict

        texts = [r.text or "" for r in subject.responses]
        value = await asyncio.to_thread(mean_pairwise_similarity, texts, self.method)
        if value is None:
            return Verdict(unscored_reason="fewer than two responses to compare")
        return Verdict(
            score=round(value * 10, 4),
            reasoning=f"mean pairwise {self.method} similarity {value:.3f}",
            details={"similarity": value, "method": self.method},
        )

    def describe(self) -> dict[str, Any]:
        """The method, with the aspect."""
        return {"aspect": self.aspect, "method": self.method}


class LLMJudgeAnnotator(Annotator):
    """A judge model's 0-10 score of each response on ``criteria`` (with its reasoning),
    asked for as structured output and parsed strictly: the criteria judge of suites.

    ``criteria`` is one criterion, or a list of them judged together: one call and one
    score per response, on every criterion at once (listed one per line to the judge), so
    that the annotator still gives one annotation per response. For a score per criterion,
    give one annotator per criterion. Every parameter is checked here: a wrong type or
    value raises ``TypeError``/``ValueError`` at once, never in the middle of a run.

    Example: ``LLMJudgeAnnotator("Answers in a neutral tone", model="openai/gpt-4o-mini")``,
    ``LLMJudgeAnnotator(["names Paris", "is one sentence"])``.
    """

    def __init__(
        self,
        criteria: str | Sequence[str],
        *,
        model: str | None = None,
        threshold: float | None = None,
        params: Mapping[str, Any] | None = None,
    ) -> None:
        from qualspec.judges import CriteriaJudge
        from qualspec.spec import DEFAULT_JUDGE_MODEL, DEFAULT_THRESHOLD

        super().__init__()
        owner = "LLMJudgeAnnotator"
        items = _texts(owner, "criteria", criteria)
        if model is not None:
            if not isinstance(model, str):
                raise TypeError(
                    f"{owner}: model must be a 'provider/model' string, got {type(model).__name__}"
                )
            from qualspec.errors import ConfigError
            from qualspec.providers import split_address

            try:
                split_address(model)
            except ConfigError as exc:
                raise ValueError(f"{owner}: model: {exc}") from None
        if params is not None and not isinstance(params, Mapping):
            raise TypeError(
                f"{owner}: params must be a mapping (e.g. {{'max_tokens': 200}}), got "
                f"{type(params).__name__}"
            )
        self.criteria: str | list[str] = items[0] if isinstance(criteria, str) else items
        # the criterion the judge reads: one, or the list one per line
        self._criterion = items[0] if len(items) == 1 else "\n".join(f"- {c}" for c in items)
        self.aspect = items[0] if len(items) == 1 else "; ".join(items)
        self.model = model or DEFAULT_JUDGE_MODEL
        limit = _threshold(owner, threshold)
        self.threshold = DEFAULT_THRESHOLD if limit is None else limit
        self.judge = CriteriaJudge(
            name="criteria", model=self.model, threshold=self.threshold, params=params
        )

    def prompt(self) -> tuple[str, str] | None:
        """The criteria judge's template (versioned in the store)."""
        return self.judge.prompt()

    async def evaluate(self, subject: Subject, aspect: str, ctx: EvalContext) -> Verdict:
        """Judge the response on the criteria."""
        return await self.judge.evaluate(subject, self._criterion, ctx)

    def describe(self) -> dict[str, Any]:
        """The criteria and the judge."""
        return {"aspect": self.aspect, "model": self.model, "threshold": self.threshold}
