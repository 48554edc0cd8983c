"""YAML bombs, recursive aliases and deep nesting are suite errors, never a crash or a hang."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from qualspec.errors import SpecError
from qualspec.spec import load_suite
from qualspec.spec._yaml import MAX_DEPTH, parse_yaml


def _bomb(levels: int) -> str:
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, levels + 1):
        prev, cur = chr(ord("a") + i - 1), chr(ord("a") + i)
        lines.append(f"{cur}: &{cur} [{','.join(['*' + prev] * 9)}]")
    return "\n".join(lines) + "\n"


BAD = {
    "alias_bomb": (_bomb(9), "alias"),
    "recursive_alias": ("a: &x [*x]\n", "recursive alias"),
    "recursive_mapping_alias": ("a: &x {b: *x}\n", "recursive alias"),
    "deep_flow": ("x: " + "[" * 20_000 + "]" * 20_000 + "\n", "nested"),
    "deep_unclosed": ("x: " + "[" * 20_000 + "\n", "nested"),
    "deep_flow_mappings": ("x: " + "{a: " * 20_000 + "1" + "}" * 20_000 + "\n", "nested"),
    "deep_block": ("".join("  " * i + "- \n" for i in range(300)) + "  " * 300 + "- x\n", "nested"),
}


@pytest.mark.parametrize("name", sorted(BAD))
@pytest.mark.parametrize("fast", [True, False], ids=["c_loader", "python_loader"])
def test_bombs_and_deep_nesting_are_issues(
    name: str, fast: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    import qualspec.spec._yaml as yaml_module

    if not fast:
        monkeypatch.setattr(yaml_module, "_FAST_LOADER", None)
    elif yaml_module._FAST_LOADER is None:  # pragma: no cover - PyYAML without libyaml
        pytest.skip("PyYAML was built without libyaml")
    text, word = BAD[name]
    data, _, issues = parse_yaml(text, "s.yaml")
    assert data is None
    assert len(issues) == 1, issues
    assert word in issues[0].message
    assert str(issues[0]).startswith("s.yaml:")


def test_moderate_aliases_and_nesting_still_work() -> None:
    text = _bomb(2) + "deep: " + "[" * (MAX_DEPTH - 2) + "1" + "]" * (MAX_DEPTH - 2) + "\n"
    data, _, issues = parse_yaml(text, "s.yaml")
    assert issues == []
    assert len(data["c"]) == 9 and data["c"][0][0] == ["lol"] * 9
    merged = "base: &b {x: 1}\nitems:\n" + "".join(f"  - {{<<: *b, y: {i}}}\n" for i in range(500))
    data, _, issues = parse_yaml(merged, "s.yaml")
    assert issues == [] and data["items"][499] == {"x": 1, "y": 499}


SUITE = """\
name: s
candidates: [{name: a, model: local/smollm2}]
scenarios:
  - name: x
    prompt: "{{ q }}"
    criteria: [c]
    inputs: rows.INPUTS_EXT
