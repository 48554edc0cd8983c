"""Two processes at once: no "database is locked", nothing lost, one migration."""

from __future__ import annotations

import multiprocessing

from store_factories import open_store, write_rows

from qualspec.store import Store, head_revision


def test_two_processes_write_300_rows_each_at_once(db_url: str) -> None:
    with Store.open(db_url) as store:
        run_id = store.create_run("suite", "h", {})
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(2)
    procs = [
        ctx.Process(target=write_rows, args=(db_url, run_id, prefix, 300, barrier))
        for prefix in ("p1", "p2")
    ]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join(timeout=120)
    assert [proc.exitcode for proc in procs] == [0, 0]  # a "locked" error would exit 1
    with Store.open(db_url) as store:
        keys = store.response_keys(run_id)
        summary = store.get_run(run_id)
        versions = [p.version for p in store.list_prompts("prompt-p1")]
    assert versions == list(range(1, 31))
    assert summary.metadata == {"p1": 290, "p2": 290}
    assert keys == {f"{p}-{i}" for p in ("p1", "p2") for i in range(300)}
    assert (summary.n_responses, summary.n_judgments) == (600, 60)


def test_concurrent_opens_of_a_fresh_database_migrate_once(db_url: str) -> None:
    ctx = multiprocessing.get_context("spawn")
    barrier, results = ctx.Barrier(3), ctx.Queue()
    procs = [ctx.Process(target=open_store, args=(db_url, barrier, results)) for _ in range(3)]
    for proc in procs:
        proc.start()
    outcomes = [results.get(timeout=120) for _ in procs]
    for proc in procs:
        proc.join(timeout=60)
    assert outcomes == [("ok", head_revision())] * 3
