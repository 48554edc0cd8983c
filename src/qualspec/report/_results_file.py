"""The JSON results file: an export of one stored run, versioned by ``schema_version``.

Layout (``schema_version`` "1.2"; 1.1 added ``kind`` to responses and ``evaluator``,
``subject``, ``scores`` and ``details`` to judgments, which 1.0 readers ignore; 1.2 added
each response's ``served_by``, where it was served: the base URL of one of its
provider's ``base_urls``, or ``ray:<node id>`` under the Ray executor; null for one server
or a cached answer; each judgment's ``served_by`` says the same of its judge's call, read
from its ``details``)::

    {
      "schema_version": "1.2",
      "qualspec_version": "0.1.0",
      "run": {"id", "suite_name", "suite_hash", "status", "started_at", "finished_at",
              "metadata", ...every other RunSummary field except the live lock state
              (owner_pid, owner_host, heartbeat_at)},
      "summary": {"counts": {...}, "mean_score", "cost_usd": {...}, "tokens": {...}},
      "analysis": {"cells", "role_gaps", "observations", "recommended_temperature",
                   "similarity_method", "aggregation"},
      "verdicts": {"aggregation", "totals", "by_candidate", "candidates", "cells"},
      "responses": [{...every ResponseRecord field..., "prompts": {...},
                     "judgments": [{..., "prompt": {...}}, ...]}, ...],
      "unattached_judgments": [...],     # only when a judgment's response is missing
      "field_grades": {...},             # only for a run with field grades (see below)
      "judge_agreement": [...]           # only for a run judged by a panel (see below)
    }

``judge_agreement`` (derived, ignored on import): per judge panel
(:func:`qualspec.analysis.judge_agreement`), Krippendorff's alpha of the members' scores
(interval) and pass/fail verdicts (nominal) with a bootstrap 95% interval and the items,
each pair of members' exact and within-1 agreement, per criterion and ``overall``, and the
criteria ``flagged`` (alpha below 0.667). Each panel judgment keeps the combined score as
its ``score``/``passed`` and every member in ``details.panel``
(``{"judge", "model", "score", "passed", "reasoning", "unscored_reason"}``), with
``details.panel_unscored`` members that gave no score.

``field_grades`` (derived, ignored on import) aggregates the field grader's records
(``details.type == "field_grade"``, each under its candidate answer):
:func:`qualspec.analysis.field_analysis_to_dict` (overall, by_model, by_input with
difficulty and variance, fields most problematic first, flags, errors, and ``costs`` of
the agent, reference and grading calls).

Prompt versions are named as ``qualspec prompts show NAME VERSION`` takes them: ``prompts``
(responses: part -> ``{"name", "version"}``) and ``prompt`` (judgments: ``{"name",
"version"}`` or null), present when the run comes from a store. The store's row ids of
those versions (``prompt_versions``/``prompt_version`` of the records) are not written: they
mean nothing outside the database. Older 1.x files that carry them are still read.

``summary`` is derived (recomputed on export, ignored on import): its counts include the
records of ``expect:`` checks (evaluator ``expect``, score 10 or 0), also counted alone as
``checks``/``checks_passed``/``checks_failed`` (present only when there are checks);
``mean_score`` leaves them out. Comparison records (``details.type == "comparison"``, one per
group of answers judged side by side) are ``unattached_judgments`` (their subject is a
group, not one response); they are counted as ``comparisons``, not among the judgments, and
``summary.comparisons`` sums each comparison up (wins per member and per group, ties, mean
scores, unscored and skipped groups, and with debias how often the two orders disagreed).
``verdicts`` is derived too (:func:`qualspec.analysis.verdicts_to_dict`): every cell's and
every candidate line's PASS/FAIL under the run's aggregation, with its counts and the
reasons of each FAIL, the same verdicts the console and the HTML report print.
``analysis`` is derived too: the temperature and role analysis of
:func:`qualspec.analysis.analyze_run` (as :func:`~qualspec.analysis.analysis_to_dict` writes
it), added within 1.1 as a field 1.x readers ignore, as is each response's ``call_key``
(its call's cache key: a reference answer is reviewed under it), and each response's
``input_values`` (the input row its prompt was rendered with, as stored: null without
inputs or for answers recorded before rows were stored). A reader accepts every ``1.x`` file
(unknown fields are ignored) and refuses a newer major version. Files are written
atomically: a temporary file
in the same directory, fsync, then ``os.replace``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import re
import unicodedata
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from qualspec.analysis import (
    RunAnalysis,
    analysis_to_dict,
    analyze_run,
    judgments_by_response,
    run_totals,
    run_verdicts,
    verdicts_to_dict,
)
from qualspec.errors import SchemaVersionError, StoreError
from qualspec.report._atomic_files import ResultsFileError, write_json_atomic, write_text_atomic
from qualspec.report._optional_blocks import has_field_grades, has_panel
from qualspec.store import JudgmentRecord, ResponseRecord, RunRecord, RunSummary

if TYPE_CHECKING:
    from qualspec.analysis import RunVerdicts
    from qualspec.store import Store

__all__ = [
    "SCHEMA_VERSION",
    "PromptRefs",
    "ResultsFileError",
    "default_results_path",
    "prompt_refs",
    "read_results_file",
    "run_from_dict",
    "run_to_dict",
    "write_json_atomic",
    "write_text_atomic",
]

SCHEMA_VERSION = "1.2"
"""Version of the results file layout, ``major.minor``; a new major breaks readers."""

_MAJOR = int(SCHEMA_VERSION.split(".")[0])
_VERSION_RE = re.compile(r"^(\d+)\.(\d+)$")
_T = TypeVar("_T")
# lock state of the process running the run: meaningless outside the store, not exported
_LIVE_FIELDS = frozenset({"owner_pid", "owner_host", "heartbeat_at"})


PromptRefs = Mapping[int, tuple[str, int]]
"""Prompt version id -> (name, version), as :func:`prompt_refs` reads them from a store."""


def prompt_refs(store: Store, run: RunRecord) -> dict[int, tuple[str, int]]:
    """The (name, version) of every prompt version id a run's records link to.

    Ids the store does not know (a results file from another database) are left out.
    """
    ids: set[int] = set()
    for response in run.responses:
        ids.update(v for v in response.prompt_versions.values() if isinstance(v, int))
    ids.update(j.prompt_version for j in run.judgments if isinstance(j.prompt_version, int))
    refs: dict[int, tuple[str, int]] = {}
    for version_id in sorted(ids):
        try:
            prompt = store.get_prompt_by_id(version_id)
        except StoreError:
            continue
        refs[version_id] = (prompt.name, prompt.version)
    return refs


def _ref(refs: PromptRefs, version_id: Any) -> dict[str, Any] | None:
    found = refs.get(version_id) if isinstance(version_id, int) else None
    return None if found is None else {"name": found[0], "version": found[1]}


# ----------------------------------------------------------------------------- export


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


# store row ids of prompt versions (meaningless outside the database) and the stored
# input row's hash (the row's values are exported as ``input_values``): never exported
_ROW_ID_FIELDS = frozenset({"prompt_versions", "prompt_version", "input_hash"})


_EXPORTED: dict[type, tuple[str, ...]] = {}  # a record type -> the fields it exports


def record_fields(record: ResponseRecord | JudgmentRecord) -> dict[str, Any]:
    """A record's fields for a results file or export, without the store's row ids."""
    names = _EXPORTED.get(type(record))
    if names is None:
        names = _EXPORTED[type(record)] = tuple(
            f.name for f in dataclasses.fields(record) if f.name not in _ROW_ID_FIELDS
        )
    return {name: getattr(record, name) for name in names}


def _record_dict(record: ResponseRecord | JudgmentRecord) -> dict[str, Any]:
    data = record_fields(record)
    data["created_at"] = _iso(record.created_at)
    return data


def _judgment_dict(judgment: JudgmentRecord, prompts: PromptRefs | None) -> dict[str, Any]:
    data = _record_dict(judgment)
    data["served_by"] = judgment.served_by  # as its response's (kept in its details)
    if prompts is not None:
        data["prompt"] = _ref(prompts, judgment.prompt_version)
    return data


def _summary_fields(summary: RunSummary) -> dict[str, Any]:
    data: dict[str, Any] = {}
    for f in dataclasses.fields(summary):
        if f.name in _LIVE_FIELDS:
            continue
        value = getattr(summary, f.name)
        data[f.name] = _iso(value) if isinstance(value, datetime) else value
    return data


def _summary_dict(run: RunRecord) -> dict[str, Any]:
    t = run_totals(run)
    summary: dict[str, Any] = {
        "counts": {
            "responses": t.responses,
            "errors": t.errors,
            "judgments": t.judgments,
            "scored": t.scored,
            "unscored": t.unscored,
            "passed": t.passed,
            "failed": t.failed,
            "cached_responses": t.cached_responses,
            "cached_judgments": t.cached_judgments,
        },
        "mean_score": t.mean_score,
        "cost_usd": {
            "candidate": t.candidate_cost_usd,
            "judge": t.judge_cost_usd,
            "total": t.cost_usd,
        },
        "tokens": {
            "candidate": {"input": t.candidate_input_tokens, "output": t.candidate_output_tokens},
            "judge": {"input": t.judge_input_tokens, "output": t.judge_output_tokens},
        },
    }
    if t.checks:  # only a run with expect: checks has these counts
        summary["counts"].update(
            checks=t.checks, checks_passed=t.checks_passed, checks_failed=t.checks_failed
        )
    if t.comparisons:  # the comparison machinery for a run that has some
        from qualspec.judges import comparison_summary

        compared = comparison_summary(run)
        if compared:  # only a run with comparisons: has these
            summary["counts"]["comparisons"] = t.comparisons
            summary["comparisons"] = [c.to_dict() for c in compared]
    return summary


def run_to_dict(
    run: RunRecord,
    prompts: PromptRefs | None = None,
    *,
    analysis: RunAnalysis | None = None,
    verdicts: RunVerdicts | None = None,
) -> dict[str, Any]:
    """Turn a stored run into the JSON-ready results-file layout (see the module docstring).

    Args:
        run: The run as stored.
        prompts: Prompt version id -> (name, version) (:func:`prompt_refs`); when given,
            each response gets ``prompts`` and each judgment ``prompt``.
        analysis: The run's analysis (default: computed here).
        verdicts: The run's verdicts, :func:`qualspec.analysis.run_verdicts` (default:
            computed here; given, the console report can use the same).

    Returns:
        The data, with each response's judgments nested under it. The run's lock state
        (``owner_pid``, ``owner_host``, ``heartbeat_at``) is left out.
    """
    from qualspec.version import __version__

    s = run.summary
    judged = judgments_by_response(run)
    keys = {r.key for r in run.responses}
    responses = []
    for response in run.responses:
        item = _record_dict(response)
        if prompts is not None:
            item["prompts"] = {
                part: ref
                for part, version_id in response.prompt_versions.items()
                if (ref := _ref(prompts, version_id)) is not None
            }
        item["judgments"] = [_judgment_dict(j, prompts) for j in judged.get(response.key, [])]
        responses.append(item)
    data: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "qualspec_version": __version__,
        "run": _summary_fields(s),
        "summary": _summary_dict(run),
        "analysis": analysis_to_dict(analysis if analysis is not None else analyze_run(run)),
        "verdicts": verdicts_to_dict(verdicts if verdicts is not None else run_verdicts(run)),
        "responses": responses,
    }
    unattached = [_judgment_dict(j, prompts) for j in run.judgments if j.response_key not in keys]
    if unattached:
        data["unattached_judgments"] = unattached
    _add_fields_and_agreement(data, run, prompts)
    return data


def _add_fields_and_agreement(
    data: dict[str, Any], run: RunRecord, prompts: PromptRefs | None
) -> None:
    """The run's ``field_grades`` and ``judge_agreement``, when it has field grades or a
    panel's judgments (their modules are imported only then: see ``_optional_blocks``)."""
    if has_field_grades(run):
        from qualspec.analysis import field_analysis, field_analysis_to_dict

        fields = field_analysis(run)
        if fields is not None:
            data["field_grades"] = field_analysis_to_dict(fields, run, prompts)
    if has_panel(run):
        from qualspec.analysis import judge_agreement

        agreement = judge_agreement(run.judgments)
        if agreement:
            data["judge_agreement"] = [panel.as_dict() for panel in agreement]


