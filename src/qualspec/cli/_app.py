"""Argument parser and dispatch with one-line errors (tracebacks only with --debug).

Each command module adds its command(s) and their flags next to its ``cmd_*`` function
(``add_parser``); this module adds the global flags, the commands in their order, and
runs the chosen one. The command modules import nothing heavy until a command runs, so
``qualspec --help`` stays fast.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from collections.abc import Callable, Sequence

from qualspec.cli._args import format_as_path
from qualspec.errors import (
    AuthenticationError,
    ConfigError,
    QualspecError,
    SpecError,
)

__all__ = ["build_parser", "dispatch", "with_docs_page"]

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130

Handler = Callable[[argparse.Namespace, Sequence[str]], int]


def _add_globals(parser: argparse.ArgumentParser, default: object) -> None:
    """``--debug`` and ``--verbose``: on the top level (defaults) and on every command.

    A command's copies default to SUPPRESS, so they only set what was given after the
    command, and the flags work before or after it.
    """
    parser.add_argument(
        "--debug",
        action="store_true",
        default=False if default is not argparse.SUPPRESS else argparse.SUPPRESS,
        help="show tracebacks on errors",
    )
    parser.add_argument(
        "--verbose",
        "-v",
        action="count",
        default=default,
        help="log retries, budget stops, cache hits and slow commits to stderr (-vv: debug); "
        "run and runs show: list each comparison group's winner and reason",
    )


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The whole command tree: each command module adds its own command(s).

    Given the command line ``argv``, only the command it names is built (with every
    flag and subcommand of it), and only its module imported: building all of them took
    15-25 ms of every command's start, importing them 10-20 ms more. A command line
    naming no known command gets the whole tree (its help, its "invalid choice" error)."""
    parser = argparse.ArgumentParser(
        prog="qualspec",
        description="LLM-judged qualitative evaluation: candidates x roles x scenarios x "
        "temperatures x runs, judged per criterion, recorded, compared.",
    )
    _add_globals(parser, 0)
    parser.add_argument("--version", action="version", version=_version())
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    wanted = next((a for a in argv or () if not a.startswith("-")), None)
    for name, module, adder in _COMMANDS:  # in this order in `qualspec --help`
        if wanted is None or wanted not in _BY_NAME or name == wanted:
            add = getattr(importlib.import_module(f"qualspec.cli.{module}"), adder)
            add(commands)
    # every command takes the global flags too: `qualspec run x.yaml --debug` works
    for command in _commands(parser):
        _add_globals(command, argparse.SUPPRESS)
    return parser


# Each command, in the order of `qualspec --help`: its name, the module (in qualspec.cli)
# that adds it, and the function that does (see build_parser).
_COMMANDS: tuple[tuple[str, str, str], ...] = (
    ("init", "_init", "add_parser"),
    ("run", "_run", "add_parser"),
    ("schema", "_misc", "add_schema_parser"),
    ("runs", "_history", "add_runs_parser"),
    ("diff", "_history", "add_diff_parser"),
    ("compare", "_quality", "add_compare_parser"),
    ("insights", "_quality", "add_insights_parser"),
    ("agreement", "_agreement", "add_parser"),
    ("grader-check", "_grader_check", "add_parser"),
    ("report", "_history", "add_report_parser"),
    ("prompts", "_misc", "add_prompts_parser"),
    ("cache", "_misc", "add_cache_parser"),
    ("reference", "_reference", "add_parser"),
    ("judge-check", "_judge_check", "add_parser"),
    ("labels", "_labels", "add_parser"),
    ("test", "_test", "add_parser"),
    ("lab", "_lab", "add_lab_parser"),
    ("serve", "_lab", "add_serve_parser"),
    ("trend", "_trend", "add_parser"),
    ("rubrics", "_rubrics", "add_parser"),
)
_BY_NAME = {name for name, _, _ in _COMMANDS}


def _commands(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    """The parsers that run a command (``run``, ``runs list``, ...), not those that group them."""
    groups = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not groups:
        return [parser]
    return [
        command for group in groups for sub in group.choices.values() for command in _commands(sub)
    ]


def dispatch(ns: argparse.Namespace, argv: Sequence[str]) -> int:
    """Run the chosen command; turn errors into one line each."""
    handler: Handler | None = getattr(ns, "handler", None)
    if handler is None:
        build_parser().print_help()
        return EXIT_USAGE
    from qualspec.cli._logging import configure_logging

    configure_logging(getattr(ns, "verbose", 0))
    # the database driver's own warnings (psycopg: "error ignored terminating <Pipeline>"
    # when a server goes away mid-write) went to stderr through logging's last resort,
    # beside the one line qualspec prints for the same failure
    logging.getLogger("psycopg").addHandler(logging.NullHandler())
    refused = format_as_path(ns)
    if refused is not None:
        _error(refused)
        return EXIT_USAGE
    try:
        return handler(ns, argv)
    except KeyboardInterrupt:
        print(
            "qualspec: interrupted; finished results are recorded (resume with --resume)",
            file=sys.stderr,
        )
        return EXIT_INTERRUPTED
    except SpecError as exc:
        if ns.debug:
            _print_traceback()
        lines = [str(issue) for issue in exc.issues] or [str(exc)]
        for line in lines[:-1]:
            _error(line)
        _error(with_docs_page(lines[-1], exc))
        return EXIT_USAGE
    except ConfigError as exc:
        if ns.debug:
            _print_traceback()
        _error(with_docs_page(f"qualspec: error: {exc}", exc))
        return EXIT_USAGE
    except AuthenticationError as exc:
        if ns.debug:
            _print_traceback()
        _error(f"qualspec: run stopped: authentication failed: {exc}")
        return EXIT_FAILURE
    except QualspecError as exc:
        if ns.debug:
            _print_traceback()
        _error(f"qualspec: error: {exc}")
        return EXIT_FAILURE
    except Exception as exc:
        if ns.debug:
            raise
        _error(
            f"qualspec: internal error: {type(exc).__name__}: {exc} (rerun with --debug for "
            "the traceback)"
        )
        return EXIT_FAILURE


def with_docs_page(line: str, exc: QualspecError) -> str:
    """The error line, ending with the documentation page that explains the fix."""
    return f"{line} (see docs/{exc.docs_page})" if exc.docs_page else line


def _print_traceback() -> None:
    import traceback  # only for --debug: not at start-up

    traceback.print_exc()


def _error(text: str) -> None:
    """Print an error line to stderr, with URL passwords and keys masked."""
    from qualspec.store import display_url

    print(display_url(text), file=sys.stderr)


def _version() -> str:
    from qualspec.version import __version__

    return f"qualspec {__version__}"
