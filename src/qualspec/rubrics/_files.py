"""The pipeline's files: extracted rubrics, the final rubrics, session labels; selection.

A file that cannot be used raises :class:`~qualspec.errors.ConfigError` with one line that
names the file (and the line or the rubric) and the fix.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from qualspec.errors import ConfigError
from qualspec.rubrics._metrics import session_metrics
from qualspec.rubrics._parse import REQUIRED_FIELDS
from qualspec.rubrics._sessions import ChatSession

__all__ = ["load_extracted", "load_labels", "load_rubrics", "select_sessions"]


def _read_json(path: str | Path, what: str) -> Any:
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{p}: cannot read the {what}: {exc.strerror or exc}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"{p}:{exc.lineno}: not valid JSON ({exc.msg}, column {exc.colno}): fix the {what}"
        ) from None


def _check_rubrics(items: Any, path: str | Path, producer: str) -> list[dict[str, Any]]:
    if not isinstance(items, list):
        raise ConfigError(f'{path}: no "rubrics" list: give the file that {producer} wrote')
    out = []
    for number, item in enumerate(items, start=1):
        if not isinstance(item, Mapping):
            raise ConfigError(f"{path}: rubric {number} is not an object: fix or remove it")
        for name in REQUIRED_FIELDS:
            if not isinstance(item.get(name), str) or not item[name].strip():
                raise ConfigError(
                    f"{path}: rubric {number}: field '{name}' is missing or empty: "
                    f"give it a text (rubrics need {', '.join(REQUIRED_FIELDS)})"
                )
        out.append(dict(item))
    return out


def load_extracted(path: str | Path) -> list[dict[str, Any]]:
    """The rubrics of an ``extracted.json`` (``rubrics extract``), or of a bare JSON list."""
    data = _read_json(path, "extracted rubrics")
    items = data.get("rubrics") if isinstance(data, Mapping) else data
    rubrics = _check_rubrics(items, path, "`qualspec rubrics extract`")
    if not rubrics:
        raise ConfigError(
            f"{path}: no rubric was extracted: rerun `qualspec rubrics extract` "
            "(another --model, more sessions)"
        )
    return rubrics


def load_rubrics(path: str | Path) -> list[dict[str, Any]]:
    """The final rubrics of a ``rubrics.json`` (``rubrics summarize``) or a bare JSON list.

    Rubrics without an ``id`` are numbered ``rubric_001``...; ``weight`` must be a number
    above 0 (default 1.0).
    """
    data = _read_json(path, "rubrics")
    items = data.get("rubrics") if isinstance(data, Mapping) else data
    rubrics = _check_rubrics(items, path, "`qualspec rubrics summarize`")
    if not rubrics:
        raise ConfigError(f"{path}: the rubrics list is empty: rerun `qualspec rubrics summarize`")
    ids: set[str] = set()
    for number, rubric in enumerate(rubrics, start=1):
        rid = rubric.get("id")
        rubric["id"] = rid if isinstance(rid, str) and rid.strip() else f"rubric_{number:03d}"
        if rubric["id"] in ids:
            raise ConfigError(f"{path}: rubric {number}: id {rubric['id']!r} is used twice")
        ids.add(rubric["id"])
        weight = rubric.get("weight", 1.0)
        if isinstance(weight, bool) or not isinstance(weight, int | float) or weight <= 0:
            raise ConfigError(
                f"{path}: rubric {number}: weight {weight!r} is not a number above 0: fix it"
            )
        rubric["weight"] = float(weight)
    return rubrics


def load_labels(path: str | Path) -> dict[str, float]:
    """Scores per session id: a JSON object ``{"<session id>": 4, ...}`` or a CSV file
    with ``session_id`` and ``score`` columns."""
    p = Path(path)
    if p.suffix.lower() == ".csv":
        try:
            with p.open(newline="", encoding="utf-8") as handle:
                rows = list(csv.DictReader(handle))
        except OSError as exc:
            raise ConfigError(f"{p}: cannot read the labels: {exc.strerror or exc}") from None
        data: dict[str, Any] = {}
        for number, row in enumerate(rows, start=2):
            if "session_id" not in row or "score" not in row:
                raise ConfigError(f"{p}:1: the labels CSV needs columns session_id and score")
            data[row["session_id"]] = _number(row["score"], f"{p}:{number}")
        return data
    raw = _read_json(p, "labels")
    if not isinstance(raw, Mapping):
        raise ConfigError(f'{p}: write the labels as a JSON object {{"<session id>": score}}')
    return {str(k): _number(v, f"{p}: session {k!r}") for k, v in raw.items()}


def _number(value: Any, where: str) -> float:
    try:
        if isinstance(value, bool):
            raise ValueError
        return float(value)
    except (TypeError, ValueError):
        raise ConfigError(f"{where}: score {value!r} is not a number: write a number") from None


def select_sessions(
    chats: Sequence[ChatSession],
    *,
    score_name: str,
    min_score: float | None = None,
    labels: Mapping[str, float] | None = None,
) -> list[ChatSession]:
    """The sessions to extract from: all of them, or those scoring at least ``min_score``.

    With ``labels`` a session's score is its label, by session id or file name without
    its suffix (unlabelled sessions are left out);
    without, it is the metric named ``score_name`` (``token_efficiency``,
    ``user_turn_efficiency``, ``code_growth``, ``tokens``, ``turns``...).

    Raises:
        ConfigError: ``min_score`` is given without labels for a score that is not a metric.
    """
    if labels is not None:
        scored = [(c, _label(c, labels)) for c in chats]
        return [c for c, v in scored if v is not None and (min_score is None or v >= min_score)]
    if min_score is None:
        return list(chats)
    out = []
    for chat in chats:
        metrics = session_metrics(chat)
        if score_name not in metrics.as_dict():
            raise ConfigError(
                f"--min-score: '{score_name}' is not a session metric (token_efficiency, "
                "user_turn_efficiency, code_growth, tokens, turns, user_turns): give "
                "--labels FILE with a score per session"
            )
        value = metrics.value(score_name)
        if value is not None and value >= min_score:
            out.append(chat)
    return out


def _label(chat: ChatSession, labels: Mapping[str, float]) -> float | None:
    if chat.session_id in labels:
        return labels[chat.session_id]
    if chat.path is not None and chat.path.stem in labels:
        return labels[chat.path.stem]
    return None