# ----------------------------------------------------------------------------- import


def _check_version(data: Mapping[str, Any], source: str) -> None:
    version = data.get("schema_version")
    if version is None:
        raise ResultsFileError(
            f"{source} has no schema_version: it is not a qualspec results file "
            "(export one with qualspec runs export RUN --format json)"
        )
    match = _VERSION_RE.match(version) if isinstance(version, str) else None
    if match is None:
        raise ResultsFileError(
            f"{source} has an invalid schema_version {version!r} (expected major.minor such "
            "as '1.0'): re-export it with qualspec runs export RUN --format json"
        )
    major = int(match.group(1))
    if major > _MAJOR:
        raise SchemaVersionError(
            f"{source} was written by a newer qualspec (schema {version}; this reads "
            f"{_MAJOR}.x): upgrade with pip install -U qualspec"
        )
    if major < _MAJOR:
        raise ResultsFileError(
            f"{source} uses schema {version}, which this qualspec no longer reads "
            f"(it reads {_MAJOR}.x): re-export the run with this version"
        )


def _datetime(value: Any, where: str, source: str) -> datetime | None:
    if value is None:
        return None
    if isinstance(value, str):
        with contextlib.suppress(ValueError):
            return datetime.fromisoformat(value)
    raise ResultsFileError(
        f"{source}: {where} is not an ISO date-time ({value!r}): fix or re-export the file"
    )


