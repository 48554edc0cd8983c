"""Unknown providers and missing packages are found at load and in --dry-run, with locations."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from qualspec.cli import main
from qualspec.errors import ConfigError, SpecError
from qualspec.spec import load_suite

SUITE = """\
name: providers
candidates:
  - name: a
    model: CANDIDATE
scenarios: [{name: x, prompt: hi, criteria: [c]}]
"""


def _write(tmp_path: Path, candidate: str, extra: str = "") -> Path:
    path = tmp_path / "s.yaml"
    path.write_text(SUITE.replace("CANDIDATE", candidate) + extra)
    return path


def _run(argv: list[str]) -> int:
    with pytest.raises(SystemExit) as caught:
        main(argv)
    assert isinstance(caught.value.code, int)
    return caught.value.code


def test_unknown_candidate_provider_is_a_spec_error_at_the_model_field(tmp_path: Path) -> None:
    path = _write(tmp_path, "nosuchprovider/model")
    with pytest.raises(SpecError) as caught:
        load_suite(path)
    (issue,) = caught.value.issues
    assert (issue.line, issue.col, issue.field) == (4, 12, "candidates[0].model")
    assert "unknown provider 'nosuchprovider'" in issue.message
    assert "openai" in issue.message  # lists what is available


@pytest.mark.parametrize(
    ("extra", "field", "line"),
    [
        ("judge: google/gemini-pro\n", "judge.model", 6),
        ("judge: {model: google/gemini-pro}\n", "judge.model", 6),
        ("judges:\n  - {type: criteria, model: google/gemini-pro}\n", "judges[0].model", 7),
    ],
)
def test_unknown_judge_provider_is_found_by_the_dry_run_at_its_field(
    tmp_path: Path, extra: str, field: str, line: int, capsys: pytest.CaptureFixture[str]
) -> None:
    from qualspec.engine import check_plan, expand

    path = _write(tmp_path, "openai/gpt-4o", extra)
    suite = load_suite(path)  # judges are checked with the plan: --no-judge may apply
    with pytest.raises(SpecError) as caught:
        check_plan(suite, expand(suite), judge=True)
    (issue,) = caught.value.issues
    assert (issue.path, issue.field, issue.line) == (str(path), field, line)
    assert "unknown provider 'google'" in issue.message
    assert _run(["run", str(path), "--dry-run"]) == 2
    assert f"{path}:{line}:" in capsys.readouterr().err
    assert _run(["run", str(path), "--dry-run", "--no-judge"]) == 0
    assert _run(["run", str(path), "--dry-run", "--judge", "openai/gpt-4o-mini"]) == 0


def test_providers_defined_in_the_suite_are_known(tmp_path: Path) -> None:
    extra = "providers:\n  mylab: {type: openai, base_url: 'http://127.0.0.1:9/v1'}\n"
    suite = load_suite(_write(tmp_path, "mylab/my-model", extra))
    assert suite.evaluation.candidates[0].model == "mylab/my-model"
    with pytest.raises(SpecError) as caught:
        load_suite(_write(tmp_path, "mylav/my-model", extra))
    assert "did you mean 'mylab'" in caught.value.issues[0].message


def test_dry_run_rejects_an_unknown_provider_with_its_location(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(tmp_path, "nosuchprovider/model")
    assert _run(["run", str(path), "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert f"{path}:4:12: error: candidates[0].model: unknown provider 'nosuchprovider'" in err


@pytest.mark.parametrize("flag", ["--model", "--judge"])
def test_dry_run_rejects_an_unknown_provider_in_a_flag(
    flag: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(tmp_path, "openai/gpt-4o")
    assert _run(["run", str(path), "--dry-run", flag, "google/gemini-pro"]) == 2
    err = capsys.readouterr().err
    assert flag in err and "unknown provider 'google'" in err.lower()


@pytest.fixture
def no_llama(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pretend llama-cpp-python is not installed (a module set to None in ``sys.modules``
    is not found, and its import fails)."""
    monkeypatch.setitem(sys.modules, "llama_cpp", None)


@pytest.mark.usefixtures("no_llama")
def test_missing_llama_for_the_default_judge_says_how_to_choose_another(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(tmp_path, "openai/gpt-4o")
    assert _run(["run", str(path), "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert "llama-cpp-python" in err and "judge" in err
    assert "--judge PROVIDER/MODEL" in err and "judge:" in err
    assert "Traceback" not in err
    # another judge, or none, needs no llama.cpp
    assert _run(["run", str(path), "--dry-run", "--judge", "openai/gpt-4o-mini"]) == 0
    assert _run(["run", str(path), "--dry-run", "--no-judge"]) == 0


@pytest.mark.usefixtures("no_llama")
def test_missing_llama_for_a_judge_in_the_suite_points_at_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(tmp_path, "openai/gpt-4o", "judge: {model: local/smollm2}\n")
    assert _run(["run", str(path), "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert f"{path}:6:" in err and "judge.model" in err and "--judge PROVIDER/MODEL" in err


@pytest.mark.usefixtures("no_llama")
def test_missing_llama_for_a_candidate_points_at_its_model_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(tmp_path, "local/smollm2")
    assert _run(["run", str(path), "--dry-run", "--judge", "openai/gpt-4o-mini"]) == 2
    err = capsys.readouterr().err
    assert f"{path}:4:12: error: candidates[0].model:" in err
    assert "pip install 'qualspec[local]'" in err
    # --model replaces it: nothing local is needed then
    argv = ["run", str(path), "--dry-run", "--model", "openai/gpt-4o", "--no-judge"]
    assert _run(argv) == 0


def test_a_missing_local_model_file_is_found_in_the_dry_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(tmp_path, "local/models/nope.gguf")
    assert _run(["run", str(path), "--dry-run", "--no-judge"]) == 2
    err = capsys.readouterr().err
    assert f"{path}:4:12: error: candidates[0].model:" in err and "nope.gguf" in err


def test_check_plan_raises_config_error_for_flags(tmp_path: Path) -> None:
    from qualspec.engine import check_plan, expand

    suite = load_suite(_write(tmp_path, "openai/gpt-4o"))
    with pytest.raises(ConfigError):
        check_plan(suite, expand(suite, model="nosuch/x"), judge=False)
    check_plan(suite, expand(suite), judge=True)
