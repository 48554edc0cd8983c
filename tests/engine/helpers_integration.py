"""Helpers for the engine integration tests: the CLI and the fake server as real processes.

The CLI runs as ``python -c "from qualspec.cli import main; main()" ...`` in a subprocess
with its own working directory and ``QUALSPEC_HOME`` (so its SQLite file is
``<home>/qualspec.db``). The fake server runs either in its own process
(``python -m qualspec.testing.fakeserver``, counters read over HTTP at ``/_stats``) or in
the test process (``FakeServer``) when a test needs its request log.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from qualspec.store import Store

KEY_ENV = "FAKE_KEY"
DEFAULT_KEY = "sk-test-integration"
CLI_PREFIX = (sys.executable, "-c", "from qualspec.cli import main; main()")


# ---------------------------------------------------------------- the fake server process


@dataclass
class ServerProcess:
    """A fake server running in its own process."""

    process: subprocess.Popen[str]
    base_url: str

    @property
    def root(self) -> str:
        return self.base_url[: -len("/v1")]

    def stats(self) -> dict[str, Any]:
        with urllib.request.urlopen(f"{self.root}/_stats", timeout=10) as response:
            data: dict[str, Any] = json.loads(response.read())
        return data

    def calls(self) -> int:
        """Requests received on the model endpoints so far."""
        return int(self.stats()["calls"])

    def control(self, **settings: Any) -> None:
        """POST ``/_control`` (``latency=``, ``fail_next=``, ``reset=``, ...)."""
        request = urllib.request.Request(
            f"{self.root}/_control",
            data=json.dumps(settings).encode(),
            headers={"Content-Type": "application/json"},
            method="POST",
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            assert json.loads(response.read()) == {"ok": True}


@contextmanager
def fake_server_process(latency: float = 0.05) -> Iterator[ServerProcess]:
    """``python -m qualspec.testing.fakeserver`` on a free port; terminated afterwards."""
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "qualspec.testing.fakeserver",
            "--port",
            "0",
            "--latency",
            str(latency),
            "--no-log",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        base_url = process.stdout.readline().strip()
        assert base_url.startswith("http://127.0.0.1:"), base_url
        yield ServerProcess(process, base_url)
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stdout is not None:
            process.stdout.close()


# ---------------------------------------------------------------- suites


def write_suite(
    path: Path,
    base_url: str,
    *,
    n_inputs: int,
    name: str = "integration",
    criteria: Sequence[str] = ("is an answer",),
    key_env: str = KEY_ENV,
    runs: int | None = None,
    judge: str = "fake/judge",
) -> Path:
    """A YAML suite: one candidate ``fake/model-a``, one scenario over ``n_inputs`` rows.

    Rows are ``{id: rNNN, i: 'NNN'}`` (fixed width, so every prompt and answer has the
    same token count on the fake server); the judge is ``judge`` (default ``fake/judge``,
    on the same server). ``runs`` sets ``runs_per_temperature`` when given.
    """
    rows = "\n".join(f"      - {{id: r{i:03d}, i: '{i:03d}'}}" for i in range(n_inputs))
    crits = ", ".join(json.dumps(c) for c in criteria)
    path.write_text(
        f"name: {name}\n"
        "candidates: [{name: c, model: fake/model-a}]\n"
        "scenarios:\n"
        "  - name: s\n"
        '    prompt: "question {{ i }}"\n'
        f"    criteria: [{crits}]\n"
        "    inputs:\n"
        f"{rows}\n"
        + (f"runs_per_temperature: {runs}\n" if runs is not None else "")
        + f"judge: {judge}\n"
        "providers:\n"
        f'  fake: {{type: openai, base_url: "{base_url}", api_key_env: {key_env}}}\n',
        encoding="utf-8",
    )
    return path


# ---------------------------------------------------------------- the CLI


def cli_env(home: Path, key: str = DEFAULT_KEY, **extra: str) -> dict[str, str]:
    """The environment of a CLI subprocess: this one, plus its home and the fake key."""
    env = dict(os.environ)
    env["QUALSPEC_HOME"] = str(home)
    env[KEY_ENV] = key
    env["COLUMNS"] = "200"  # keep rich from wrapping lines we read
    env.pop("QUALSPEC_DATABASE_URL", None)
    env.update(extra)
    return env


def run_cli(
    args: Sequence[str], *, cwd: Path, env: dict[str, str], timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """Run ``qualspec ARGS`` to completion and return its exit code and output."""
    return subprocess.run(
        [*CLI_PREFIX, *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


# Runs ARGV with SIGINT back at its default disposition (``os.execv`` keeps it). A
# non-interactive shell starts a background job (``pytest ... &``, CI runners, job
# schedulers) with SIGINT ignored, a child inherits that, and Python then installs no
# KeyboardInterrupt handler: Ctrl-C sent to the CLI would be ignored. A child a test sends
# SIGINT to starts as it would from a terminal.
_DEFAULT_SIGINT = (
    "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
    "os.execv(sys.argv[1], sys.argv[1:])"
)


def with_default_sigint(argv: Sequence[str]) -> list[str]:
    """``argv`` run through a launcher that resets SIGINT to its default before exec."""
    return [sys.executable, "-c", _DEFAULT_SIGINT, *argv]


def start_cli(
    args: Sequence[str], *, cwd: Path, env: dict[str, str], default_sigint: bool = True
) -> subprocess.Popen[str]:
    """Start ``qualspec ARGS`` in the background (output captured), with SIGINT at its
    default disposition whatever ours is, so that a test can interrupt it like Ctrl-C
    (``default_sigint=False``: it inherits ours)."""
    argv = [*CLI_PREFIX, *args]
    return subprocess.Popen(
        with_default_sigint(argv) if default_sigint else argv,
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@contextmanager
def background_cli(
    args: Sequence[str], *, cwd: Path, env: dict[str, str], default_sigint: bool = True
) -> Iterator[subprocess.Popen[str]]:
    """``start_cli`` that is always killed (and reaped) when the block ends."""
    process = start_cli(args, cwd=cwd, env=env, default_sigint=default_sigint)
    try:
        yield process
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGKILL)
        process.communicate(timeout=30)


def describe(result: subprocess.CompletedProcess[str]) -> str:
    """Exit code and output of a CLI run, for assertion messages."""
    return f"rc={result.returncode}\n--- stdout\n{result.stdout}\n--- stderr\n{result.stderr}"


def wait_for(predicate: Callable[[], bool], *, timeout: float, interval: float = 0.005) -> bool:
    """Poll ``predicate`` until it is true (True) or ``timeout`` seconds pass (False)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return predicate()


