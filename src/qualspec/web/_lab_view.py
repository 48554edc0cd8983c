"""What the Lab's pages show besides the iterations: the changes from one iteration to the
next (a word diff), the score trend (an SVG drawn by the server, no inline style), and
errors said in the Lab's own terms (its Model and Evaluator fields, the environment
variables of ``qualspec serve``), never in a suite's (the Lab has no suite).

The streamed Lab (``lab.js``) gets the same diff in each ``iteration`` event (key
``changes``) and the same explained error (key ``error``), so the page and the server
never disagree.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from qualspec.lab import GenerateAnswerRequest, GenerateAnswerResponse, IterationData

__all__ = [
    "Bar",
    "Trend",
    "explain",
    "explained",
    "iteration_event",
    "iteration_views",
    "page_context",
    "stored_request",
    "trend",
    "word_diff",
]

_TOKEN = re.compile(r"\s+|\w+|[^\w\s]")
MAX_DIFF_TOKENS = 20_000  # past this, the diff is by line (difflib is quadratic at worst)


def word_diff(before: str, after: str) -> list[tuple[str, str]]:
    """``after`` against ``before`` as ``(op, text)`` pieces: ``=`` kept, ``-`` removed,
    ``+`` added (by word and punctuation; by line for very long answers)."""
    a, b = _TOKEN.findall(before), _TOKEN.findall(after)
    if len(a) + len(b) > MAX_DIFF_TOKENS:
        a, b = before.splitlines(keepends=True), after.splitlines(keepends=True)
    pieces: list[tuple[str, str]] = []

    def add(op: str, text: str) -> None:
        if not text:
            return
        if pieces and pieces[-1][0] == op:
            pieces[-1] = (op, pieces[-1][1] + text)
        else:
            pieces.append((op, text))

    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            add("=", "".join(a[i1:i2]))
        else:
            add("-", "".join(a[i1:i2]))
            add("+", "".join(b[j1:j2]))
    return pieces


def _words(pieces: list[tuple[str, str]], op: str) -> int:
    return sum(len(re.findall(r"\w+", text)) for o, text in pieces if o == op)


@dataclass(frozen=True, slots=True)
class Bar:
    """One iteration in the trend: its bar (SVG units) and what it says."""

    number: int
    x: float
    y: float
    height: float
    kind: str  # "pass", "fail", "unscored", "error"
    label: str
    best: bool


@dataclass(frozen=True, slots=True)
class Trend:
    """The score trend across iterations, as an SVG of ``width`` x ``height``."""

    bars: list[Bar]
    width: float
    height: float
    top: float
    bottom: float
    threshold_y: float | None
    threshold: float | None


BAR_W, GAP, PLOT_H, TOP, LABELS = 34.0, 10.0, 80.0, 14.0, 16.0


def trend(
    iterations: list[IterationData], threshold: float | None, best: int | None
) -> Trend | None:
    """The bars of ``iterations`` (height: the score 0-1), or None for no iteration."""
    if not iterations:
        return None
    bottom = TOP + PLOT_H
    bars = []
    for index, it in enumerate(iterations):
        x = GAP + index * (BAR_W + GAP)
        if it.evaluation is not None:
            score = min(max(it.evaluation.score, 0.0), 1.0)
            height = max(score * PLOT_H, 1.0)
            kind = "pass" if it.evaluation.meets_criteria else "fail"
            label = f"{it.evaluation.score:.2f}"
        else:
            height = 3.0
            kind = "error" if it.error else "unscored"
            label = "error" if it.error else "–"
        bars.append(
            Bar(
                it.iteration_number,
                x,
                bottom - height,
                height,
                kind,
                label,
                best == it.iteration_number,
            )
        )
    width = GAP + len(iterations) * (BAR_W + GAP)
    line = None if threshold is None else bottom - min(max(threshold, 0.0), 1.0) * PLOT_H
    return Trend(bars, max(width, 120.0), bottom + LABELS, TOP, bottom, line, threshold)


def explain(text: str, lab: GenerateAnswerRequest) -> str:
    """``text`` (an error of the Lab's calls) said in the Lab's terms: which field named
    the provider, and what to set, never a suite's ``providers:`` section."""
    from qualspec.lab import BASE_URL_ENV, DEFAULT_MODEL, provider_named, reworded

    model = lab.model or DEFAULT_MODEL
    judge = lab.judge_model or model
    name = provider_named(text)
    named = [
        (label, address)
        for label, address in (("Model", model), ("Evaluator", judge))
        if name is not None and address.split("/", 1)[0] == name
    ]
    if text.startswith(("model: ", "judge_model: ")):
        named = []  # the refusal names the request's field already
    if len(named) == 2 and model == judge:
        where = f"Model and Evaluator fields ({model})"
    else:
        where = " and ".join(f"{label} field ({address})" for label, address in named)
    env = BASE_URL_ENV.get(name or "")
    address_fix = (
        f"set {env} to its address and restart qualspec serve"
        if env
        else f"fix the base_url of provider '{name}' given to the web app"
    )
    if re.search(r"set the environment variable \w+$|check the environment variable \w+$", text):
        text += " (in the environment of qualspec serve, then restart it)"
    text = reworded(
        text,
        name=name,
        choose=": name one of them in the Model or Evaluator field, as provider/model",
        choose_key="",
        address_fix=address_fix,
        where="fields",
    )
    if where and not text.startswith(where):
        text = f"{where}: {text}"
    return text


def explained(result: GenerateAnswerResponse, lab: GenerateAnswerRequest) -> GenerateAnswerResponse:
    """``result`` with its iterations' errors said in the Lab's terms (see ``explain``)."""
    iterations = [
        it.model_copy(update={"error": explain(it.error, lab)}) if it.error else it
        for it in result.iterations
    ]
    metadata = dict(result.metadata)
    if isinstance(metadata.get("errors"), list):
        metadata["errors"] = [explain(str(e), lab) for e in metadata["errors"]]
    return result.model_copy(update={"iterations": iterations, "metadata": metadata})


def _changes(before: IterationData | None, it: IterationData) -> dict[str, Any] | None:
    if before is None or not before.answer or not it.answer:
        return None
    pieces = word_diff(before.answer, it.answer)
    return {
        "from": before.iteration_number,
        "pieces": pieces,
        "added": _words(pieces, "+"),
        "removed": _words(pieces, "-"),
        "same": before.answer == it.answer,
    }


def iteration_views(
    iterations: list[IterationData], lab: GenerateAnswerRequest
) -> dict[int, dict[str, Any]]:
    """Per iteration number: ``changes`` (from the previous answer written, or None) and
    ``error`` (explained)."""
    views: dict[int, dict[str, Any]] = {}
    before: IterationData | None = None
    for it in iterations:
        views[it.iteration_number] = {
            "changes": _changes(before, it),
            "error": explain(it.error, lab) if it.error else None,
        }
        if it.answer:
            before = it
    return views


def iteration_event(
    it: IterationData, before: IterationData | None, lab: GenerateAnswerRequest
) -> dict[str, Any]:
    """The streamed ``iteration`` event's data: the iteration, its explained error and its
    changes from ``before`` (the previous iteration with an answer)."""
    data = it.model_dump(mode="json")
    if it.error:
        data["error"] = explain(it.error, lab)
    data["changes"] = _changes(before, it)
    return data


def page_context(
    result: GenerateAnswerResponse | None,
    lab: GenerateAnswerRequest | None,
    progress: Any = None,
) -> dict[str, Any]:
    """What the Lab's templates need besides ``result``: ``views`` (per iteration number,
    see ``iteration_views``), ``trend`` (or None), and for a Lab stopped midway
    (``progress``: the iterations its run recorded) ``partial`` and ``partial_best``."""
    from qualspec.lab import IterationData, best_iteration

    if lab is None:
        return {"views": {}, "trend": None, "partial": [], "partial_best": None}
    if result is None:
        done = [IterationData.model_validate(i) for i in progress or [] if isinstance(i, dict)]
        best = best_iteration(done)
        number = best.iteration_number if best is not None else None
        return {
            "views": iteration_views(done, lab),
            "trend": trend(done, lab.score_threshold, number),
            "partial": done,
            "partial_best": best,
        }
    threshold = result.metadata.get("threshold", lab.score_threshold)
    best_number = result.metadata.get("best_iteration")
    return {
        "views": iteration_views(result.iterations, lab),
        "trend": trend(result.iterations, threshold, best_number),
        "partial": [],
        "partial_best": None,
    }


def stored_request(lab: dict[str, Any]) -> GenerateAnswerRequest | None:
    """The request a Lab run's metadata holds (None when it cannot be read)."""
    from pydantic import ValidationError

    from qualspec.lab import GenerateAnswerRequest

    fields = {k: v for k, v in lab.items() if k in GenerateAnswerRequest.model_fields}
    try:
        return GenerateAnswerRequest.model_validate(fields)
    except ValidationError:
        return None
