"""Inputs files read row by row: a CSV or JSONL file's rows are never held whole.

Loading a suite scans such a file once (every row checked as before: keys, duplicate ids,
row shapes) and keeps only its path and row count; each expansion of the plan reads the
rows again, one at a time (:class:`StreamedRows`). Duplicate ids are found in constant
memory: four bits per hashed id (a Bloom filter of a bit per byte of the file, 16 MiB at
most), and a second look only at the ids whose bits were all taken (at 1,000,000 distinct
ids, almost never: no second pass).
The keys every row has are kept too, so that checking the prompt's template variables
needs no pass of its own.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import overload

from qualspec.errors import SpecError, SpecIssue
from qualspec.spec._inputs import InputRow, RawRow, csv_rows, jsonl_rows, row_id_of

__all__ = ["STREAMED_KINDS", "StreamedRows", "scan_inputs_file"]

STREAMED_KINDS = {".csv": "csv", ".jsonl": "jsonl", ".ndjson": "jsonl"}
_MAX_BITS = 1 << 27  # 16 MiB: four bits per id, a false suspect about once in 10**6 rows
_MIN_BITS = 1 << 16
_HASHES = 4
_KEPT_IDS = 10_000
_MAX_ISSUES = 50


def _raw_rows(path: Path, shown: str) -> Iterator[RawRow | SpecIssue]:
    kind = STREAMED_KINDS[path.suffix.lower()]
    try:
        file = path.open(encoding="utf-8-sig", newline="" if kind == "csv" else None)
    except OSError as exc:
        yield SpecIssue(shown, 1, 1, "", f"cannot read the inputs file: {exc.strerror or exc}")
        return
    with file:
        try:
            yield from (csv_rows if kind == "csv" else jsonl_rows)(file, shown)
        except UnicodeDecodeError as exc:
            yield SpecIssue(shown, 1, 1, "", f"not UTF-8 text ({exc.reason}); save it as UTF-8")


@dataclass(frozen=True, eq=False)
class StreamedRows(Sequence[InputRow]):
    """A scenario's rows from a CSV or JSONL file, read from the file each time they are
    iterated (one row in memory at a time). ``len()`` is the row count found when the
    suite was loaded; indexing reads up to the row (meant for small files and tests)."""

    path: Path
    shown: str
    length: int
    # the keys every row has (a CSV: its header), known from the scan
    common_keys: frozenset[str] = frozenset()
    # the row ids in file order, kept by the scan for a file of at most 10,000 rows
    # (what a run's metadata records); None: a larger file
    ids: tuple[str, ...] | None = None

    def __iter__(self) -> Iterator[InputRow]:
        for number, raw in enumerate(_raw_rows(self.path, self.shown), start=1):
            if isinstance(raw, SpecIssue):  # the file was edited since the suite was loaded
                changed = f"{raw.message} (the file changed after the suite was loaded)"
                raise SpecError([dataclasses.replace(raw, message=changed)])
            values = raw.values if isinstance(raw.values, dict) else dict(raw.values)
            yield InputRow(id=row_id_of(values, number), values=values)  # a fresh dict

    def __len__(self) -> int:
        return self.length

    @overload
    def __getitem__(self, index: int) -> InputRow: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[InputRow]: ...
    def __getitem__(self, index: int | slice) -> InputRow | Sequence[InputRow]:
        if isinstance(index, slice):
            return list(self)[index]
        position = index + self.length if index < 0 else index
        if not 0 <= position < self.length:
            raise IndexError(index)
        for i, row in enumerate(self):
            if i == position:
                return row
        raise IndexError(index)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, StreamedRows):
            return (self.path, self.length) == (other.path, other.length)
        if isinstance(other, Sequence):
            return list(self) == list(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash((self.path, self.length))


def scan_inputs_file(path: Path, shown: str) -> tuple[StreamedRows | None, list[SpecIssue]]:
    """Check every row of a CSV or JSONL inputs file in one pass (and a second, short one
    for ids that may repeat), holding no row: the streamed rows, or the issues found (at
    most 50, the last saying how many more)."""
    issues: list[SpecIssue] = []
    more = 0
    try:  # a bit per byte of the file (a row is more than a byte): small files, small
        size = path.stat().st_size
    except OSError:
        size = _MAX_BITS
    seen = bytearray(min(_MAX_BITS, max(_MIN_BITS, size * 8)) // 8)
    suspects: set[str] = set()
    count = 0
    common: set[str] | None = None
    ids: list[str] | None = []
    for number, raw in enumerate(_raw_rows(path, shown), start=1):
        problem = raw if isinstance(raw, SpecIssue) else _key_issue(raw, number, shown)
        if problem is not None:
            if len(issues) < _MAX_ISSUES:
                issues.append(problem)
            else:
                more += 1
            continue
        if not isinstance(raw, RawRow):  # a SpecIssue always has a problem: never here
            continue
        count += 1
        if common is None:
            common = set(raw.values)
        elif len(common) != len(raw.values) or not common.issubset(raw.values):
            common.intersection_update(raw.values)
        row_id = row_id_of(raw.values, number)
        if ids is not None and len(ids) < _KEPT_IDS:
            ids.append(row_id)
        else:  # a large file: its ids are not kept
            ids = None
        if _seen_before(seen, row_id):
            suspects.add(row_id)
    del seen
    if not issues and count == 0:
        issues.append(SpecIssue(shown, 1, 1, "", "inputs has no rows; add at least one"))
    if suspects and not issues:
        issues.extend(_duplicates(path, shown, suspects))
    if more:
        last = issues[-1]
        issues.append(SpecIssue(shown, last.line, 1, "", f"... and {more} more issue(s)"))
    if issues:
        return None, issues[: _MAX_ISSUES + 1]
    kept = tuple(ids) if ids is not None else None
    return StreamedRows(path, shown, count, frozenset(common or ()), kept), []


def _seen_before(seen: bytearray, row_id: str) -> bool:
    """Set ``row_id``'s bits in ``seen``; whether they were all set already (it may
    repeat an id: false only for an id met for the first time)."""
    digest = int.from_bytes(hashlib.blake2b(row_id.encode(), digest_size=16).digest())
    bits = len(seen) * 8
    taken = True
    for _ in range(_HASHES):
        bit = digest % bits
        digest //= bits
        byte, mask = bit >> 3, 1 << (bit & 7)
        if not seen[byte] & mask:
            taken = False
            seen[byte] |= mask
    return taken


def _key_issue(raw: RawRow, number: int, shown: str) -> SpecIssue | None:
    if any(not isinstance(k, str) for k in raw.values):
        return SpecIssue(shown, raw.line, raw.col, "", f"row {number}: keys must be text")
    return None


def _duplicates(path: Path, shown: str, suspects: set[str]) -> Iterator[SpecIssue]:
    """An issue per repeated id among ``suspects`` (ids whose hashed bit was taken)."""
    first: dict[str, int] = {}
    for number, raw in enumerate(_raw_rows(path, shown), start=1):
        if isinstance(raw, SpecIssue):
            continue
        row_id = row_id_of(raw.values, number)
        if row_id not in suspects:
            continue
        if row_id in first:
            yield SpecIssue(
                shown,
                raw.line,
                raw.col,
                "",
                f"duplicate input id '{row_id}' (first at line {first[row_id]}); "
                "input ids must be unique",
            )
        else:
            first[row_id] = raw.line
