"""People's labels of a run's answers, to and from files.

:func:`label_sheet` lists what there is to label: one row per (answer, criterion the run
judged it on), with the answer's ids and text and empty ``score``/``passed`` columns, for a
spreadsheet. :func:`read_labels` reads such a file back (CSV, or JSON Lines with the same
fields), keyed by ``response_key`` or by (scenario, input, role, candidate, temperature,
run, criterion), and refuses the whole file when any row is wrong, naming each by line.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from qualspec.analysis._aggregate import CHECKS_EVALUATOR
from qualspec.errors import ConfigError, SpecError, SpecIssue
from qualspec.store import JudgmentRecord, LabelRecord, ResponseRecord, RunRecord

__all__ = ["LABEL_COLUMNS", "LabelFile", "label_sheet", "labelled_criteria", "read_labels"]

LABEL_COLUMNS: tuple[str, ...] = (
    "response_key",
    "scenario",
    "input",
    "role",
    "candidate",
    "temperature",
    "run",
    "criterion",
    "input_values",
    "answer",
    "score",
    "passed",
    "labeller",
    "notes",
)
"""The columns of ``qualspec labels export`` (``run`` counts from 1, as the reports do)."""

_ALIASES = {
    "answer_id": "response_key",
    "input_id": "input",
    "labeler": "labeller",
    "annotator": "labeller",
    "rater": "labeller",
    "comment": "notes",
    "pass": "passed",
    "human_score": "score",
}
_COORDINATES = ("scenario", "candidate", "temperature", "criterion")
_TRUE = {"true", "yes", "y", "pass", "passed", "1", "ok"}
_FALSE = {"false", "no", "n", "fail", "failed", "0"}
_MAX_SHOWN = 50  # problems listed before "... and N more"
_MAX_LABELLER = 255


@dataclass(slots=True)
class LabelFile:
    """A label file read against its run: the labels, and what was left out.

    ``skipped`` counts rows with neither a score nor pass/fail (not labelled yet);
    ``repeated`` rows that repeat an earlier row's label exactly; ``sha256`` is the file's.
    """

    labels: list[LabelRecord]
    rows: int
    skipped: int
    repeated: int
    sha256: str


def judged_records(records: list[JudgmentRecord]) -> list[JudgmentRecord]:
    """The records of an answer that judge a criterion on 0-10 (not checks, field grades
    or comparisons of groups)."""
    return [
        j
        for j in records
        if j.evaluator != CHECKS_EVALUATOR
        and j.subject is None
        and (j.details or {}).get("type") not in ("field_grade", "comparison")
    ]


def labelled_criteria(run: RunRecord) -> dict[str, list[str]]:
    """Response key -> the criteria the run judged the answer on, in the run's order."""
    out: dict[str, dict[str, None]] = {}
    for j in judged_records(run.judgments):
        out.setdefault(j.response_key, {})[j.criterion] = None
    return {key: list(criteria) for key, criteria in out.items()}


def _answers(run: RunRecord) -> list[ResponseRecord]:
    return [r for r in run.responses if r.kind == "candidate" and r.error is None]


def _temperature(value: float | None) -> str:
    return "default" if value is None else f"{value:g}"


def label_sheet(
    run: RunRecord, *, labeller: str = "", sample: int | None = None, seed: int = 0
) -> list[dict[str, Any]]:
    """The rows of a label sheet (:data:`LABEL_COLUMNS`): one per answer and criterion it
    was judged on, ``score``/``passed`` empty. Judges' scores are left out (people label
    blind). ``sample``: that many answers drawn at random (``seed``), in the run's order."""
    criteria = labelled_criteria(run)
    answers = [r for r in _answers(run) if r.key in criteria]
    if sample is not None and sample < len(answers):
        import random

        keep = set(random.Random(seed).sample(range(len(answers)), sample))
        answers = [r for i, r in enumerate(answers) if i in keep]
    rows = []
    for r in answers:
        values = "" if r.input_values is None else json.dumps(r.input_values, ensure_ascii=False)
        for criterion in criteria[r.key]:
            rows.append(
                {
                    "response_key": r.key,
                    "scenario": r.scenario,
                    "input": r.input_id or "",
                    "role": r.role or "",
                    "candidate": r.candidate,
                    "temperature": _temperature(r.temperature),
                    "run": r.run_index + 1,
                    "criterion": criterion,
                    "input_values": values,
                    "answer": r.text or "",
                    "score": "",
                    "passed": "",
                    "labeller": labeller,
                    "notes": "",
                }
            )
    return rows


