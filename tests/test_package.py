"""The package as it would be published: the LICENSE and the CHANGELOG, its metadata, and an
sdist and a wheel built offline (``python -m build --no-isolation``, the wheel built from the
sdist) that carry every file under ``src/qualspec``, install into a fresh virtual environment
and run there: ``qualspec --version``, dry runs of the quickstart and of the suite ``qualspec
init`` writes, and a whole run (store, prompts, prices, HTML report) on the fake server."""

from __future__ import annotations

import email
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from qualspec.testing import FakeServer
from qualspec.version import __version__

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "src" / "qualspec"
# what the build reads besides src/: pyproject.toml names them (readme, license-files) or
# MANIFEST.in adds them to the sdist
PROJECT_FILES = ("pyproject.toml", "README.md", "LICENSE", "CHANGELOG.md", "MANIFEST.in")
NOT_SHIPPED = ("__pycache__", ".pyc", ".pyo", ".egg-info")


def _package_files() -> set[str]:
    """Every file of the package in the tree (``qualspec/...``), without bytecode."""
    return {
        path.relative_to(PACKAGE.parent).as_posix()
        for path in PACKAGE.rglob("*")
        if path.is_file() and not any(part in str(path) for part in NOT_SHIPPED)
    }


def _pyproject() -> dict[str, object]:
    return tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))


def _run(
    args: list[str], env: dict[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``args``, which must exit 0 (else fail with its output)."""
    result = subprocess.run(
        args,
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,  # a build on a loaded 2-core machine
        check=False,
    )
    assert result.returncode == 0, f"{' '.join(args)}\n{result.stdout}\n{result.stderr}"
    return result


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The sdist and the wheel, built offline from a copy of the project (so the build's
    egg-info and build/ folders never land in the checkout)."""
    root = tmp_path_factory.mktemp("package")
    source = root / "source"
    source.mkdir()
    for name in PROJECT_FILES:
        shutil.copy2(REPO / name, source / name)
    shutil.copytree(
        REPO / "src", source / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info")
    )
    out = root / "dist"
    # the wheel is built from the sdist: a file the sdist lacks is missing from the wheel too
    _run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(source)])
    (sdist,) = out.glob("qualspec-*.tar.gz")
    (wheel,) = out.glob("qualspec-*.whl")
    return {"sdist": sdist, "wheel": wheel, "root": root}


def test_the_license_is_the_one_pyproject_names() -> None:
    project = _pyproject()["project"]
    assert isinstance(project, dict)
    assert project["license"] == "Apache-2.0" and project["license-files"] == ["LICENSE"]
    text = (REPO / "LICENSE").read_text(encoding="utf-8")
    assert text.split()[:5] == ["Apache", "License", "Version", "2.0,", "January"]
    # the whole standard text: its nine sections and the appendix
    assert "9. Accepting Warranty or Additional Liability." in text
    assert "END OF TERMS AND CONDITIONS" in text and "APPENDIX:" in text


def test_the_changelog_keeps_a_changelog() -> None:
    text = (REPO / "CHANGELOG.md").read_text(encoding="utf-8")
    lines = text.splitlines()
    assert lines[0] == "# Changelog"
    assert "https://keepachangelog.com/en/1.1.0/" in text
    releases = [line for line in lines if line.startswith("## ")]
    assert releases[0] == "## [Unreleased]"
    kinds = {"Added", "Changed", "Deprecated", "Removed", "Fixed", "Security"}
    headings = [line[4:] for line in lines if line.startswith("### ")]
    assert headings and set(headings) <= kinds


def test_the_metadata_names_license_urls_and_classifiers(dist: dict[str, Path]) -> None:
    with zipfile.ZipFile(dist["wheel"]) as wheel:
        info = f"qualspec-{__version__}.dist-info"
        metadata = email.message_from_bytes(wheel.read(f"{info}/METADATA"))
        names = set(wheel.namelist())
        entry_points = wheel.read(f"{info}/entry_points.txt").decode()
    assert metadata["License-Expression"] == "Apache-2.0"
    assert f"{info}/licenses/LICENSE" in names
    urls = dict(url.split(", ", 1) for url in metadata.get_all("Project-URL") or [])
    assert {"Homepage", "Documentation", "Changelog", "Issues"} <= set(urls)
    assert all(url.startswith("https://") for url in urls.values())
    classifiers = metadata.get_all("Classifier") or []
    assert "Typing :: Typed" in classifiers and "Framework :: Pytest" in classifiers
    assert "qualspec = qualspec.cli:main" in entry_points


