"""``qualspec schema``, ``qualspec prompts ...`` and ``qualspec cache ...``."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from qualspec.cli._args import Commands, add_cache_ttl, add_db, positive_int

__all__ = [
    "add_cache_parser",
    "add_prompts_parser",
    "add_schema_parser",
    "cmd_cache_clear",
    "cmd_cache_stats",
    "cmd_prompts_diff",
    "cmd_prompts_list",
    "cmd_prompts_show",
    "cmd_schema",
]


def add_schema_parser(commands: Commands) -> None:
    """``qualspec schema``."""
    schema = commands.add_parser("schema", help="print the JSON Schema of the YAML suite format")
    schema.set_defaults(handler=cmd_schema)


def cmd_schema(ns: argparse.Namespace, argv: Sequence[str]) -> int:
    """Print the JSON Schema of the YAML suite format."""
    import json

    from qualspec.spec import json_schema

    sys.stdout.write(json.dumps(json_schema(), indent=2) + "\n")
    return 0


def add_prompts_parser(commands: Commands) -> None:
    """``qualspec prompts list|show|diff``."""
    prompts = commands.add_parser("prompts", help="versioned prompts: list, show, diff")
    actions = prompts.add_subparsers(dest="prompts_command", metavar="ACTION", required=True)
    pl = actions.add_parser("list", help="every prompt name with its versions")
    add_db(pl)
    pl.set_defaults(handler=cmd_prompts_list)
    ps = actions.add_parser("show", help="one prompt version's text")
    ps.add_argument("name")
    ps.add_argument("version", type=positive_int, nargs="?")
    add_db(ps)
    ps.set_defaults(handler=cmd_prompts_show)
    pd = actions.add_parser("diff", help="unified diff of two versions of a prompt")
    pd.add_argument("name")
    pd.add_argument("version_a", type=positive_int)
    pd.add_argument("version_b", type=positive_int)
    add_db(pd)
    pd.set_defaults(handler=cmd_prompts_diff)


def cmd_prompts_list(ns: argparse.Namespace, argv: Sequence[str]) -> int:
    """List every prompt name with its versions."""
    from qualspec.store import Store

    with Store.open(ns.db) as store:
        prompts = store.list_prompts()
    if not prompts:
        print("No prompts recorded yet: they are stored when a run starts.")
        return 0
    width = max(len(p.name) for p in prompts)
    for p in prompts:
        first = p.text.strip().splitlines()[0] if p.text.strip() else ""
        first = first if len(first) <= 60 else first[:57] + "..."
        stamp = p.created_at.strftime("%Y-%m-%d %H:%M")
        print(f"{p.name:<{width}}  v{p.version:<3} {p.content_hash[:10]}  {stamp}  {first}")
    return 0


def cmd_prompts_show(ns: argparse.Namespace, argv: Sequence[str]) -> int:
    """Print one prompt version (the latest when no version is given)."""
    from qualspec.errors import StoreError
    from qualspec.store import Store

    with Store.open(ns.db) as store:
        if ns.version is None:
            versions = [p for p in store.list_prompts() if p.name == ns.name]
            if not versions:
                raise StoreError(f"no prompt named '{ns.name}': see qualspec prompts list")
            prompt = max(versions, key=lambda p: p.version)
        else:
            prompt = store.get_prompt(ns.name, ns.version)
    sys.stdout.write(prompt.text.rstrip("\n") + "\n")
    return 0


def cmd_prompts_diff(ns: argparse.Namespace, argv: Sequence[str]) -> int:
    """Unified diff between two versions of a prompt."""
    import difflib

    from qualspec.store import Store

    with Store.open(ns.db) as store:
        a = store.get_prompt(ns.name, ns.version_a)
        b = store.get_prompt(ns.name, ns.version_b)
    # whole lines without their ends, joined with one: a text without a final newline
    # neither runs into the next diff line nor leaves the output without a last newline
    lines = difflib.unified_diff(
        a.text.splitlines(),
        b.text.splitlines(),
        fromfile=f"{ns.name} v{a.version}",
        tofile=f"{ns.name} v{b.version}",
        lineterm="",
    )
    out = "\n".join(lines)
    sys.stdout.write(
        out + "\n" if out else f"{ns.name} v{a.version} and v{b.version} are identical\n"
    )
    return 0


def add_cache_parser(commands: Commands) -> None:
    """``qualspec cache stats|clear``."""
    cache = commands.add_parser("cache", help="the response cache: stats, clear")
    actions = cache.add_subparsers(dest="cache_command", metavar="ACTION", required=True)
    cs = actions.add_parser("stats", help="entries and size per kind")
    cs.add_argument("--json", action="store_true", help="print the numbers as JSON")
    add_cache_ttl(cs, "count as expired what a run with these lifetimes would not read")
    add_db(cs)
    cs.set_defaults(handler=cmd_cache_stats)
    cc = actions.add_parser("clear", help="delete cache entries")
    cc.add_argument("--kind", help="only this kind (candidate, judge, reference)")
    cc.add_argument(
        "--expired",
        action="store_true",
        help="only entries a run would not read now (see --cache-ttl)",
    )
    add_cache_ttl(cc, "with --expired: remove what a run with these lifetimes would not read")
    add_db(cc)
    cc.set_defaults(handler=cmd_cache_clear)


def cmd_cache_stats(ns: argparse.Namespace, argv: Sequence[str]) -> int:
    """Entries and sizes in the response cache."""
    import json

    from qualspec.store import Store

    ttl = _lifetimes(ns)
    with Store.open(ns.db) as store:
        stats = store.cache_stats(ttl=ttl)
    if ns.json:
        stats = {**stats, "ttl": ttl}  # what "expired" was counted with
        sys.stdout.write(json.dumps(stats, indent=2, default=str) + "\n")
        return 0
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    console = Console(highlight=False)
    if not stats["entries"]:
        console.print("The cache is empty: answers are cached as runs make calls.")
        return 0
    table = Table()
    table.add_column("kind", no_wrap=True)
    for name in ("entries", "expired", "size"):
        table.add_column(name, justify="right", no_wrap=True)
    table.add_column("oldest (UTC)", no_wrap=True)
    table.add_column("newest (UTC)", no_wrap=True)

    def row(name: str, s: dict[str, Any], style: str | None = None) -> None:
        table.add_row(
            Text(name, style=style or ""), str(s["entries"]), str(s["expired"]),
            _size(int(s["bytes"] or 0)), _stamp(s["oldest"]), _stamp(s["newest"]),
        )  # fmt: skip

    for kind, s in sorted(stats["kinds"].items()):
        row(kind, s)
    row("total", stats, "bold")
    console.print(table)
    console.print(f"expired: what a run would not read now ({_describe_ttl(ttl)}; --cache-ttl)")
    return 0


def _lifetimes(ns: argparse.Namespace) -> dict[str, float | None]:
    """The lifetimes a run with the same ``--cache-ttl`` reads the cache with (kind ->
    seconds, None: forever): the run's defaults for the kinds not given."""
    from qualspec.cli._run import _cache_ttl

    return _cache_ttl(list(getattr(ns, "cache_ttl", None) or []))


