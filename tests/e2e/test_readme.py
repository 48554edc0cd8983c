"""The README's and the docs' commands and code run as written.

The README's first set-up command runs on the embedded model (no API key: that is its
promise). Every other example, in README.md and docs/**/*.md, runs against the project's
fake OpenAI- and Anthropic-compatible server: the tour and the guides address a provider
through ``OPENAI_BASE_URL``/``ANTHROPIC_BASE_URL``, which is what a user with any such server
does; the examples' ``local/smollm2`` is pointed at the same server (copied suites and the
commands' text), since those pages are not about the embedded model. Every ```bash line
starting with ``qualspec `` and every ```python block runs (unless the line just before the
block is ``<!-- not-run: reason -->``), and every ```yaml block parses, a whole suite through
the suite loader. A block just after ``<!-- file: NAME -->`` is written to NAME in the
folder the commands run in before its page's commands run (the page's ``qualspec run
NAME`` then runs that very suite).
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

import qualspec
from qualspec.cli import main
from qualspec.store import Store
from qualspec.testing import FakeServer

BLOCK = re.compile(r"```(\w+)\n(.*?)```", re.S)
NOT_RUN = re.compile(r"<!-- not-run: [^>]+ -->\s*\Z")
FILE = re.compile(r"<!-- file: ([\w.-]+) -->\s*\Z")
FAKE_MODEL = "openai/fake-model"


def _blocks(text: str, lang: str) -> list[str]:
    """The bodies of the ```lang blocks, less those marked not-run."""
    found = []
    for match in BLOCK.finditer(text):
        if match.group(1) == lang and not NOT_RUN.search(text[: match.start()]):
            found.append(match.group(2))
    return found


def _write_files(text: str, folder: Path) -> None:
    """Write each block marked ``<!-- file: NAME -->`` to ``folder / NAME``."""
    for match in BLOCK.finditer(text):
        named = FILE.search(text[: match.start()])
        if named:
            (folder / named.group(1)).write_text(_on_fake_server(match.group(2)))


def _pages(repo_root: Path) -> Iterator[tuple[str, str]]:
    yield "README.md", (repo_root / "README.md").read_text()
    for page in sorted((repo_root / "docs").rglob("*.md")):
        yield str(page.relative_to(repo_root)), page.read_text()


def test_setup_commands_come_first_and_ci_runs_the_test_command(repo_root: Path) -> None:
    readme = (repo_root / "README.md").read_text()
    first = BLOCK.search(readme)
    assert first is not None and first.start() < readme.index("\n## ")
    lines = [line for line in first.group(2).splitlines() if line.strip()]
    assert len(lines) == 2
    assert (
        lines[0].startswith("pip install") and "qualspec run examples/quickstart.yaml" in lines[0]
    )
    assert lines[1].startswith("pip install") and "pytest" in lines[1]
    ci = (repo_root / ".ci" / "run").read_text().splitlines()
    assert lines[1] in ci, "the README's test command must be the one .ci/run runs"
    # and it ends with the ten slowest tests (pytest's addopts, so the command stays as is)
    ini = tomllib.loads((repo_root / "pyproject.toml").read_text())["tool"]["pytest"]
    assert "--durations=10" in ini["ini_options"]["addopts"].split() + lines[1].split()
    # the site is built strictly after the tests and before the linters
    build = "mkdocs build --strict"
    assert build in (repo_root / ".ci" / "run").read_text()
    text = "\n".join(ci)
    assert text.index(lines[1]) < text.index(build) < text.index("ruff check")


def _sh(command: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    bindir = os.path.dirname(sys.executable)
    env = {**env, "PATH": f"{bindir}:{env.get('PATH', '')}"}
    # its own process group, so that a timeout ends the qualspec process too, not only the shell
    with subprocess.Popen(
        command,
        shell=True,
        cwd=cwd,
        env=env,
        text=True,
        stdin=subprocess.DEVNULL,  # a command that asks (qualspec init) takes its defaults
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    ) as proc:
        try:
            # a command on the embedded model (up to 100 calls with calibration and re-asks)
            # took over 15 minutes at a load average of 10 on 2 cores
            stdout, stderr = proc.communicate(timeout=1800)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            raise
    return subprocess.CompletedProcess(command, proc.returncode, stdout, stderr)


def _qualspec(command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run one ``qualspec ...`` command line in this process, in ``cwd``, as its script would
    (the environment is this process's; stdin is empty, not a terminal, as for a script).

    In-process, not a subprocess: the page's commands are about what qualspec does, and a
    process start-up per command (over 50 of them) took most of this test's time on a loaded
    machine. ``> FILE`` (the only shell syntax the pages use) writes stdout to FILE. What the
    script itself adds (its start-up, its exit) is tested by tests/test_package.py.
    """
    argv = shlex.split(command)
    assert argv[0] == "qualspec", command
    redirect = None
    if ">" in argv:
        at = argv.index(">")
        argv, redirect = argv[:at], argv[at + 1]
    out, err = io.StringIO(), io.StringIO()
    logger = logging.getLogger("qualspec")
    handlers, level = list(logger.handlers), logger.level  # --verbose adds a handler
    here = Path.cwd()
    try:
        os.chdir(cwd)
        with (
            contextlib.redirect_stdout(out),
            contextlib.redirect_stderr(err),
            _empty_stdin(),
        ):
            try:
                main(argv[1:])
                code = 0
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    finally:
        os.chdir(here)
        logger.handlers[:] = handlers
        logger.setLevel(level)
    if redirect is not None:
        (cwd / redirect).write_text(out.getvalue())
    return subprocess.CompletedProcess(command, code, out.getvalue(), err.getvalue())


@contextlib.contextmanager
def _empty_stdin() -> Iterator[None]:
    saved = sys.stdin
    sys.stdin = io.StringIO("")  # a command that asks (qualspec init) takes its defaults
    try:
        yield
    finally:
        sys.stdin = saved


@pytest.mark.timeout(3600)  # the embedded model on a busy 2-core machine is slow
@pytest.mark.embedded_model
def test_the_first_setup_command_runs_the_quickstart_on_the_embedded_model(
    repo_root: Path, tmp_path: Path
) -> None:
    readme = (repo_root / "README.md").read_text()
    shutil.copytree(repo_root / "examples", tmp_path / "examples")
    env = dict(os.environ)
    env["QUALSPEC_HOME"] = str(tmp_path / ".qualspec")
    env.pop("QUALSPEC_DATABASE_URL", None)

    setup = _blocks(readme, "bash")[0].splitlines()[0]
    first_run = setup.split("&&", 1)[1].strip()
    # --timeout: no call time limit a loaded machine could reach (the default is 120 s)
    result = _sh(first_run + " --quiet --timeout 600", tmp_path, env)
    assert result.returncode == 0, result.stderr
    assert "SCENARIO: capital_of_france" in result.stdout
    db = f"sqlite:///{tmp_path / '.qualspec' / 'qualspec.db'}"
    with Store.open(db) as store:
        # the quickstart's run (its judge calibration is recorded in a session run of its own)
        assert [r for r in store.list_runs() if r.suite_name == "Quickstart"]
    results = sorted((tmp_path / "results").glob("quickstart_*.json"))
    assert len(results) == 1
    data = json.loads(results[0].read_text())
    assert data["schema_version"] == "1.2" and len(data["responses"]) == 8
    # the quickstart's expect: checks give true results on the embedded model: at least one
    # PASS (the capital names Paris at temperature 0) and one FAIL (no paragraph in 25 words)
    checks = [j for r in data["responses"] for j in r["judgments"] if j["evaluator"] == "expect"]
    assert len(checks) == 8 * 2
    assert any(j["passed"] is True for j in checks) and any(j["passed"] is False for j in checks)
    assert "check PASS" in result.stdout or "check FAIL" in result.stdout
    # the embedded judge's calibration verdict is measured and shown
    assert "Judge check: judge local/smollm2" in " ".join(result.stdout.split())
    assert data["run"]["metadata"]["judge_calibration"]["criteria"]["n_pairs"] == 2


def _on_fake_server(text: str) -> str:
    return text.replace("local/smollm2", FAKE_MODEL)


def _seed_runs(tmp_path: Path) -> dict[str, str]:
    """Two runs of the quickstart (the second with one prompt edited) for RUN_ID, RUN_A and
    RUN_B, and their results files as results/a.json and results/b.json."""
    suite = tmp_path / "examples" / "quickstart.yaml"
    result = _qualspec(
        "qualspec run examples/quickstart.yaml --quiet --output results/a.json", tmp_path
    )
    assert result.returncode == 0, result.stderr
    suite.write_text(
        suite.read_text().replace(
            "What is the capital of France?", "Name the capital city of France."
        )
    )
    result = _qualspec(
        "qualspec run examples/quickstart.yaml --scenarios capital_of_france --temps 0 "
        "--quiet --output results/b.json",
        tmp_path,
    )
    assert result.returncode == 0, result.stderr
    db = f"sqlite:///{tmp_path / '.qualspec' / 'qualspec.db'}"
    with Store.open(db) as store:
        first, latest = (
            [r for r in store.list_runs() if r.suite_name == "Quickstart"][-1].id,
            store.list_runs(limit=1)[0].id,
        )
    return {"RUN_ID": first, "RUN_A": first, "RUN_B": latest}


def _run_commands(page: str, text: str, tmp_path: Path, seeds: dict[str, str]) -> int:
    _write_files(text, tmp_path)
    bodies = _blocks(text, "bash")
    if page == "README.md":
        bodies = bodies[1:]  # the set-up commands: the test above
    ran = 0
    for body in bodies:
        for line in body.splitlines():
            if not line.strip().startswith("qualspec "):
                continue
            command = _on_fake_server(line.strip())
            if command.startswith("qualspec init"):
                # each page's tour starts where a new user's does: no starter suite yet
                (tmp_path / "qualspec.yaml").unlink(missing_ok=True)
            for name, value in seeds.items():
                command = re.sub(rf"\b{name}\b", value, command)
            result = _qualspec(command, tmp_path)
            # exit 1 is --fail-on-regression's answer when the edited prompt scored lower:
            # a result, not an error of the command
            ok = (0, 1) if "--fail-on-regression" in command else (0,)
            where = f"{page}: {line.strip()}"
            assert result.returncode in ok, f"{where}\n{result.stdout}\n{result.stderr}"
            assert "Traceback" not in result.stderr, where
            ran += 1
    return ran


def _check_yaml(page: str, text: str, tmp_path: Path) -> int:
    suites = 0
    for number, body in enumerate(_blocks(text, "yaml")):
        try:
            data = yaml.safe_load(body)
        except yaml.YAMLError as exc:
            raise AssertionError(f"{page}: yaml block {number + 1} does not parse: {exc}") from exc
        if isinstance(data, dict) and "scenarios" in data and "name" in data:
            path = tmp_path / f"block_{suites}.yaml"
            path.write_text(_on_fake_server(body))
            qualspec.load_suite(str(path))  # raises SpecError with path:line:col
            suites += 1
    return suites


@pytest.mark.timeout(1800)
def test_the_docs_commands_and_code_run_on_an_openai_compatible_server(
    repo_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work = tmp_path / "work"
    shutil.copytree(repo_root / "examples", work / "examples")
    for example in (work / "examples").iterdir():
        if example.suffix in (".yaml", ".py"):
            example.write_text(_on_fake_server(example.read_text()))
    with FakeServer() as server:
        settings = {
            "QUALSPEC_HOME": str(work / ".qualspec"),
            "OPENAI_BASE_URL": server.base_url,
            "OPENAI_API_KEY": "sk-docs-test",
            "ANTHROPIC_BASE_URL": server.base_url,
            "ANTHROPIC_API_KEY": "sk-ant-docs-test",
        }
        for name, value in settings.items():
            monkeypatch.setenv(name, value)
        monkeypatch.delenv("QUALSPEC_DATABASE_URL", raising=False)
        seeds = _seed_runs(work)

        commands = codes = suites = 0
        pages = list(_pages(repo_root))
        for page, text in pages:
            commands += _run_commands(page, text, work, seeds)
        # Python blocks run in the same folder, with the runs and the server above
        monkeypatch.chdir(work)
        for page, text in pages:
            for code in _blocks(text, "python"):
                exec(compile(_on_fake_server(code), page, "exec"), {"__name__": "docs"})
                codes += 1
            suites += _check_yaml(page, text, tmp_path)
    assert commands >= 30 and codes >= 10 and suites >= 3

    assert json.loads((work / "qualspec-suite.schema.json").read_text())["properties"]
    csv_lines = (work / "run.csv").read_text().splitlines()
    assert len(csv_lines) > 8  # a header and one row per answer and criterion
    assert (work / "report.html").read_text().startswith("<!")
