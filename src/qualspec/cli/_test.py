"""``qualspec test list`` and ``qualspec test run``: the test API's tests from the command
line; a test run is a stored run (``qualspec runs``, ``diff`` and ``report`` read it)."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence

__all__ = ["cmd_test_list", "cmd_test_run"]


def cmd_test_list(ns: argparse.Namespace, argv: Sequence[str]) -> int:
    """Print the registered tests: name, description, where each is defined."""
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from qualspec.testkit import available_tests, load_test

    console = Console(highlight=False)
    tests = available_tests()
    if not tests:
        console.print("No tests registered: install a package with qualspec.tests entry points")
        return 0
    table = Table()
    table.add_column("test", no_wrap=True)
    table.add_column("description", overflow="fold")
    table.add_column("defined in", overflow="fold")
    for name, where in tests.items():
        try:
            description = load_test(name).description
        except Exception as exc:  # a broken plugin is listed, with why, never fatal
            description = f"(cannot be loaded: {' '.join(str(exc).split())[:120]})"
        table.add_row(Text(name), Text(description), Text(where))
    console.print(table)
    return 0


def cmd_test_run(ns: argparse.Namespace, argv: Sequence[str]) -> int:
    """Run a test on the SUTs; print each SUT's results. Exit 1 unless it finished."""
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from qualspec.engine import ExecuteOptions
    from qualspec.testkit import load_test

    test = load_test(ns.test_name)
    options = ExecuteOptions(
        use_cache=not ns.no_cache, refresh=ns.refresh, max_cost=ns.max_cost, calibrate=False
    )
    outcome = test.run(ns.sut, db=ns.db, options=options, limit=ns.limit, resume=ns.resume)
    if ns.json:
        payload = {"run_id": outcome.run_id, "status": outcome.status, "results": outcome.results}
        print(json.dumps(payload, indent=2, sort_keys=True))
    else:
        console = Console(highlight=False)
        names = list(dict.fromkeys(k for found in outcome.results.values() for k in found))
        console.print(Text(f"{test.test_name()}: run {outcome.run_id} ({outcome.status})"))
        table = Table()
        table.add_column("result", no_wrap=True)
        for sut in outcome.results:
            table.add_column(sut, justify="right", no_wrap=True)
        for name in names:
            cells = [_number(outcome.results[sut].get(name)) for sut in outcome.results]
            table.add_row(Text(name), *cells)
        console.print(table)
        for warning in outcome.warnings:
            console.print(Text(f"warning: {warning}"))
        console.print(Text(f"Stored as run {outcome.run_id}: qualspec runs show {outcome.run_id}"))
    return 0 if outcome.status == "finished" else 1


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:.3g}"
