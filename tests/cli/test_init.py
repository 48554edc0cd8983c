"""``qualspec init``: a starter suite that loads, validates, dry-runs and runs at once; the
providers from flags, the defaults or the terminal's answer; API keys found by variable
name and never shown; no overwrite without --force."""

from __future__ import annotations

import io
import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import yaml

from helpers_cli import run_cli, work_in
from qualspec.spec import json_schema, load_suite
from qualspec.testing import FakeServer

SECRET = "sk-test-do-not-leak-4f2a9c"  # a key value that must appear nowhere


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    work_in(tmp_path, monkeypatch, {})
    # stdin is not a terminal unless a test makes it one
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))


class _Terminal(io.StringIO):
    """Typed answers on a terminal."""

    def isatty(self) -> bool:
        return True


def _models(path: Path) -> tuple[list[str], str]:
    suite = load_suite(path).evaluation
    return [c.model for c in suite.candidates], suite.judge.model


def _dry_run(capsys: pytest.CaptureFixture[str], path: str) -> str:
    code, out, err = run_cli(capsys, "run", "--dry-run", path)
    assert code == 0, out + err
    return out


def test_flags_choose_the_providers_and_the_file_dry_runs(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run_cli(capsys, "init", "--provider", "openai", "--provider", "local")
    assert code == 0, err
    text = Path("qualspec.yaml").read_text()
    assert _models(Path("qualspec.yaml")) == (
        ["openai/gpt-4o-mini", "local/smollm2"],
        "openai/gpt-4o-mini",  # a model with an API judges, not the embedded one
    )
    data = yaml.safe_load(text)
    assert data["providers"] == {"openai": {"type": "openai", "api_key_env": "OPENAI_API_KEY"}}
    assert text.startswith("# A starter suite written by `qualspec init`")
    # no key was found: the summary says which variable to set, before running it
    assert "Set OPENAI_API_KEY before running it" in err
    assert "Next: qualspec run qualspec.yaml" in out
    planned = " ".join(_dry_run(capsys, "qualspec.yaml").split())
    assert "Candidate calls: 4" in planned and "Judge calls: 4 (" in planned
    jsonschema.validate(data, json_schema())


def test_without_keys_the_embedded_model_answers_and_judges(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run_cli(capsys, "init", "--yes")
    assert code == 0, err
    data = yaml.safe_load(Path("qualspec.yaml").read_text())
    assert "providers" not in data
    assert _models(Path("qualspec.yaml")) == (["local/smollm2"], "local/smollm2")
    # tiny: 2 scenarios x 1 temperature, one judge call per answer, no calibration calls
    assert len(data["scenarios"]) == 2 and data["temperatures"] == [0.0]
    assert data["judge"]["mode"] == "all_criteria" and data["judge"]["calibrate"] == 0
    jsonschema.validate(data, json_schema())
    assert "judged by local/smollm2" in out
    planned = " ".join(_dry_run(capsys, "qualspec.yaml").split())
    assert "Candidate calls: 2" in planned and "Judge calls: 2 (" in planned
    assert "Calibration calls" not in planned


def test_keys_in_the_environment_are_found_by_name_and_never_shown(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    monkeypatch.setenv("OPENROUTER_API_KEY", SECRET + "-2")
    monkeypatch.setenv("OPENAI_API_KEY", "   ")  # blank: not a key
    code, out, err = run_cli(capsys, "init")  # stdin is no terminal: the defaults
    assert code == 0, err
    text = Path("qualspec.yaml").read_text()
    assert _models(Path("qualspec.yaml")) == (
        ["anthropic/claude-3-5-haiku-latest", "openrouter/openai/gpt-4o-mini"],
        "anthropic/claude-3-5-haiku-latest",
    )
    assert yaml.safe_load(text)["providers"] == {
        "anthropic": {"type": "anthropic", "api_key_env": "ANTHROPIC_API_KEY"},
        "openrouter": {"type": "openai", "api_key_env": "OPENROUTER_API_KEY"},
    }
    assert "ANTHROPIC_API_KEY, OPENROUTER_API_KEY" in out
    assert "stdin is not a terminal: took the defaults" in out
    for shown in (text, out, err):
        assert SECRET not in shown
    assert SECRET not in _dry_run(capsys, "qualspec.yaml")


def test_on_a_terminal_it_asks_and_takes_the_answer(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setattr(sys, "stdin", _Terminal("gemini\nAnthropic, local\n"))
    code, out, err = run_cli(capsys, "init")
    assert code == 0, err
    assert "API keys in the environment: OPENAI_API_KEY" in out
    assert "Which providers? Comma-separated [openai]: " in out
    assert "Unknown provider 'gemini': choose from openai, anthropic, openrouter, local" in out
    assert _models(Path("qualspec.yaml"))[0] == [
        "anthropic/claude-3-5-haiku-latest",
        "local/smollm2",
    ]
    assert SECRET not in out + err + Path("qualspec.yaml").read_text()


def test_a_real_terminal_is_asked(tmp_path: Path) -> None:
    """The ``qualspec`` process itself, its stdin a pseudo-terminal with the answer typed."""
    main_fd, terminal = pty.openpty()
    try:
        os.write(main_fd, b"anthropic\n")
        result = subprocess.run(
            [sys.executable, "-c", "from qualspec.cli import main; main()", "init"],
            stdin=terminal,
            capture_output=True,
            text=True,
            cwd=tmp_path,
            timeout=300,
            check=False,
        )
    finally:
        os.close(terminal)
        os.close(main_fd)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Which providers? Comma-separated [local]: " in result.stdout
    assert _models(tmp_path / "qualspec.yaml")[0] == ["anthropic/claude-3-5-haiku-latest"]


def test_on_a_terminal_enter_takes_the_defaults(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "stdin", _Terminal("\n"))
    code, out, err = run_cli(capsys, "init")
    assert code == 0, err
    assert "No API key in the environment" in out and "[local]: " in out
    assert _models(Path("qualspec.yaml")) == (["local/smollm2"], "local/smollm2")


def test_on_a_terminal_three_wrong_answers_are_one_error_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "stdin", _Terminal("x\ny\nz\n"))
    code, out, err = run_cli(capsys, "init")
    assert code == 2
    assert err.strip().splitlines() == [
        "qualspec: error: no providers chosen: choose from openai, anthropic, openrouter, "
        "local (or pass --provider) (see docs/reference/cli.md)"
    ]
    assert not Path("qualspec.yaml").exists()


def test_an_existing_file_is_kept_without_force(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    Path("qualspec.yaml").write_text("name: mine\n")
    # not even asked: the refusal comes before the question
    monkeypatch.setattr(sys, "stdin", _Terminal("local\n"))
    code, out, err = run_cli(capsys, "init")
    assert code == 2
    assert err.strip().splitlines() == [
        "qualspec: error: qualspec.yaml exists: pass --force to overwrite it, or --path to "
        "write another file (see docs/reference/cli.md)"
    ]
    assert "Traceback" not in err and "Which providers" not in out
    assert Path("qualspec.yaml").read_text() == "name: mine\n"

    code, out, err = run_cli(capsys, "init", "--yes", "--force")
    assert code == 0, err
    assert _models(Path("qualspec.yaml")) == (["local/smollm2"], "local/smollm2")


def test_path_names_a_file_or_a_folder(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "init", "--yes", "--path", "evals/")
    assert code == 0, err
    assert Path("evals/qualspec.yaml").is_file()
    assert "Next: qualspec run evals/qualspec.yaml" in out
    code, out, err = run_cli(capsys, "init", "--yes", "--path", "evals/smoke.yml")
    assert code == 0, err
    _dry_run(capsys, "evals/smoke.yml")
    code, out, err = run_cli(capsys, "init", "--yes", "--path", "evals")  # a folder now
    assert code == 2 and "evals/qualspec.yaml exists" in err
    code, out, err = run_cli(capsys, "init", "--yes", "--path", "suite.txt")
    assert code == 2
    assert err.strip().splitlines() == [
        "qualspec: error: --path suite.txt: a suite file ends in .yaml or .yml "
        "(e.g. --path evals/qualspec.yaml) (see docs/reference/cli.md)"
    ]


def test_an_unknown_provider_flag_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "init", "--provider", "gemini")
    assert code == 2 and "invalid choice: 'gemini'" in err
    assert not Path("qualspec.yaml").exists()


def test_the_written_suite_runs_at_once_against_an_api(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """With keys for OpenAI and Anthropic (both served by the fake server, which refuses
    a call without the key), ``qualspec run qualspec.yaml`` answers and judges every cell."""
    with FakeServer(require_key=SECRET) as server:
        monkeypatch.setenv("OPENAI_API_KEY", SECRET)
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        code, out, err = run_cli(capsys, "init", "--yes")
        assert code == 0, err
        code, out, err = run_cli(capsys, "run", "qualspec.yaml", "-o", "r.json")
    assert code == 0, out + err
    assert SECRET not in out + err
    responses = json.loads(Path("r.json").read_text())["responses"]
    assert len(responses) == 4  # 2 candidates x 2 scenarios x 1 temperature
    assert all(r["error"] is None for r in responses)
    judged = [j for r in responses for j in r["judgments"] if j["evaluator"] != "expect"]
    assert len(judged) == 2 * (1 + 2)  # per candidate: one criterion, then two
    assert all(j["score"] is not None for j in judged)
    checks = [j for r in responses for j in r["judgments"] if j["evaluator"] == "expect"]
    assert len(checks) == 2 * 2  # the first scenario's two checks, per candidate
