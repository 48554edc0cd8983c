"""What the reference review page shows besides the review itself (issue 19, item 3): the
source the reference was made from, its answers pretty-printed, and field-level diffs.

The source, as the store has it: the scenario, the input's id, the prompt parts the
reference call was made of (system prompt, preamble, scenario prompt: stored by version
on the reference's response in its latest run) and the input row's values, stored with
the run. For a run recorded before rows were stored, the row is read from the run's suite
file when it is a YAML suite that can still be loaded (a ``.py`` suite is never executed
for a page), and the page says whether that file is the one the run used (same content
hash) or has changed since. When neither is possible the page says what is missing.

Field diffs compare JSON answers path by path (``name``, ``address.city``, ``tags[0]``):
the override against the model's reference answer, and a candidate's answer of the same
scenario and input (in the reference's latest run) against the reference graders use
(the override when there is one).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from qualspec.errors import QualspecError, StoreError
from qualspec.judges import json_of
from qualspec.store import ReferenceAnswer, ResponseRecord, RunRecord, Store
from qualspec.web._sent import row_shown, sent_message

__all__ = ["FieldRow", "Source", "field_diff", "pretty", "review_context"]

_MISSING = object()
_MAX_ROWS = 500  # fields listed per diff


@dataclass(frozen=True, slots=True)
class FieldRow:
    """One field of a diff: its path, each side's value as JSON, and how they compare."""

    path: str
    left: str
    right: str
    status: str  # same, changed, missing (only on the left), added (only on the right)


@dataclass(frozen=True, slots=True)
class Source:
    """What the reference was made from, as far as the store (and the suite) tell."""

    scenario: str
    input_id: str | None
    role: str | None
    system: str | None
    preamble: str | None
    prompt: str | None  # the scenario prompt (a template when the scenario has inputs)
    sent: str | None  # the user message, when it can be told (no inputs, or the row read)
    row: str | None  # the input row's values, pretty JSON
    row_note: str | None  # where the row comes from, or why it is missing
    run_id: str | None
    sent_note: str | None = None  # the message shown is cut


def pretty(text: str | None) -> str | None:
    """``text`` as indented JSON when it is JSON (or a fenced JSON block), else None."""
    if not text:
        return None
    ok, value = json_of(text)
    if not ok or not isinstance(value, dict | list):
        return None
    return json.dumps(value, indent=2, ensure_ascii=False)


def _flatten(value: Any, path: str, out: dict[str, Any]) -> None:
    if isinstance(value, dict) and value:
        for k, v in value.items():
            _flatten(v, f"{path}.{k}" if path else str(k), out)
    elif isinstance(value, list) and value:
        for i, v in enumerate(value):
            _flatten(v, f"{path}[{i}]", out)
    else:
        out[path or "(whole answer)"] = value


def _show(value: Any) -> str:
    if value is _MISSING:
        return ""
    return json.dumps(value, ensure_ascii=False)


def field_diff(left: str | None, right: str | None) -> list[FieldRow] | None:
    """Path-by-path comparison of two JSON answers (None when either is not JSON)."""
    ok_l, value_l = json_of(left or "")
    ok_r, value_r = json_of(right or "")
    if not (ok_l and ok_r):
        return None
    flat_l: dict[str, Any] = {}
    flat_r: dict[str, Any] = {}
    _flatten(value_l, "", flat_l)
    _flatten(value_r, "", flat_r)
    rows = []
    for path in dict.fromkeys([*flat_l, *flat_r]):
        a, b = flat_l.get(path, _MISSING), flat_r.get(path, _MISSING)
        if a is _MISSING:
            status = "added"
        elif b is _MISSING:
            status = "missing"
        else:
            status = "same" if a == b and type(a) is type(b) else "changed"
        rows.append(FieldRow(path, _show(a), _show(b), status))
    return rows[:_MAX_ROWS]


def _prompt_text(store: Store, version: Any) -> str | None:
    if not isinstance(version, int):
        return None
    try:
        return store.get_prompt_by_id(version).text
    except StoreError:
        return None


