"""A run's snapshot: what its page needs, compact enough to keep, so that a page of a
100,000-answer run reads one page of answers from the store, not the run.

A snapshot holds, per answer in the suite's order, a column of numbers (its response's
database id; its candidate, role, scenario, input and temperature as indexes into tables of
values; its label, score, scale, latency, cost and prompt; the criteria and checks it was
judged on and those that failed, as offsets into one flat array), the prompts' texts a
search reads, and the parts of the page no query changes (the overview, the most failed
criteria, the matrix's rows, the filters' options), made once by ``_run_page``.

:meth:`RunView.select` answers a :class:`Query` over the columns (numpy); a search asks the
store for the answers whose texts contain each word (``Store.search_run``: SQL ``LIKE``);
:meth:`RunView.page` reads the page's answers and their records by id
(``Store.load_run_part``) and makes them :class:`Answer`s as a whole run's index does.
Snapshots are kept by ``_view_cache``.
"""

from __future__ import annotations

import base64
import math
import re
import zlib
from array import array
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from qualspec.analysis import CHECKS_EVALUATOR, judgments_by_response
from qualspec.judges import is_comparison
from qualspec.store import RunRecord
from qualspec.web._answers import Answer, Page, PromptBook, make_answer, run_threshold
from qualspec.web._query import NONE, Query

__all__ = ["LABELS", "SNAPSHOT_VERSION", "Columns", "RunView", "StaleView"]

SNAPSHOT_VERSION = 3
"""Bump when a snapshot's layout or meaning changes (an older one is then rebuilt)."""
LABELS = ("PASS", "FAIL", "ERROR", "UNSCORED", "ANSWERED")
_FAIL = LABELS.index("FAIL")
_LABEL = {label: i for i, label in enumerate(LABELS)}
_VALUES = ("candidate", "role", "scenario", "input", "temperature")


class StaleView(Exception):
    """The run changed under its snapshot (an answer it names is gone): build it again."""


def _pack(values: Any, dtype: str) -> dict[str, str]:
    array = np.ascontiguousarray(np.asarray(values, dtype=dtype))
    data = base64.b64encode(zlib.compress(array.tobytes(), 1)).decode("ascii")
    return {"dtype": array.dtype.str, "data": data}


def _unpack(packed: Mapping[str, str]) -> Any:
    raw = zlib.decompress(base64.b64decode(packed["data"]))
    return np.frombuffer(raw, dtype=np.dtype(packed["dtype"]))