# ---------------------------------------------------------------- the store


def sqlite_url(home: Path) -> str:
    """The URL of the CLI's default database under ``home``."""
    return f"sqlite:///{home / 'qualspec.db'}"


@contextmanager
def open_store(home: Path) -> Iterator[Store]:
    """The CLI's SQLite store under ``home``, closed afterwards."""
    store = Store.open(sqlite_url(home))
    try:
        yield store
    finally:
        store.close()


def run_ids(home: Path) -> list[str]:
    """Ids of the runs in the store under ``home``, oldest first."""
    with open_store(home) as store:
        return [run.id for run in reversed(store.list_runs(limit=1000))]


# ---------------------------------------------------------------- secrets


def files_containing(needle: str, root: Path) -> list[str]:
    """Every file under ``root`` whose bytes contain ``needle`` (UTF-8), as relative paths."""
    raw = needle.encode()
    found = []
    for path in sorted(root.rglob("*")):
        if path.is_file() and raw in path.read_bytes():
            found.append(str(path.relative_to(root)))
    return found


# ---------------------------------------------------------------- PostgreSQL


def store_conftest() -> Any:
    """``tests/store/conftest.py`` as a module, for its PostgreSQL skip/fail rule and URLs."""
    import importlib.util

    path = Path(__file__).resolve().parents[1] / "store" / "conftest.py"
    spec = importlib.util.spec_from_file_location("_qualspec_tests_store_conftest", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def recorded_responses(home: Path) -> int:
    """Responses committed to the CLI's SQLite file so far (0 before it exists)."""
    import sqlite3

    path = home / "qualspec.db"
    if not path.exists():
        return 0
    conn = sqlite3.connect(path, timeout=30)
    try:
        return int(conn.execute("SELECT count(*) FROM responses").fetchone()[0])
    except sqlite3.OperationalError:  # the schema is not there yet
        return 0
    finally:
        conn.close()


# ---------------------------------------------------------------- fault injection


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def postgres_bindir() -> Path | None:
    """Where ``initdb`` and ``pg_ctl`` are: ``$QUALSPEC_TEST_PG_BIN``, PATH, or Debian's."""
    import glob
    import shutil

    configured = os.environ.get("QUALSPEC_TEST_PG_BIN")
    if configured:
        return Path(configured)
    found = shutil.which("pg_ctl")
    if found and shutil.which("initdb"):
        return Path(found).parent
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"), reverse=True)
    return Path(candidates[0]).parent if candidates else None


@dataclass
class PrivatePostgres:
    """A throw-away PostgreSQL cluster of this test alone (trust auth, 127.0.0.1:PORT).

    It may be stopped, started and restarted at will: unlike the shared test server,
    nothing else uses it.
    """

    bindir: Path
    root: Path  # socket, log and data live here; owned by the server's user
    port: int
    prefix: tuple[str, ...]  # ("runuser", "-u", "postgres", "--") when we are root

    @property
    def data(self) -> Path:
        return self.root / "data"

    @property
    def url(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def log_tail(self, n: int = 20) -> str:
        try:
            return "\n".join((self.root / "server.log").read_text().splitlines()[-n:])
        except OSError as exc:
            return f"(no server log: {exc})"

    def _ctl(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        options = (
            f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 "
            "-c fsync=off -c full_page_writes=off"
        )
        result = subprocess.run(
            [
                *self.prefix,
                str(self.bindir / "pg_ctl"),
                "-D",
                str(self.data),
                "-l",
                str(self.root / "server.log"),
                "-o",
                options,
                "-w",
                "-t",
                "60",
                *args,
            ],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        if check and result.returncode != 0:
            raise RuntimeError(
                f"pg_ctl {' '.join(args)} failed: {result.stdout}{result.stderr}\n{self.log_tail()}"
            )
        return result

    def start(self) -> None:
        self._ctl("start")

    def stop(self, mode: str = "fast") -> None:
        self._ctl("stop", "-m", mode)

    def restart(self, mode: str = "fast") -> None:
        self._ctl("restart", "-m", mode)

    def count(self, table: str = "responses") -> int:
        """Rows in ``table``; 0 while the server or the table is not there."""
        import psycopg

        try:
            with psycopg.connect(self.url, autocommit=True, connect_timeout=5) as conn:
                row = conn.execute(f"SELECT count(*) FROM {table}").fetchone()
        except psycopg.Error:
            return 0
        return int(row[0]) if row else 0


@contextmanager
def postgres_template() -> Iterator[Path]:
    """A data folder made by ``initdb`` once, for :func:`private_postgres` to copy (a copy
    takes a fraction of an ``initdb``); deleted afterwards.

    Raises RuntimeError when it cannot be made (no server binaries, no postgres user).
    """
    with _owned_folder() as (root, prefix):
        bindir = _bindir()
        init = subprocess.run(
            [
                *prefix,
                str(bindir / "initdb"),
                "-D",
                str(root / "data"),
                "-A",
                "trust",
                "-U",
                "postgres",
                "-E",
                "UTF8",
                "--no-sync",
            ],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        if init.returncode != 0:
            raise RuntimeError(f"initdb failed: {init.stdout}{init.stderr}")
        yield root / "data"


@contextmanager
def private_postgres(template: Path | None = None) -> Iterator[PrivatePostgres]:
    """A private cluster on a free port, started; stopped and deleted afterwards. Its data
    folder is a copy of ``template`` (from :func:`postgres_template`), or a fresh one.

    Raises RuntimeError when it cannot be made (no server binaries, no postgres user).
    """
    with contextlib.ExitStack() as stack:
        if template is None:
            template = stack.enter_context(postgres_template())
        root, prefix = stack.enter_context(_owned_folder())
        # cp -a keeps the owner and the 0700 mode the server insists on
        copied = subprocess.run(
            ["cp", "-a", str(template), str(root / "data")],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        if copied.returncode != 0:
            raise RuntimeError(f"copying the template cluster failed: {copied.stderr}")
        cluster = PrivatePostgres(_bindir(), root, free_port(), prefix)
        cluster.start()
        try:
            yield cluster
        finally:
            cluster._ctl("stop", "-m", "immediate", check=False)


def _bindir() -> Path:
    bindir = postgres_bindir()
    if bindir is None or not (bindir / "initdb").exists():
        raise RuntimeError(
            "PostgreSQL server binaries (initdb, pg_ctl) not found: install them or set "
            "QUALSPEC_TEST_PG_BIN"
        )
    return bindir


@contextmanager
def _owned_folder() -> Iterator[tuple[Path, tuple[str, ...]]]:
    """A temporary folder the server's user owns, and the prefix that runs a command as
    that user (postgres refuses to run as root: then as the postgres user); deleted after."""
    import shutil
    import tempfile

    _bindir()  # no binaries: say so before making anything
    prefix: tuple[str, ...] = ()
    root = Path(tempfile.mkdtemp(prefix="qs-pg-"))
    try:
        if os.geteuid() == 0:
            import pwd

            try:
                user = pwd.getpwnam("postgres")
            except KeyError as exc:
                raise RuntimeError("running as root but there is no 'postgres' user") from exc
            os.chown(root, user.pw_uid, user.pw_gid)
            prefix = ("runuser", "-u", "postgres", "--")
        yield root, prefix
    finally:
        shutil.rmtree(root, ignore_errors=True)


def sqlite_count(path: Path, table: str = "responses") -> int:
    """Rows in ``table`` of a SQLite file; 0 before the file or the table exists."""
    import sqlite3

    if not path.exists():
        return 0
    conn = sqlite3.connect(path, timeout=30)
    try:
        return int(conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0])
    except sqlite3.OperationalError:
        return 0
    finally:
        conn.close()


@contextmanager
def tmpfs(path: Path, size: str) -> Iterator[Path]:
    """Mount a tmpfs of ``size`` (e.g. ``"8m"``) on ``path``; unmounted afterwards.

    Raises PermissionError when mounting is not permitted here (not root, a container
    without CAP_SYS_ADMIN).
    """
    path.mkdir(parents=True, exist_ok=True)
    try:
        mounted = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={size},mode=0755", "tmpfs", str(path)],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except FileNotFoundError as exc:
        raise PermissionError(f"cannot mount a tmpfs on {path}: no mount command") from exc
    if mounted.returncode != 0:
        raise PermissionError(f"cannot mount a tmpfs on {path}: {mounted.stderr.strip()}")
    try:
        yield path
    finally:
        done = subprocess.run(["umount", str(path)], capture_output=True, timeout=30, check=False)
        if done.returncode != 0:  # something still has a file open there: detach it
            subprocess.run(["umount", "-l", str(path)], capture_output=True, timeout=30)


def resize_tmpfs(path: Path, size: str) -> None:
    """Grow (or shrink) a mounted tmpfs."""
    subprocess.run(
        ["mount", "-o", f"remount,size={size}", str(path)],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )


def fill_disk(folder: Path) -> Path:
    """Write a file in ``folder`` until its file system is full; return the file."""
    import errno

    filler = folder / "filler.bin"
    with open(filler, "wb", buffering=0) as out:
        for chunk in (1 << 20, 1 << 12, 1 << 9):
            block = b"\0" * chunk
            while True:
                try:
                    out.write(block)
                except OSError as exc:
                    if exc.errno != errno.ENOSPC:
                        raise
                    break
    return filler
