"""What the answers' indexes cost a cached rerun's in-database copy (issue 20).

    python benchmarks/copy_indexes.py COPY.db [--cells 200000] [--per 50000]
                                      [--drop ix_responses_call_key,...] [--order plan]

COPY.db is a copy of a store a cached rerun ran on (it is written to: never the original;
``benchmarks/scale.py --workdir`` keeps one). The first run's answers, ``--cells`` of
them, are copied again from the cache into a new run, as ``LiteStore.copy_cached`` does:
their identities to a temporary table, one ``INSERT ... SELECT ... JOIN cache_entries`` a
transaction of ``--per`` cells (no upsert clause: the new run has no row to meet), with
the given indexes dropped first (``--drop``) and the cells in plan order or sorted by a
column (``--order input_hash``). Prints the wall and CPU seconds of the copy; WAL and
``synchronous=NORMAL``, as the store opens a file.
"""

from __future__ import annotations

import argparse
import resource
import sqlite3
import time

from qualspec.store import COPY_CONSTANTS, COPY_FIELDS, COPY_FROM_CACHE

# a staged cell: the store's cell fields, its input row's hash in place of the values
_IDENTITY = (*(name for name in COPY_FIELDS if name != "input_values"), "input_hash")
_RUN = "copy-indexes-bench"


def _copy_sql(columns: list[str]) -> str:
    def value(name: str) -> str:
        if name == "run_id":
            return "?"
        if name in _IDENTITY:
            return f't."{name}"'
        return f'c."{name}"' if name in COPY_FROM_CACHE else COPY_CONSTANTS[name]

    names = [c for c in columns if c != "id"]
    return (
        f"INSERT INTO responses ({', '.join(names)}) SELECT {', '.join(map(value, names))} "
        'FROM temp.staged AS t JOIN cache_entries AS c ON c."key" = t.call_key '
        "WHERE true ORDER BY t.rowid"
    )


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("db", help="a COPY of a store (written to)")
    parser.add_argument("--cells", type=int, default=200_000)
    parser.add_argument("--per", type=int, default=50_000, help="cells a transaction")
    parser.add_argument("--drop", default="", help="indexes to drop first, comma-separated")
    parser.add_argument("--order", default="plan", help="plan, or a column to sort cells by")
    args = parser.parse_args()
    conn = sqlite3.connect(args.db, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("PRAGMA foreign_keys = ON")
    (first,) = conn.execute("SELECT id FROM runs ORDER BY started_at LIMIT 1").fetchone()
    conn.execute(
        "INSERT INTO runs (id, suite_name, suite_hash, status, started_at, metadata) "
        "VALUES (?, 's', 'h', 'running', '2026-01-01 00:00:00.000000', '{}')",
        (_RUN,),
    )
    cells = conn.execute(
        f"SELECT {', '.join(_IDENTITY)} FROM responses WHERE run_id = ? ORDER BY id LIMIT ?",
        (first, args.cells),
    ).fetchall()
    if args.order != "plan":
        at = _IDENTITY.index(args.order)
        cells.sort(key=lambda cell: cell[at] or "")
    for index in filter(None, args.drop.split(",")):
        conn.execute(f"DROP INDEX {index}")
    columns = [row[1] for row in conn.execute("PRAGMA table_info(responses)")]
    copy = _copy_sql(columns)
    conn.execute(f"CREATE TEMP TABLE staged ({', '.join(_IDENTITY)})")
    stage = f"INSERT INTO temp.staged VALUES ({', '.join('?' * len(_IDENTITY))})"
    wall, cpu = time.perf_counter(), _cpu()
    for start in range(0, len(cells), args.per):
        conn.execute("BEGIN IMMEDIATE")
        conn.executemany(stage, cells[start : start + args.per])
        conn.execute(copy, (_RUN,))
        conn.execute("DELETE FROM temp.staged")
        conn.execute("COMMIT")
    wall, cpu = time.perf_counter() - wall, _cpu() - cpu
    print(
        f"{len(cells):,} cells, {args.per:,} a transaction, dropped [{args.drop}], "
        f"order {args.order}: {wall:.1f} s wall, {cpu:.1f} s CPU"
    )


if __name__ == "__main__":
    main()