def _row_from_suite(run: RunRecord, scenario: str, input_id: str) -> tuple[Any, str]:
    """(the row's values or None, a note saying where they come from or why not)."""
    meta = run.summary.metadata or {}
    path = meta.get("suite_path")
    missing = (
        "The run that made it was recorded before qualspec kept input rows: the store has "
        "the input's id and the prompt template, not the row's values"
    )
    if not isinstance(path, str) or not path:
        return None, f"{missing}, and this run recorded no suite file."
    if Path(path).suffix.lower() not in (".yaml", ".yml"):
        return None, f"{missing}; the suite {path} is Python, which a page never runs."
    from qualspec.spec import load_suite

    try:
        suite = load_suite(path)
    except (QualspecError, OSError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return None, f"{missing}, and the suite file {path} cannot be read now ({first})."
    row = next((r for r in suite.inputs.get(scenario, ()) if r.id == input_id), None)
    if row is None:
        return None, f"{missing}, and the suite file {path} no longer has input '{input_id}'."
    if suite.content_hash == run.summary.suite_hash:
        note = f"Read from the suite file {path}, unchanged since the run."
    else:
        note = (
            f"Read from the suite file {path} as it is now: it has changed since the run "
            "(check the values against the prompt)."
        )
    spec = next((s for s in suite.evaluation.scenarios if s.name == scenario), None)
    if spec is not None and isinstance(spec.inputs, str):
        note += (
            f" The row comes from its inputs file {spec.inputs}, read as it is now (the run "
            "kept no hash of it)."
        )
    return row.values, note


def _sentences(*notes: str | None) -> str | None:
    """The notes given as sentences, one after the other (None when there is none)."""
    out = [n[0].upper() + n[1:] + ("" if n.endswith(".") else ".") for n in notes if n]
    return " ".join(out) or None


def _source(store: Store, ref: ReferenceAnswer, run: RunRecord | None) -> Source:
    record = None
    if run is not None:
        record = next(
            (r for r in run.responses if r.kind == "reference" and r.call_key == ref.call_key),
            None,
        )
    parts: dict[str, str] = {}
    for name, version in (record.prompt_versions if record else {}).items():
        text = _prompt_text(store, version)
        if text is not None:
            parts[name.split(":", 1)[0]] = text
    prompt, preamble = parts.get("scenario_prompt"), parts.get("preamble")
    row_values: Any = None
    note = None
    if ref.input_id is not None:
        if record is not None and record.input_values is not None:
            row_values, note = record.input_values, "Stored with the run that made it."
        elif run is None:
            note = "The run that made this reference is no longer in the store."
        else:
            row_values, note = _row_from_suite(run, ref.scenario, ref.input_id)
    values = row_values if isinstance(row_values, Mapping) else None
    sent, sent_note = sent_message(prompt, preamble, ref.input_id, values)
    row, row_note = row_shown(ref.input_id, row_values) if row_values is not None else (None, None)
    if record is None and note is None:
        note = "The reference's prompt parts are not in the store (no response of its run)."
    return Source(
        scenario=ref.scenario,
        input_id=ref.input_id,
        role=record.role if record else None,
        system=parts.get("system_prompt"),
        preamble=preamble,
        prompt=prompt,
        sent=sent,
        row=row,
        row_note=_sentences(note, row_note),
        run_id=run.summary.id if run is not None else None,
        sent_note=sent_note,
    )


def _candidates(run: RunRecord | None, ref: ReferenceAnswer) -> list[ResponseRecord]:
    if run is None:
        return []
    return [
        r
        for r in run.responses
        if r.kind == "candidate"
        and r.scenario == ref.scenario
        and r.input_id == ref.input_id
        and r.text is not None
    ]


def _label(r: ResponseRecord) -> str:
    t = "default" if r.temperature is None else f"{r.temperature:g}"
    return f"{r.candidate}{f' · {r.role}' if r.role else ''} · T {t} · run {r.run_index + 1}"


def review_context(store: Store, ref: ReferenceAnswer, params: Mapping[str, str]) -> dict[str, Any]:
    """The source, the pretty answers and the field diffs for ``reference.html.j2``."""
    try:
        run: RunRecord | None = store.load_run(ref.latest_run)
    except QualspecError:
        run = None
    override = ref.review.override_text
    answers = _candidates(run, ref)
    wanted = params.get("answer")
    chosen = next((r for r in answers if r.key == wanted), answers[0] if answers else None)
    in_force = override if override is not None else ref.text
    choices: Sequence[tuple[str, str, bool]] = [
        (r.key, _label(r), chosen is not None and r.key == chosen.key) for r in answers
    ]
    return {
        "source": _source(store, ref, run),
        "pretty_text": pretty(ref.text),
        "pretty_override": pretty(override),
        "override_diff": field_diff(ref.text, override) if override is not None else None,
        "answer": chosen,
        "answer_label": _label(chosen) if chosen is not None else None,
        "answer_pretty": pretty(chosen.text) if chosen is not None else None,
        "answer_diff": field_diff(in_force, chosen.text) if chosen is not None else None,
        "answer_choices": choices,
        "audit_pretty": [
            (pretty(e.before) or e.before, pretty(e.after) or e.after) for e in ref.review.audit
        ],
    }