"""


@pytest.mark.parametrize("name", ["alias_bomb", "recursive_alias", "deep_flow"])
def test_a_bomb_in_a_suite_is_a_spec_error(name: str, tmp_path: Path) -> None:
    text, word = BAD[name]
    suite = tmp_path / "s.yaml"
    suite.write_text(SUITE.replace("INPUTS_EXT", "yaml") + text.replace("a:", "zz_a:", 1))
    with pytest.raises(SpecError) as caught:
        load_suite(suite)
    assert any(word in issue.message for issue in caught.value.issues)


@pytest.mark.parametrize("name", ["alias_bomb", "recursive_alias", "deep_flow"])
def test_a_bomb_in_an_inputs_file_is_a_spec_error(name: str, tmp_path: Path) -> None:
    text, word = BAD[name]
    suite = tmp_path / "s.yaml"
    suite.write_text(SUITE.replace("INPUTS_EXT", "yaml"))
    (tmp_path / "rows.yaml").write_text(f"- q: hi\n  extra:\n    {text.replace(chr(10), ' ')}\n")
    if name == "deep_flow":
        (tmp_path / "rows.yaml").write_text("- q: " + "[" * 20_000 + "]" * 20_000 + "\n")
    else:
        (tmp_path / "rows.yaml").write_text(
            "- q: hi\n  extra:\n" + "".join("    " + line + "\n" for line in text.splitlines())
        )
    with pytest.raises(SpecError) as caught:
        load_suite(suite)
    issue = caught.value.issues[0]
    assert word in issue.message and issue.path.endswith("rows.yaml")


def test_deep_json_in_a_jsonl_inputs_file_is_a_spec_error(tmp_path: Path) -> None:
    suite = tmp_path / "s.yaml"
    suite.write_text(SUITE.replace("INPUTS_EXT", "jsonl"))
    (tmp_path / "rows.jsonl").write_text(
        '{"q": "hi"}\n{"q": ' + "[" * 20_000 + "]" * 20_000 + "}\n"
    )
    with pytest.raises(SpecError) as caught:
        load_suite(suite)
    issue = caught.value.issues[0]
    assert "nested" in issue.message and issue.line == 2 and issue.path.endswith("rows.jsonl")


def test_cli_exits_2_on_a_bomb(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from qualspec.cli import main

    suite = tmp_path / "s.yaml"
    suite.write_text(SUITE.replace("    inputs: rows.INPUTS_EXT\n", "") + _bomb(9))
    with pytest.raises(SystemExit) as caught:
        main(["run", str(suite), "--dry-run"])
    assert caught.value.code == 2
    err = capsys.readouterr().err
    assert "s.yaml:" in err and "error:" in err and "internal error" not in err


# ------------------------------------------------------------------ bounded memory

PEAK_LIMIT = 64 * 1024 * 1024  # bytes traced while loading one bomb
ADDRESS_SPACE = 1536 * 1024 * 1024  # RLIMIT_AS of the CLI process: 1.5 GB


def _bomb_files(name: str, where: str, tmp_path: Path) -> Path:
    """A suite holding bomb ``name`` itself (``where="suite"``) or in its inputs file."""
    text, _word = BAD[name]
    suite = tmp_path / "s.yaml"
    if where == "suite":
        suite.write_text(
            SUITE.replace("    inputs: rows.INPUTS_EXT\n", "") + text.replace("a:", "zz_a:", 1)
        )
    else:
        suite.write_text(SUITE.replace("INPUTS_EXT", "yaml"))
        rows = "".join("    " + line + "\n" for line in text.splitlines())
        (tmp_path / "rows.yaml").write_text("- q: hi\n  extra:\n" + rows)
    return suite


@pytest.mark.parametrize("where", ["suite", "inputs"])
@pytest.mark.parametrize("name", ["alias_bomb", "recursive_alias", "deep_flow", "deep_unclosed"])
def test_a_bomb_is_refused_in_bounded_memory(name: str, where: str, tmp_path: Path) -> None:
    import tracemalloc

    suite = _bomb_files(name, where, tmp_path)
    tracemalloc.start()
    try:
        with pytest.raises(SpecError) as caught:
            load_suite(suite)
        _current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert BAD[name][1] in caught.value.issues[0].message
    assert peak < PEAK_LIMIT, f"{name} in the {where}: {peak / 2**20:.1f} MB traced"


def _limit_address_space() -> None:  # pragma: no cover - runs in the child process
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))


@pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_AS is enforced on Linux")
@pytest.mark.parametrize("where", ["suite", "inputs"])
@pytest.mark.parametrize("name", ["alias_bomb", "recursive_alias", "deep_flow"])
def test_qualspec_run_refuses_a_bomb_under_a_memory_cap(
    name: str, where: str, tmp_path: Path
) -> None:
    suite = _bomb_files(name, where, tmp_path)
    env = {**os.environ, "QUALSPEC_HOME": str(tmp_path / "home"), "COLUMNS": "200"}
    env.pop("QUALSPEC_DATABASE_URL", None)
    result = subprocess.run(
        [sys.executable, "-c", "from qualspec.cli import main; main()", "run", str(suite)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        preexec_fn=_limit_address_space,
    )
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2, result.stderr
    assert len(lines) == 1, result.stderr
    assert BAD[name][1] in lines[0] and "internal error" not in lines[0]
    assert ("rows.yaml:" if where == "inputs" else "s.yaml:") in lines[0]
