"""The documentation: the README's length, the generated CLI reference against ``--help``,
the pages the errors name, and a strict, offline build of the site."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

import qualspec.errors as errors
from qualspec.cli import main
from qualspec.errors import ConfigError, QualspecError, SpecError, UnknownRunError

README_MAX_LINES = 250


def _hooks(repo_root: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location("docs_hooks", repo_root / "docs" / "hooks.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_readme_is_the_front_door_of_at_most_250_lines(repo_root: Path) -> None:
    readme = (repo_root / "README.md").read_text()
    assert len(readme.splitlines()) <= README_MAX_LINES
    # and every page it links to exists
    for target in re.findall(r"\]\(((?:docs/)[^)#]+)", readme):
        assert (repo_root / target).exists(), target


def _help(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as stop:
        main([*argv, "--help"])
    assert stop.value.code == 0
    return capsys.readouterr().out


def _listed(help_text: str) -> tuple[list[str], list[str]]:
    """The subcommands and the option strings a ``--help`` text lists."""
    commands: list[str] = []
    flags: list[str] = []
    section = ""
    for line in help_text.splitlines():
        if line and not line.startswith(" "):
            section = line
            continue
        if section.startswith("options"):
            if re.match(r"^  -", line):
                names = re.split(r"\s{2,}", line.strip())[0]
                flags += re.findall(r"(?<![\w-])--?[A-Za-z][\w-]*", names)
        elif section.startswith("positional arguments"):
            choice = re.match(r"^  \{([\w,-]+)\}", line)
            if choice:
                commands += choice.group(1).split(",")
            listed = re.match(r"^    ([a-z][\w-]*)(\s|$)", line)
            if listed:
                commands.append(listed.group(1))
    return list(dict.fromkeys(commands)), flags


def _section(reference: str, path: list[str]) -> str:
    heading = re.search(rf"^#+ `{re.escape(' '.join(path))}`$", reference, re.M)
    assert heading is not None, f"no section for {' '.join(path)}"
    rest = reference[heading.end() :]
    following = re.search(r"^#+ `", rest, re.M)
    return rest[: following.start()] if following else rest


def test_the_cli_reference_lists_every_command_and_flag_of_help(
    repo_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    reference = _hooks(repo_root).cli_reference()
    todo: list[list[str]] = [[]]
    seen = 0
    while todo:
        path = todo.pop()
        commands, flags = _listed(_help(path, capsys))
        section = _section(reference, ["qualspec", *path])
        for flag in flags:
            assert f"`{flag}`" in section, f"qualspec {' '.join(path)}: {flag} is not documented"
        for command in commands:
            todo.append([*path, command])
        seen += 1
    assert seen > 30  # every command and subcommand was compared (runs list, reference show...)


def test_the_suite_reference_names_every_field_of_the_schema(repo_root: Path) -> None:
    from qualspec.spec import json_schema

    reference = _hooks(repo_root).suite_reference()
    schema = json_schema()
    for definition in [schema, *schema["$defs"].values()]:
        for field in definition.get("properties", {}):
            assert f"| `{field}` |" in reference, field


def _error_families() -> list[type[QualspecError]]:
    found = [getattr(errors, name) for name in errors.__all__]
    return [c for c in found if isinstance(c, type) and issubclass(c, (ConfigError, SpecError))]


def test_every_config_error_family_names_a_docs_page_that_exists(repo_root: Path) -> None:
    families = _error_families()
    assert len(families) >= 7
    for family in families:
        assert family.docs_page, family.__name__
        assert (repo_root / "docs" / family.docs_page).is_file(), family.docs_page
        nav = (repo_root / "mkdocs.yml").read_text()
        assert family.docs_page in nav, f"{family.docs_page} is not in the site's nav"


def test_a_bad_input_error_line_ends_with_its_docs_page(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = f"sqlite:///{tmp_path / 'q.db'}"
    with pytest.raises(SystemExit) as stop:
        main(["runs", "show", "nosuchrun", "--db", db])
    assert stop.value.code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert err.endswith(f"(see docs/{UnknownRunError.docs_page})")

    suite = tmp_path / "bad.yaml"
    suite.write_text("name: x\ncandidates: []\nscenarios: []\n")
    with pytest.raises(SystemExit) as stop:
        main(["run", str(suite), "--dry-run"])
    assert stop.value.code == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"{suite}:") and err.endswith("(see docs/reference/suite.md)")


@pytest.mark.timeout(600)
def test_the_site_builds_strict_and_works_offline(repo_root: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    src = str(repo_root / "src")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (src, env.get("PYTHONPATH")) if p)
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(site)],
        cwd=repo_root,
        env=env,
        capture_output=True,
        text=True,
        timeout=540,
    )
    assert result.returncode == 0, result.stderr
    pages = list(site.rglob("*.html"))
    assert len(pages) > 20
    cli = (site / "reference" / "cli" / "index.html").read_text()
    assert "qualspec run" in cli and "--dry-run" in cli
    api = (site / "reference" / "python-api" / "index.html").read_text()
    assert "Evaluation" in api and "load_suite" in api
    for page in pages:
        html = page.read_text()
        assert "https://fonts." not in html, page
        external = re.findall(r"<script[^>]*\ssrc=\"(?:https?:)?//[^\"]*\"", html)
        assert not external, (page, external)
        stylesheets = re.findall(r"<link[^>]*href=\"(?:https?:)?//[^\"]*\.css[^\"]*\"", html)
        assert not stylesheets, (page, stylesheets)
