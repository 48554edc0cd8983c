"""``qualspec run --html`` and ``qualspec report RUN --html`` end to end, in process, against
the fake server: what is written, what is printed, and the one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from qualspec.cli import main
from qualspec.store import Store
from qualspec.testing import FakeServer

KEY_ENV = "FAKE_HTML_CLI_KEY"
SUITE = """name: "cli <i>html</i>"
candidates: [{{name: alpha, model: fake/model-a}}, {{name: beta, model: fake/model-b}}]
roles: [{{name: naive, preamble: "I am new."}}, {{name: expert, preamble: "I am an expert."}}]
scenarios:
  - name: s
    prompt: "Say <script>window.__pwned=1</script>"
    criteria: ["is an answer"]
temperatures: [0.0, 0.7]
judge: fake/judge
providers:
  fake: {{type: openai, base_url: "{url}", api_key_env: {key}}}
"""


@pytest.fixture
def server() -> Iterator[FakeServer]:
    with FakeServer() as srv:
        yield srv


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setenv(KEY_ENV, "sk-html-cli")
    return work


def qualspec(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exc:
        main(list(args))
    captured = capsys.readouterr()
    code = exc.value.code
    return (code if isinstance(code, int) else 1), captured.out, captured.err


def _run(server: FakeServer, workdir: Path, capsys: pytest.CaptureFixture[str]) -> str:
    suite = workdir / "suite.yaml"
    suite.write_text(SUITE.format(url=server.base_url, key=KEY_ENV), encoding="utf-8")
    code, out, err = qualspec(
        capsys,
        "run",
        str(suite),
        "--quiet",
        "--no-calibration",
        "--output",
        "results/run.json",
        "--html",
        "out/run.html",
    )
    assert code == 0, out + err
    assert "HTML report: out/run.html" in out
    with Store.open(f"sqlite:///{workdir.parent / 'qualspec-home' / 'qualspec.db'}") as store:
        (run,) = store.list_runs()
    return run.id


def test_run_html_writes_the_report_beside_the_results(
    server: FakeServer, workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_id = _run(server, workdir, capsys)
    page = (workdir / "out" / "run.html").read_text(encoding="utf-8")
    assert run_id in page and "cli &lt;i&gt;html&lt;/i&gt;" in page
    assert "Say &lt;script&gt;window.__pwned=1&lt;/script&gt;" in page
    assert "<script" not in page
    # the provider's base URL (http://127.0.0.1:PORT/v1) is in the suite, never in the page
    assert "http://" not in page and "https://" not in page
    assert page.count('<details class="resp"') == 8  # 2 candidates x 2 roles x 2 temps
    assert json.loads((workdir / "results" / "run.json").read_text())["run"]["id"] == run_id


def test_report_from_an_id_a_prefix_and_a_results_file_gives_the_same_page(
    server: FakeServer, workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_id = _run(server, workdir, capsys)
    pages = {}
    for name, ref in (
        ("id", run_id),
        ("prefix", run_id[:-2]),
        ("file", "results/run.json"),
    ):
        code, out, err = qualspec(capsys, "report", ref, "--html", f"{name}.html")
        assert code == 0, err
        assert out.strip() == f"HTML report: {name}.html   (run {run_id})"
        pages[name] = (workdir / f"{name}.html").read_text(encoding="utf-8")
    assert pages["id"] == pages["prefix"]
    # the results file lacks nothing the page shows but the store's lock state
    assert pages["file"] == pages["id"]
    assert pages["id"] == (workdir / "out" / "run.html").read_text(encoding="utf-8")


def test_report_of_an_unknown_run_is_one_line_and_exit_2(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = qualspec(capsys, "report", "no-such-run", "--html", "x.html")
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "no-such-run" in lines[0] and "Traceback" not in err
    assert not (workdir / "x.html").exists()


def test_report_needs_html_and_a_run(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _out, err = qualspec(capsys, "report", "abc")
    assert code == 2 and "--html" in err
    code, _out, err = qualspec(capsys, "report", "--html", "x.html")
    assert code == 2 and "RUN" in err


def test_report_to_an_unwritable_place_is_one_line_and_exit_1(
    server: FakeServer, workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_id = _run(server, workdir, capsys)
    (workdir / "blocker").write_text("a file, not a directory")
    code, _out, err = qualspec(capsys, "report", run_id, "--html", "blocker/r.html")
    assert code == 1
    assert len(err.strip().splitlines()) == 1 and "Cannot write blocker/r.html" in err


def test_cli_start_up_does_not_import_jinja2() -> None:
    code = (
        "import sys; from qualspec.cli._app import build_parser; build_parser(); "
        "import qualspec.report; "
        "assert 'jinja2' not in sys.modules, 'jinja2 imported at start-up'"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