class _Problems:
    def __init__(self, path: str) -> None:
        self.path = path
        self.issues: list[SpecIssue] = []
        self.rows: dict[int, int] = {}  # CSV: a record's first line -> its spreadsheet row

    def add(self, line: int, field: str, message: str) -> None:
        row = self.rows.get(line, line)
        if row != line:  # an answer of several lines: say where a spreadsheet shows it
            message += f" (spreadsheet row {row})"
        self.issues.append(SpecIssue(self.path, line, 1, field, message))

    def raise_any(self) -> None:
        if not self.issues:
            return
        shown = self.issues[:_MAX_SHOWN]
        if len(self.issues) > _MAX_SHOWN:
            more = len(self.issues) - _MAX_SHOWN
            shown.append(
                SpecIssue(self.path, self.issues[_MAX_SHOWN].line, 1, "", f"... and {more} more")
            )
        raise SpecError(shown)


def _rows(text: str, name: str, problems: _Problems) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line, fields) of each row: CSV (``,``, ``;`` or tab) or JSON Lines."""
    lowered = name.lower()
    jsonl = lowered.endswith((".jsonl", ".ndjson")) or (
        not lowered.endswith((".csv", ".tsv")) and text.lstrip().startswith("{")
    )
    if jsonl:
        for number, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                value = json.loads(line)
            except json.JSONDecodeError as exc:
                problems.add(number, "", f"not JSON ({exc.msg}): write one object per line")
                continue
            if not isinstance(value, dict):
                problems.add(number, "", "not a JSON object: write one object per line")
                continue
            yield number, {_column(k): v for k, v in value.items()}
        return
    first = text.split("\n", 1)[0]
    delimiter = max((",", ";", "\t"), key=first.count)
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    try:
        header = [_column(h) for h in next(reader)]
    except StopIteration:
        return
    if "criterion" not in header:
        problems.add(1, "criterion", "no 'criterion' column: the header row needs one")
        return
    start = reader.line_num + 1
    for number, row in enumerate(reader, 2):
        problems.rows[start] = number
        if any(cell.strip() for cell in row):
            yield start, dict(zip(header, row, strict=False))
        start = reader.line_num + 1


def _column(name: object) -> str:
    key = str(name).strip().lower().replace(" ", "_")
    return _ALIASES.get(key, key)


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value).strip()


def _score(value: Any) -> float | None:
    """The score in ``value`` (None: empty); ValueError with the fix when it is not one."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, bool):
        raise ValueError(f"{value!r} is not a score: write a number from 0 to 10")
    try:
        number = float(value) if not isinstance(value, str) else float(value.replace(",", "."))
    except ValueError:
        raise ValueError(f"{value!r} is not a number: write a score from 0 to 10") from None
    if not math.isfinite(number) or not 0 <= number <= 10:
        raise ValueError(f"{value} is outside 0-10: write a score from 0 to 10")
    return number


def _passed(value: Any) -> bool | None:
    if value is None or isinstance(value, bool):
        return value
    text = _text(value).lower()
    if not text:
        return None
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise ValueError(f"{value!r} is not pass/fail: write pass or fail (or true/false, 1/0)")


def _temperature_key(value: Any) -> str:
    """A temperature as :func:`label_sheet` writes it (``0.7``, ``default``)."""
    text = _text(value).lower()
    if text in ("", "default", "none", "null"):
        return "default"
    try:
        return f"{float(text):g}"
    except ValueError:
        raise ValueError(f"{value!r} is not a temperature: write a number or 'default'") from None


def _run_index(fields: Mapping[str, Any]) -> int:
    """The 0-based run index from ``run`` (from 1) or ``run_index`` (from 0)."""
    name, base = ("run", 1) if _text(fields.get("run")) else ("run_index", 0)
    text = _text(fields.get(name))
    try:
        number = int(float(text))
    except ValueError:
        raise ValueError(f"{text!r} is not a whole number: write the run (1, 2, ...)") from None
    if number < base or number != float(text):
        raise ValueError(f"{text} is not a run: write 1, 2, ... (run_index: 0, 1, ...)")
    return number - base


