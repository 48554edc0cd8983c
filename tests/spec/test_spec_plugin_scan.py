"""Installed packages' entry points are read once per process: qualspec's registries and
pydantic's plugin loader share the scan when no pydantic plugin is installed, and a
pydantic plugin that is installed is still loaded (pydantic scans for it as before)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

SUITE = (
    "name: s\n"
    "candidates: [{name: c, model: openai/gpt-4o-mini}]\n"
    "scenarios: [{name: q, prompt: hi, criteria: [answers]}]\n"
)

# counts the scans of installed packages (importlib.metadata.distributions), then loads a
# suite (validating it builds the first pydantic model)
PROBE = """
import importlib.metadata, json, sys
scans = []
real = importlib.metadata.distributions
def counted(*args, **kwargs):
    scans.append(sys._getframe(1).f_code.co_filename)
    return real(*args, **kwargs)
importlib.metadata.distributions = counted
from qualspec.spec import load_suite
load_suite(sys.argv[1])
print(json.dumps({"scans": len(scans), "pydantic": sum("pydantic" in f for f in scans)}))
"""


def _probe(tmp_path: Path, extra_path: Path | None = None) -> dict[str, int]:
    suite = tmp_path / "suite.yaml"
    suite.write_text(SUITE, encoding="utf-8")
    env = dict(os.environ)
    if extra_path is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(extra_path), env.get("PYTHONPATH", "")])
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(suite)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    found: dict[str, int] = json.loads(done.stdout.strip().splitlines()[-1])
    return found


def test_without_a_pydantic_plugin_the_packages_are_scanned_once(tmp_path: Path) -> None:
    assert _probe(tmp_path) == {"scans": 1, "pydantic": 0}


def test_an_installed_pydantic_plugin_is_still_loaded(tmp_path: Path) -> None:
    site = tmp_path / "site"
    dist = site / "fakeplug-1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: fakeplug\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[pydantic]\nfake = fakeplug_mod:plugin\n")
    marker = tmp_path / "loaded.txt"
    (site / "fakeplug_mod.py").write_text(
        "class _Plugin:\n"
        "    def new_schema_validator(self, *args, **kwargs):\n"
        f"        open({str(marker)!r}, 'a').write('validator\\n')\n"
        "        return None, None, None\n"
        "plugin = _Plugin()\n"
    )
    found = _probe(tmp_path, site)
    assert found["pydantic"] == 1  # pydantic scanned for its plugins itself
    assert marker.read_text().count("validator") >= 1  # and the plugin was used


# lists the provider types the registry finds, in a process with ``site`` on sys.path
REGISTERED = """
import json
from qualspec.providers import ProviderPool
print(json.dumps(ProviderPool().names()))
"""


def _dist(site: Path, name: str, entry_points: str) -> None:
    dist = site / f"{name}-1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(entry_points)


def test_only_the_packages_that_declare_qualspec_or_pydantic_groups_are_parsed(
    tmp_path: Path,
) -> None:
    site = tmp_path / "site"
    # another tool's entry points, malformed (a line without "="): importlib.metadata's
    # entry_points() raises on it; qualspec never parses this package's file
    _dist(site, "othertool", "[console_scripts]\nbroken line without an equals sign\n")
    _dist(site, "qsplugin", "[qualspec.providers]\nmyprov = qsplugin_mod:factory\n")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(site), env.get("PYTHONPATH", "")])
    done = subprocess.run(
        [sys.executable, "-c", REGISTERED],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    names = json.loads(done.stdout.strip().splitlines()[-1])
    assert "myprov" in names  # the plugin's provider type is registered
    assert "openai" in names  # and the built-ins, as before