def _build(cls: type[_T], data: Any, where: str, source: str) -> _T:
    if not isinstance(data, Mapping):
        raise ResultsFileError(f"{source}: {where} must be an object: re-export the file")
    fields = {f.name: f for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    kwargs = {name: value for name, value in data.items() if name in fields}
    for name, f in fields.items():
        required = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        if required and name not in kwargs:
            raise ResultsFileError(
                f"{source}: {where}.{name} is missing: fix or re-export the file"
            )
    for name in kwargs:
        if name.endswith("_at"):
            kwargs[name] = _datetime(kwargs[name], f"{where}.{name}", source)
    return cls(**kwargs)


def _list(data: Any, where: str, source: str) -> list[Any]:
    if data is None:
        return []
    if not isinstance(data, list):
        raise ResultsFileError(f"{source}: {where} must be a list: re-export the file")
    return data


def run_from_dict(data: Any, *, source: str) -> RunRecord:
    """Read the results-file layout back into a run (the inverse of :func:`run_to_dict`).

    Args:
        data: Parsed JSON.
        source: Where the data came from (a path), used in error messages.

    Returns:
        The run; judgments in the order of their responses, then unattached ones.

    Raises:
        SchemaVersionError: The file was written with a newer major schema version.
        ResultsFileError: ``schema_version`` is missing or invalid, or a field is missing
            or has the wrong shape.
    """
    if not isinstance(data, Mapping):
        raise ResultsFileError(
            f"{source} is not a qualspec results file (expected a JSON object at the top): "
            "export one with qualspec runs export RUN --format json"
        )
    _check_version(data, source)
    summary = _build(RunSummary, data.get("run"), "run", source)
    if not isinstance(summary.metadata, dict):
        raise ResultsFileError(f"{source}: run.metadata must be an object: re-export the file")
    responses: list[ResponseRecord] = []
    judgments: list[JudgmentRecord] = []
    for i, item in enumerate(_list(data.get("responses"), "responses", source)):
        where = f"responses[{i}]"
        responses.append(_build(ResponseRecord, item, where, source))
        for k, j in enumerate(_list(item.get("judgments"), f"{where}.judgments", source)):
            judgments.append(_build(JudgmentRecord, j, f"{where}.judgments[{k}]", source))
    extra = _list(data.get("unattached_judgments"), "unattached_judgments", source)
    for k, j in enumerate(extra):
        judgments.append(_build(JudgmentRecord, j, f"unattached_judgments[{k}]", source))
    return RunRecord(summary=summary, responses=responses, judgments=judgments)


def read_results_file(path: str | os.PathLike[str]) -> RunRecord:
    """Read a JSON results file written by ``qualspec run`` or ``qualspec runs export``.

    Args:
        path: The file.

    Returns:
        The run it holds.

    Raises:
        ResultsFileError: The file is missing, unreadable, not JSON (the message gives the
            line and column) or not a results file.
        SchemaVersionError: It was written by a newer qualspec.
    """
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ResultsFileError(
            f"{p}: no such results file: check the path (qualspec runs list shows stored runs)"
        ) from None
    except IsADirectoryError:
        raise ResultsFileError(
            f"{p} is a directory: give the path of a results .json file"
        ) from None
    except UnicodeDecodeError:
        raise ResultsFileError(
            f"{p} is not UTF-8 text: give the path of a qualspec results .json file"
        ) from None
    except OSError as exc:
        raise ResultsFileError(f"{p}: cannot read ({exc.strerror}): check permissions") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ResultsFileError(
            f"{p}:{exc.lineno}:{exc.colno}: not valid JSON ({exc.msg}): "
            "give the path of a qualspec results .json file"
        ) from None
    return run_from_dict(data, source=str(p))


# ----------------------------------------------------------------------------- writing


def default_results_path(
    suite_name: str,
    when: datetime,
    directory: str | os.PathLike[str] = "results",
    run_id: str | None = None,
) -> Path:
    """The default results file name: ``<directory>/<suite-slug>_<YYYYMMDD-HHMMSS>_<id>.json``.

    The slug is the suite name in ASCII (accents dropped) and lower case, with each run of
    non-alphanumeric characters replaced by ``-`` and trimmed of ``-`` (``suite`` when
    nothing is left). ``<id>`` is the run id's random suffix (the part after its last
    ``-``), so that two runs started in the same second never share a file; without a run
    id the name ends at the timestamp.

    Example:
        >>> default_results_path("My Suite!", datetime(2025, 12, 26, 9, 5, 0), run_id="20251226-090500-3fa2c1")
        PosixPath('results/my-suite_20251226-090500_3fa2c1.json')
    """  # noqa: E501
    ascii_name = unicodedata.normalize("NFKD", suite_name).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^a-z0-9]+", "-", ascii_name.lower()).strip("-") or "suite"
    suffix = ""
    if run_id:
        tail = run_id.rsplit("-", 1)[-1]
        suffix = "_" + (re.sub(r"[^A-Za-z0-9]+", "-", tail).strip("-") or "run")
    return Path(directory) / f"{slug}_{when:%Y%m%d-%H%M%S}{suffix}.json"