def test_the_wheel_carries_every_file_of_the_package(dist: dict[str, Path]) -> None:
    with zipfile.ZipFile(dist["wheel"]) as wheel:
        shipped = {n for n in wheel.namelist() if n.startswith("qualspec/")}
    tree = _package_files()
    # templates, static files, prompts, data, migrations: a file that package-data misses
    assert sorted(tree - shipped) == [], "files under src/qualspec missing from the wheel"
    assert sorted(shipped - tree) == [], "files in the wheel that the tree does not have"
    for kind in (".j2", ".css", ".js", ".svg", ".txt", ".json", ".mako", "py.typed"):
        assert any(name.endswith(kind) for name in shipped), kind


def test_the_sdist_carries_the_sources_and_the_project_files(dist: dict[str, Path]) -> None:
    with tarfile.open(dist["sdist"]) as sdist:
        top = f"qualspec-{__version__}/"
        names = {m.name.removeprefix(top) for m in sdist.getmembers() if m.isfile()}
    assert set(PROJECT_FILES) <= names
    assert {f"src/{name}" for name in _package_files()} <= names


@pytest.fixture(scope="module")
def venv(dist: dict[str, Path]) -> Path:
    """A fresh virtual environment with the wheel installed: dependencies come from this
    machine's site-packages (``--system-site-packages``), qualspec only from the wheel."""
    env = dist["root"] / "venv"
    _run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(env)])
    python = env / "bin" / "python"
    # the pip of this machine, run by the environment's Python: it installs there; the
    # qualspec of this checkout (installed or on the path) is neither used nor touched
    _run(
        [str(python), "-m", "pip", "install", "--quiet", "--no-deps", "--no-index"]
        + ["--ignore-installed", "--no-warn-script-location", str(dist["wheel"])],
        env=_clean_env(),
    )
    return env


def _clean_env(**extra: str) -> dict[str, str]:
    """This process's environment without what would put the checkout's sources first."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    return {**env, **extra}


@pytest.fixture
def workdir(tmp_path: Path) -> Iterator[Path]:
    shutil.copy2(REPO / "examples" / "quickstart.yaml", tmp_path / "quickstart.yaml")
    yield tmp_path


def test_the_wheel_installs_into_a_fresh_venv_and_runs(venv: Path, workdir: Path) -> None:
    python, qualspec = str(venv / "bin" / "python"), str(venv / "bin" / "qualspec")
    env = _clean_env(QUALSPEC_HOME=str(workdir / "home"))
    found = _run([python, "-c", "import qualspec; print(qualspec.__file__)"], env=env, cwd=workdir)
    assert found.stdout.strip().startswith(str(venv)), "qualspec must come from the wheel"
    assert _run([qualspec, "--version"], env=env).stdout.strip() == f"qualspec {__version__}"

    dry = _run([qualspec, "run", "--dry-run", "quickstart.yaml"], env=env, cwd=workdir)
    assert "Candidate calls: 8" in " ".join(dry.stdout.split())
    _run([qualspec, "init", "--yes"], env=env, cwd=workdir)
    _run([qualspec, "run", "--dry-run", "qualspec.yaml"], env=env, cwd=workdir)

    # a whole run: the store's migrations, the judge's prompts, the calibration pairs, the
    # prices and the HTML report's template all come from the wheel
    with FakeServer() as server:
        env.update(OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="sk-test-wheel")
        _run(
            [qualspec, "run", "quickstart.yaml", "--model", "openai/fake"]
            + ["--judge", "openai/judge", "--quiet", "-o", "r.json", "--html", "r.html"],
            env=env,
            cwd=workdir,
        )
    assert len(json.loads((workdir / "r.json").read_text())["responses"]) == 8
    assert "<style" in (workdir / "r.html").read_text(encoding="utf-8")