class _Index:
    """A run's answers by key and by where they sit in the matrix, and their criteria."""

    def __init__(self, run: RunRecord) -> None:
        self.run_id = run.summary.id
        self.criteria = labelled_criteria(run)
        self.all_criteria = sorted({c for cs in self.criteria.values() for c in cs})
        self.by_key = {r.key: r for r in run.responses if r.kind == "candidate"}
        self.by_place = {
            (
                r.scenario,
                r.input_id or "",
                r.role or "",
                r.candidate,
                _temperature(r.temperature),
                r.run_index,
            ): r.key
            for r in self.by_key.values()
        }

    def key(self, line: int, fields: Mapping[str, Any], problems: _Problems) -> str | None:
        given = _text(fields.get("response_key"))
        if given:
            if given not in self.by_key:
                problems.add(
                    line,
                    "response_key",
                    f"no answer of run {self.run_id} has the id {given[:16]!r}: use the ids "
                    "`qualspec labels export` writes, or leave it empty and give scenario, "
                    "input, role, candidate, temperature and run",
                )
                return None
            return given
        # a temperature of JSON null is the provider's default, as ``default`` is
        missing = [
            n
            for n in _COORDINATES
            if not _text(fields.get(n)) and (n != "temperature" or fields.get(n, "") == "")
        ]
        if not _text(fields.get("run")) and not _text(fields.get("run_index")):
            missing.append("run")
        if missing:
            problems.add(
                line,
                missing[0],
                "empty: give the answer's response_key, or its scenario, candidate, "
                "temperature and run (with input and role where the run has them)",
            )
            return None
        try:
            place = (
                _text(fields.get("scenario")),
                _text(fields.get("input")),
                _text(fields.get("role")),
                _text(fields.get("candidate")),
                _temperature_key(fields.get("temperature")),
                _run_index(fields),
            )
        except ValueError as exc:
            name = "temperature" if "temperature" in str(exc) else "run"
            problems.add(line, name, str(exc))
            return None
        found = self.by_place.get(place)
        if found is None:
            where = ", ".join(
                f"{n}={v!r}"
                for n, v in zip(("scenario", "input", "role", "candidate"), place, strict=False)
            )
            problems.add(
                line,
                "scenario",
                f"no answer of run {self.run_id} at {where}, temperature {place[4]}, "
                f"run {place[5] + 1}: check these values against `qualspec labels export`",
            )
        return found

    def check(self, line: int, key: str, criterion: str, problems: _Problems) -> bool:
        answer = self.by_key[key]
        if answer.error is not None:
            problems.add(
                line, "response_key", f"answer {key[:16]!r} is an error (no text): leave it out"
            )
            return False
        if criterion not in self.criteria.get(key, ()):
            known = ", ".join(repr(c) for c in self.criteria.get(key) or self.all_criteria)
            problems.add(
                line,
                "criterion",
                f"{criterion!r} was not judged on this answer: use one of {known or 'none'}",
            )
            return False
        return True


def _label(
    line: int, fields: Mapping[str, Any], index: _Index, problems: _Problems
) -> LabelRecord | None | bool:
    """The row's label; None when it has a problem (recorded); False: not labelled yet."""
    before = len(problems.issues)
    values: dict[str, Any] = {}
    for name, parse in (("score", _score), ("passed", _passed)):
        try:
            values[name] = parse(fields.get(name))
        except ValueError as exc:
            problems.add(line, name, str(exc))
    labeller = _text(fields.get("labeller"))
    if len(labeller) > _MAX_LABELLER:
        problems.add(line, "labeller", f"longer than {_MAX_LABELLER} characters: shorten it")
    criterion = _text(fields.get("criterion"))
    if not criterion:
        problems.add(line, "criterion", "empty: name the criterion the label is about")
        return None
    key = index.key(line, fields, problems)
    if key is None or not index.check(line, key, criterion, problems):
        return None
    if len(problems.issues) > before:
        return None
    if values.get("score") is None and values.get("passed") is None:
        return False
    notes = _text(fields.get("notes")) or None
    return LabelRecord(key, criterion, values["score"], values["passed"], labeller, notes)


def read_labels(path: Path, run: RunRecord) -> LabelFile:
    """Read people's labels of ``run``'s answers from ``path`` (CSV or JSON Lines).

    Columns (any order; unknown ones are ignored): ``criterion``; the answer as
    ``response_key`` or as ``scenario``, ``input``, ``role``, ``candidate``,
    ``temperature`` and ``run`` (from 1; or ``run_index`` from 0); ``score`` (0-10) and/or
    ``passed`` (pass/fail, true/false, 1/0); optional ``labeller`` and ``notes``. A row
    with neither a score nor pass/fail is not labelled yet, and left out.

    Raises:
        SpecError: Rows are wrong: one issue per problem, ``file:line``, the field, the
            fix. Nothing of the file is to be imported then.
        ConfigError: The file cannot be read, or is not UTF-8.
    """
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror or exc}: check the path") from exc
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ConfigError(
            f"{path}: not UTF-8 text: save it as UTF-8 (a spreadsheet's 'CSV UTF-8')"
        ) from None
    problems = _Problems(str(path))
    index = _Index(run)
    seen: dict[tuple[str, str, str], tuple[int, LabelRecord]] = {}
    labels: list[LabelRecord] = []
    rows = skipped = repeated = 0
    for line, fields in _rows(text, path.name, problems):
        rows += 1
        label = _label(line, fields, index, problems)
        if label is False:
            skipped += 1
        if not isinstance(label, LabelRecord):
            continue
        same = (label.response_key, label.criterion, label.labeller)
        earlier = seen.get(same)
        if earlier is None:
            seen[same] = (line, label)
            labels.append(label)
        elif earlier[1] == label:
            repeated += 1
        else:
            problems.add(
                line,
                "score",
                f"labels the answer and criterion of line {earlier[0]} again, differently"
                + (f" (labeller {label.labeller!r})" if label.labeller else "")
                + ": keep one of the two rows",
            )
    problems.raise_any()
    if rows == 0:
        raise ConfigError(f"{path}: no rows: export the answers with `qualspec labels export`")
    sha = hashlib.sha256(data).hexdigest()
    return LabelFile(labels, rows, skipped, repeated, sha)
