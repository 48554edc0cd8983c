"""What a run records about itself: its metadata (versions, the suite, the command line,
dimensions, evaluators) and the version ids of the prompt parts it sends."""

from __future__ import annotations

import os
import platform
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from qualspec.engine._execute import BoundEvaluator
    from qualspec.engine._plan import Plan
    from qualspec.spec import LoadedSuite
    from qualspec.store import Store

__all__ = ["INPUT_ORDER_LIMIT", "metadata", "platform_text", "prompt_versions"]

# what platform.platform() makes a dash of (its text is also a file name)
_DASHED = str.maketrans({"/": "-", "\\": "-", ":": "-", ";": "-", '"': "-", "(": "-", ")": "-"})


def platform_text() -> str:
    """The text of ``platform.platform()`` (``Linux-6.1.0-x86_64-with-glibc2.36``).

    On Linux it is made here: ``platform.platform()`` starts a ``uname -p`` process (8-10 ms
    before a run's first call, most of it forking a process of this size) for a processor
    name that it then leaves out, ``unknown`` or the machine's own name on the usual
    distributions. Elsewhere, the standard library's."""
    if sys.platform != "linux":
        return platform.platform()
    system, _node, release, _version, machine = os.uname()
    libc, libc_version = platform.libc_ver()
    parts = (system, release, machine, "with", libc + libc_version)
    text = "-".join(p.strip() for p in parts if p).replace(" ", "_").translate(_DASHED)
    text = text.replace("unknown", "")
    while "--" in text:
        text = text.replace("--", "-")
    return text.rstrip("-")


def prompt_versions(store: Store, plan: Plan) -> dict[str, dict[str, int]]:
    """The version id of every prompt part the plan sends, by part name and text."""
    pairs = sorted(plan.survey.prompt_parts)
    ids = store.prompt_versions_many(pairs)
    out: dict[str, dict[str, int]] = {}
    for (name, text), version_id in zip(pairs, ids, strict=True):
        out.setdefault(name, {})[text] = version_id
    return out


def metadata(
    suite: LoadedSuite,
    plan: Plan,
    argv: Sequence[str] | None,
    evaluators: Sequence[BoundEvaluator],
    *,
    resumed: bool,
) -> dict[str, Any]:
    """How a run was made: versions, the suite, the command line, dimensions, evaluators."""
    from qualspec.store import display_url
    from qualspec.version import __version__

    evaluation = suite.evaluation
    meta: dict[str, Any] = {
        "qualspec_version": __version__,
        "python_version": platform.python_version(),
        "platform": platform_text(),
        "suite_path": str(suite.path),
        "suite_hash": suite.content_hash,
        "argv": [display_url(a) for a in (argv if argv is not None else sys.argv[1:])],
        "candidates": {
            c.name: {"model": c.model, "params": c.params} for c in evaluation.candidates
        },
        "judge": {
            "model": plan.judge_model,
            "threshold": plan.threshold,
            "params": dict(plan.judges[0].params) if plan.judges else {},
            "prompt_version_id": evaluators[0].prompt_version if evaluators else None,
        },
        "evaluators": [
            {
                "name": b.evaluator.name,
                "type": config.type,
                "scope": b.evaluator.scope,
                "model": b.evaluator.model,
                "threshold": b.evaluator.threshold,
                "params": dict(config.params),
                "options": dict(config.options),
                "prompt_version_id": b.prompt_version,
                **_panel(config),
            }
            for b, config in zip(evaluators, plan.judges, strict=False)
        ],
        "dimensions": {
            "candidates": list(plan.candidates),
            "roles": list(plan.roles),
            "scenarios": list(plan.scenarios),
            "temperatures": list(plan.temperatures),
            "runs": plan.runs,
            # input row ids per scenario in file order, so that reports follow it
            "inputs": _input_order(plan),
        },
        # how the runs of one temperature combine in the reports and the analysis
        "aggregation": evaluation.aggregation,
        "pid": os.getpid(),
    }
    schemas = {
        s.name: _schema_record(s.output_schema)
        for s in evaluation.scenarios
        if s.output_schema is not None and s.name in plan.scenarios
    }
    if schemas:
        # what each scenario's answers (and reference answers) were asked to be: a
        # person's override of a reference is checked against it (``reference override``)
        meta["output_schemas"] = schemas
    if resumed:
        meta["resumed"] = True
    return meta


def _schema_record(schema: Any) -> dict[str, Any]:
    """A scenario's ``output_schema`` as written: its JSON Schema, else its field list
    (name, and type where declared)."""
    if schema.json_schema is not None:
        return dict(schema.json_schema)
    return {
        "fields": [f.model_dump(include={"name", "type"}, exclude_none=True) for f in schema.fields]
    }


INPUT_ORDER_LIMIT = 10_000
"""Input ids recorded in file order at most: a larger run's reports order inputs by id
(numbers as numbers), and its metadata stays small."""


def _input_order(plan: Plan) -> dict[str, list[str]]:
    from qualspec.engine._lazy import LazyItems

    order: dict[str, dict[str, None]] = {}
    if plan.n_inputs > INPUT_ORDER_LIMIT:
        return {}
    known = plan.items.input_order if isinstance(plan.items, LazyItems) else None
    if known is not None:  # read from the rows: the plan is not walked for it
        return known()
    for item in plan.items:
        if item.input_id is not None:
            order.setdefault(item.scenario, {})[item.input_id] = None
    return {scenario: list(ids) for scenario, ids in order.items()}


def _panel(config: Any) -> dict[str, Any]:
    """A judge panel's members and how they combine (nothing for one judge)."""
    if not getattr(config, "panel", None):
        return {}
    members = [m.model_dump(exclude_none=True) for m in config.panel]
    return {"panel": members, "combine": config.combine}