class Columns:
    """A snapshot's columns, made one answer at a time in the suite's order (compact arrays,
    never a list of the answers): :meth:`add` each, then :meth:`snapshot`."""

    def __init__(self) -> None:
        self.tables: dict[str, dict[Any, int]] = {name: {} for name in _VALUES}
        self.aspects: dict[tuple[str, str], int] = {}
        self.prompts: dict[tuple[Any, ...], int] = {}
        self.cols: dict[str, array[Any]] = {
            "id": array("q"),
            **{name: array("i") for name in (*_VALUES, "scale", "prompt")},
            "label": array("b"),
            **{name: array("d") for name in ("score", "latency", "cost")},
        }
        self.flat: dict[str, array[int]] = {"failing": array("i"), "judged": array("i")}
        self.at: dict[str, array[int]] = {"failing": array("i", [0]), "judged": array("i", [0])}

    def add(self, answer: Answer, row_id: int) -> None:
        """The next answer (in the suite's order) and its response's database id."""
        r, cols, tables = answer.record, self.cols, self.tables
        for name, value in (
            ("candidate", r.candidate),
            ("role", r.role if r.role is not None else NONE),
            ("scenario", r.scenario),
            ("input", r.input_id if r.input_id is not None else NONE),
            ("temperature", answer.temperature),
        ):
            table = tables[name]
            code = table.get(value)
            if code is None:
                code = table[value] = len(table)
            cols[name].append(code)
        cols["id"].append(row_id)
        cols["label"].append(_LABEL[answer.label])
        cols["score"].append(math.nan if answer.score is None else answer.score)
        cols["scale"].append(answer.scale)
        cols["latency"].append(math.nan if r.latency_s is None else r.latency_s)
        cols["cost"].append(math.nan if r.cost_usd is None else r.cost_usd)
        prompts = self.prompts
        code = prompts.get(answer.prompt_key)
        if code is None:
            code = prompts[answer.prompt_key] = len(prompts)
        cols["prompt"].append(code)
        aspects, flat, at = self.aspects, self.flat, self.at
        for name, keys in (("failing", answer.failing), ("judged", answer.judged_on)):
            if keys:
                unique = dict.fromkeys(keys) if len(keys) > 1 else keys
                flat[name].extend(aspects.setdefault(k, len(aspects)) for k in unique)
            at[name].append(len(flat[name]))

    def snapshot(
        self, hay: Mapping[tuple[Any, ...], str], page: Mapping[str, Any]
    ) -> dict[str, Any]:
        """The snapshot (JSON-ready): ``hay`` gives a prompt key's searchable text, ``page``
        the page's parts no query changes."""
        dtypes = {"id": "<i8", "score": "<f8", "latency": "<f8", "cost": "<f8", "label": "<i1"}
        return {
            "version": SNAPSHOT_VERSION,
            "values": {name: list(table) for name, table in self.tables.items()},
            "aspects": [list(k) for k in self.aspects],
            "hay": [hay.get(key, "") for key in self.prompts],
            "columns": {
                **{n: _pack(v, dtypes.get(n, "<i4")) for n, v in self.cols.items()},
                **{n: _pack(v, "<i4") for n, v in self.flat.items()},
                **{f"{n}_at": _pack(v, "<i4") for n, v in self.at.items()},
            },
            "page": dict(page),
        }


