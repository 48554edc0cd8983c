"""``qualspec test list`` and ``qualspec test run``: the test API's tests from the command
line; a test run is a stored run (``qualspec runs``, ``diff`` and ``report`` read it)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import TYPE_CHECKING

from qualspec.cli._args import Commands, add_db, positive_float, positive_int

if TYPE_CHECKING:
    from qualspec.testkit import PromptResponseTest

__all__ = ["add_parser", "cmd_test_list", "cmd_test_run"]


def add_parser(commands: Commands) -> None:
    """``qualspec test list|run``."""
    test = commands.add_parser("test", help="prompt-response tests (qualspec.testkit): list, run")
    actions = test.add_subparsers(dest="test_command", metavar="ACTION", required=True)
    tl = actions.add_parser("list", help="the registered tests (entry point group qualspec.tests)")
    tl.set_defaults(handler=cmd_test_list)
    tr = actions.add_parser("run", help="run a test on one or more systems under test")
    tr.add_argument("test_name", metavar="NAME", help="a registered test, or module:TestClass")
    tr.add_argument(
        "--sut",
        action="append",
        required=True,
        metavar="PROVIDER/MODEL",
        help="a system under test (repeat for several)",
    )
    tr.add_argument("--limit", type=positive_int, metavar="N", help="the first N items only")
    tr.add_argument(
        "--resume",
        nargs="?",
        const=True,
        default=None,
        metavar="RUN",
        help="finish the latest unfinished run of this test (or run RUN)",
    )
    tr.add_argument("--no-cache", action="store_true", help="neither read nor use the cache")
    tr.add_argument("--refresh", action="store_true", help="call again and overwrite the cache")
    tr.add_argument("--max-cost", type=positive_float, metavar="USD", help="stop at this cost")
    tr.add_argument("--json", action="store_true", help="print the results as JSON")
    tr.add_argument(
        "--dry-run",
        action="store_true",
        help="list every prompt the test would send to each SUT; call nothing",
    )
    add_db(tr)
    tr.set_defaults(handler=cmd_test_run)


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
    import json

    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from qualspec.engine import ExecuteOptions
    from qualspec.testkit import load_test

    test = load_test(ns.test_name)
    if ns.dry_run:
        return _dry_run(test, ns)
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


def _dry_run(test: PromptResponseTest, ns: argparse.Namespace) -> int:
    """Print every prompt the test would send, per SUT; send nothing."""
    import json

    planned = test.plan_prompts(ns.sut, limit=ns.limit)
    if ns.json:
        rows = [
            {
                "sut": p.sut,
                "item_id": p.item_id,
                "prompt_id": p.prompt_id,
                "messages": [{"role": role, "content": text} for role, text in p.messages],
                "params": dict(p.params),
                "temperature": p.temperature,
            }
            for p in planned
        ]
        print(
            json.dumps({"test": test.test_name(), "calls": len(planned), "prompts": rows}, indent=2)
        )
        return 0
    # plain lines, never wrapped: a prompt is shown as it will be sent
    suts = list(dict.fromkeys(p.sut for p in planned))
    items = len(dict.fromkeys(p.item_id for p in planned))
    print(
        f"Dry run: nothing will be called. {test.test_name()}: {_n(items, 'item')}, "
        f"{_n(len(planned), 'prompt')} to {_n(len(suts), 'SUT')}"
    )
    for sut in suts:
        mine = [p for p in planned if p.sut == sut]
        print(f"{sut}: {_n(len(mine), 'prompt')}")
        for p in mine:
            for role, text in p.messages:
                head = f"  {p.prompt_id} [{role}] "
                lines = text.splitlines() or [""]
                print(head + lines[0])
                for line in lines[1:]:
                    print(" " * len(head) + line)
    annotators = [
        f"{name} ({a.model})" for name, a in test.get_annotators().items() if a.model is not None
    ]
    if annotators:
        print(f"Annotators that call a model on each answer (not listed): {', '.join(annotators)}")
    return 0


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:.3g}"