def _describe_ttl(ttl: dict[str, float | None]) -> str:
    """``candidate never, judge never, reference after 86400 s``."""
    return ", ".join(
        f"{kind} never" if seconds is None else f"{kind} after {seconds:g} s"
        for kind, seconds in ttl.items()
    )


def _size(n: int) -> str:
    """Bytes as a person reads them: 512 B, 1.5 KiB, 2.0 MiB."""
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{n} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{n} B"  # pragma: no cover (the loop always returns)


def _stamp(value: Any) -> str:
    if value is None:
        return "-"
    return value.strftime("%Y-%m-%d %H:%M") if hasattr(value, "strftime") else str(value)[:16]


def cmd_cache_clear(ns: argparse.Namespace, argv: Sequence[str]) -> int:
    """Delete cache entries (all, one kind, or only expired ones)."""
    from qualspec.store import Store

    if getattr(ns, "cache_ttl", None) and not ns.expired:
        from qualspec.errors import ConfigError

        # without --expired, clear removes everything: a lifetime there is a mistake
        raise ConfigError("cache clear: --cache-ttl says what is expired: add --expired")
    ttl = _lifetimes(ns)
    with Store.open(ns.db) as store:
        removed = store.cache_clear(kind=ns.kind, expired_only=ns.expired, ttl=ttl)
    if ns.expired:
        print(f"Removed {removed} expired cache entries ({_describe_ttl(ttl)}).")
    else:
        print(f"Removed {removed} cache entries.")
    return 0