class RunView:
    """A run's snapshot, ready to answer queries (see the module docstring).

    Args:
        snapshot: What :meth:`Columns.snapshot` made (possibly read back from JSON).
    """

    def __init__(self, snapshot: Mapping[str, Any]) -> None:
        self.values: dict[str, list[str]] = {k: list(v) for k, v in snapshot["values"].items()}
        self._where = {k: {v: i for i, v in enumerate(vs)} for k, vs in self.values.items()}
        self.aspects = [(str(e), str(c)) for e, c in snapshot["aspects"]]
        self.evaluators = sorted({e for e, _ in self.aspects})  # every answer's records
        self.hay = [str(h).lower() for h in snapshot["hay"]]
        self.cols = {name: _unpack(packed) for name, packed in snapshot["columns"].items()}
        self.page_parts: dict[str, Any] = dict(snapshot["page"])
        self.n = len(self.cols["id"])
        self._owners: dict[str, Any] = {}

    # ------------------------------------------------------------------ selecting

    def _any_in(self, name: str, chosen: list[int]) -> Any:
        """Per answer, whether one of its ``name`` aspects (failing, judged) is chosen."""
        flat = self.cols[name]
        owner = self._owners.get(name)
        if owner is None:
            counts = np.diff(self.cols[f"{name}_at"])
            owner = self._owners[name] = np.repeat(np.arange(self.n), counts)
        out = np.zeros(self.n, dtype=bool)
        out[owner[np.isin(flat, np.asarray(chosen, dtype=np.int32))]] = True
        return out

    def _aspects(self, query: Query) -> list[int] | None:
        """The aspects ``query``'s criterion, check and evaluator keep (None: no filter)."""
        if not (query.criterion or query.check or query.evaluator):
            return None
        chosen = []
        for i, (evaluator, criterion) in enumerate(self.aspects):
            check = evaluator == CHECKS_EVALUATOR
            if query.criterion and (criterion != query.criterion or check):
                continue
            if query.check and (criterion != query.check or not check):
                continue
            if query.evaluator and evaluator != query.evaluator:
                continue
            chosen.append(i)
        return chosen

    def select(self, query: Query, search: Callable[[str], set[int]]) -> Any:
        """The positions (in the suite's order) of the answers ``query`` keeps, sorted as
        it asks; ``search(word)`` gives the ids of the answers whose texts hold ``word``."""
        mask = np.ones(self.n, dtype=bool)
        for name in _VALUES:
            wanted = getattr(query, name)
            if wanted:
                found = self._where[name].get(wanted)
                mask &= False if found is None else self.cols[name] == found
        chosen = self._aspects(query)
        if chosen is not None:
            mask &= self._any_in("failing" if query.failed else "judged", chosen)
        elif query.failed:
            mask &= self.cols["label"] == _FAIL
        words = [a or b for a, b in re.findall(r'"([^"]+)"|(\S+)', query.q) if a or b]
        for word in words:
            if not mask.any():
                break
            low = word.lower()
            in_prompt = [i for i, hay in enumerate(self.hay) if low in hay]
            hit = np.isin(self.cols["prompt"], np.asarray(in_prompt, dtype=np.int32))
            ids = np.fromiter(search(word), dtype=np.int64)
            mask &= hit | np.isin(self.cols["id"], ids)
        return self._sorted(np.flatnonzero(mask), query.sort)

    def _sorted(self, positions: Any, sort: str) -> Any:
        if sort == "suite" or not len(positions):
            return positions
        c = self.cols
        if sort in ("score", "-score"):
            value = c["score"][positions] / c["scale"][positions]
            none = np.isnan(value)
            value = np.where(none, 0.0, value if sort == "score" else -value)
            return positions[np.lexsort((positions, value, none))]
        if sort == "candidate":
            names = self.values["candidate"]
            rank = np.argsort(np.argsort(np.asarray(names, dtype=object)))
            return positions[np.lexsort((positions, rank[c["candidate"][positions]]))]
        value = c["latency" if sort == "latency" else "cost"][positions]
        none = np.isnan(value)
        return positions[np.lexsort((positions, np.where(none, 0.0, -value), none))]

    # ------------------------------------------------------------------ a page

    def page(
        self,
        query: Query,
        search: Callable[[str], set[int]],
        fetch: Callable[[list[int]], RunRecord],
        prompts: Callable[[set[int]], dict[int, str]],
    ) -> tuple[Page, PromptBook]:
        """The page of answers ``query`` asks for, read with ``fetch(ids)`` (the responses
        of those ids, in that order, and their records); ``prompts(version ids)`` gives
        their texts.

        Raises:
            StaleView: An answer of the page is no longer in the store.
        """
        positions = self.select(query, search)
        pages = max(1, math.ceil(len(positions) / query.per))
        page = min(query.page, pages)
        start = (page - 1) * query.per
        shown = positions[start : start + query.per]
        counts = np.bincount(self.cols["label"][positions], minlength=len(LABELS))
        part = fetch([int(i) for i in self.cols["id"][shown]])
        book = PromptBook(
            prompts(
                {
                    v
                    for r in part.responses
                    for v in r.prompt_versions.values()
                    if isinstance(v, int)
                }
            )
        )
        if len(part.responses) != len(shown):  # a row the snapshot knows is gone
            raise StaleView(f"{len(shown) - len(part.responses)} answers of the page are gone")
        judged = judgments_by_response(part)
        threshold = run_threshold(part.summary.metadata)
        answers = [
            make_answer(
                int(position),
                r,
                [j for j in judged.get(r.key, ()) if not is_comparison(j)],
                threshold,
                book,
            )
            for position, r in zip(shown, part.responses, strict=True)
        ]
        return (
            Page(
                query=query,
                answers=answers,
                matching=len(positions),
                total=self.n,
                page=page,
                pages=pages,
                first=start + 1 if len(shown) else 0,
                last=start + len(answers),
                failing=int(counts[_FAIL]),
                counts={LABELS[i]: int(n) for i, n in enumerate(counts) if n},
            ),
            book,
        )
