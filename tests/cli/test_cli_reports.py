"""The CLI's reports end to end, in process, against the fake server: what is printed,
what is written, and the exit codes of `qualspec run`.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from qualspec.cli import main
from qualspec.store import Store
from qualspec.testing import FakeServer

KEY_ENV = "FAKE_REPORT_KEY"


@pytest.fixture
def server() -> Iterator[FakeServer]:
    with FakeServer() as srv:
        yield srv


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setenv(KEY_ENV, "sk-report-test")
    monkeypatch.setenv("COLUMNS", "200")
    return work


def write_suite(
    path: Path,
    base_url: str,
    *,
    scenarios: str,
    name: str = "reports",
    candidates: str = "[{name: c, model: fake/model-a}]",
    roles: str | None = None,
    extra: str = "",
) -> Path:
    text = (
        f"name: {json.dumps(name)}\n"
        f"candidates: {candidates}\n"
        + (f"roles: {roles}\n" if roles else "")
        + f"scenarios:\n{scenarios}"
        + "judge: fake/judge\n"
        + f"{extra}"
        + "providers:\n"
        + f'  fake: {{type: openai, base_url: "{base_url}", api_key_env: {KEY_ENV}}}\n'
    )
    path.write_text(text, encoding="utf-8")
    return path


def qualspec(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exc:
        main(list(args))
    captured = capsys.readouterr()
    code = exc.value.code
    return (code if isinstance(code, int) else 1), captured.out, captured.err


def results_files(work: Path) -> list[Path]:
    return sorted((work / "results").glob("*.json"))


def only_run_id(work: Path) -> str:
    with Store.open(f"sqlite:///{work.parent / 'qualspec-home' / 'qualspec.db'}") as store:
        runs = store.list_runs()
    assert len(runs) >= 1
    return runs[0].id


SIMPLE = '  - name: s\n    prompt: "What is 2+2?"\n    criteria: ["is an answer"]\n'


# ----------------------------------------------------------------------- item 3


MARKUP_SCENARIO = (
    '  - name: "a [/b] b"\n'
    '    prompt: "Repeat [/INST] and [bold]x[/bold] and [red]"\n'
    '    criteria: ["says [/INST]"]\n'
)


def test_markup_in_answers_and_names_is_printed_literally(
    server: FakeServer, workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = write_suite(
        workdir / "m.yaml",
        server.base_url,
        scenarios=MARKUP_SCENARIO,
        name="mark [/up] suite",
        candidates="[{name: 'c[/x]', model: fake/model-a}]",
    )
    code, out, err = qualspec(
        capsys, "run", str(suite), "--quiet", "--show-responses", "--temps", "0,0.7"
    )
    assert code == 0, out + err
    assert "a [/b] b" in out
    assert "[/INST] and [bold]x[/bold] and [red]" in out
    assert len(results_files(workdir)) == 1
    run_id = only_run_id(workdir)
    code, out, err = qualspec(capsys, "runs", "show", run_id, "--show-responses")
    assert code == 0, err
    assert "[/INST] and [bold]x[/bold]" in out and "a [/b] b" in out
    code, out, err = qualspec(capsys, "runs", "list")
    assert code == 0, err
    assert "mark [/up] suite" in out


def test_the_results_file_is_written_before_the_report(
    server: FakeServer,
    workdir: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from qualspec import report as report_module

    def broken(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("the report broke")

    monkeypatch.setattr(report_module, "render_run", broken)
    suite = write_suite(workdir / "s.yaml", server.base_url, scenarios=SIMPLE)
    code, out, err = qualspec(capsys, "run", str(suite), "--quiet")
    assert code == 1 and "the report broke" in err
    files = results_files(workdir)
    assert len(files) == 1
    assert json.loads(files[0].read_text(encoding="utf-8"))["responses"]


def test_a_suite_path_with_brackets_is_printed_literally(
    server: FakeServer, workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = write_suite(workdir / "s.yaml", server.base_url, scenarios=SIMPLE)
    code, out, err = qualspec(capsys, "run", str(suite), "--quiet", "--output", "x[/y]/r.json")
    assert code == 0, out + err
    assert "x[/y]/r.json" in out
    assert (workdir / "x[" / "y]" / "r.json").is_file()


# ----------------------------------------------------------------------- item 4


def test_two_runs_in_the_same_second_write_two_results_files(
    server: FakeServer,
    workdir: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    suite = write_suite(workdir / "s.yaml", server.base_url, scenarios=SIMPLE)
    for _ in range(2):
        code, out, err = qualspec(capsys, "run", str(suite), "--quiet", "--no-cache")
        assert code == 0, out + err
    # run ids differ, so the names differ even within one second
    files = results_files(workdir)
    assert len(files) == 2
    ids = {json.loads(f.read_text(encoding="utf-8"))["run"]["id"] for f in files}
    assert len(ids) == 2
    for f in files:
        assert f.name.startswith("reports_")


# ----------------------------------------------------------------------- item 5


def test_runs_export_gives_prompt_names_and_versions_that_prompts_show_accepts(
    server: FakeServer, workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = write_suite(
        workdir / "s.yaml",
        server.base_url,
        scenarios=SIMPLE,
        roles="[{name: r, preamble: 'I am r.', system_prompt: 'Be brief.'}]",
    )
    # an earlier run storing other prompts first, so ids and versions differ
    other = write_suite(
        workdir / "o.yaml",
        server.base_url,
        name="other",
        scenarios="  - {name: t, prompt: 'other', criteria: [x]}\n",
        roles="[{name: q, preamble: 'I am q.', system_prompt: 'Be long.'}]",
    )
    assert qualspec(capsys, "run", str(other), "--quiet")[0] == 0
    assert qualspec(capsys, "run", str(suite), "--quiet")[0] == 0
    run_id = only_run_id(workdir)
    code, out, err = qualspec(capsys, "runs", "export", run_id, "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    prompts = data["responses"][0]["prompts"]
    assert {part.split(":")[0] for part in prompts} >= {
        "scenario_prompt",
        "preamble",
        "system_prompt",
    }
    preamble = next(ref for part, ref in prompts.items() if part.startswith("preamble"))
    judged = data["responses"][0]["judgments"][0]["prompt"]
    for ref in [*prompts.values(), judged]:
        code, text, err = qualspec(capsys, "prompts", "show", ref["name"], str(ref["version"]))
        assert code == 0, err
    code, text, _ = qualspec(capsys, "prompts", "show", preamble["name"], str(preamble["version"]))
    assert text.strip() == "I am r."
    # the results file written by `run` says the same
    written = json.loads(results_files(workdir)[-1].read_text(encoding="utf-8"))
    by_run = {written["run"]["id"]: written}
    if run_id in by_run:
        assert by_run[run_id]["responses"][0]["prompts"] == prompts
    # no field carries the store's row ids of prompt versions, in the export or the file
    for document in (data, written):
        assert not {"prompt_versions", "prompt_version"} & keys_anywhere(document)


def keys_anywhere(data: Any) -> set[str]:
    """Every key of every object nested in ``data``."""
    if isinstance(data, dict):
        return set(data).union(*(keys_anywhere(v) for v in data.values()))
    if isinstance(data, list):
        return set().union(*(keys_anywhere(v) for v in data))
    return set()


# ----------------------------------------------------------------------- item 6


def test_unknown_prices_are_unknown_in_the_report_list_and_exports(
    server: FakeServer, workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = write_suite(workdir / "s.yaml", server.base_url, scenarios=SIMPLE)
    code, out, err = qualspec(capsys, "run", str(suite), "--quiet")
    assert code == 0, out + err
    assert "$0.0000" not in out
    assert "unknown" in out
    data = json.loads(results_files(workdir)[0].read_text(encoding="utf-8"))
    assert data["summary"]["cost_usd"]["total"] is None
    run_id = only_run_id(workdir)
    code, out, err = qualspec(capsys, "runs", "list")
    assert code == 0 and "$0.0000" not in out and "unknown" in out, out
    code, out, err = qualspec(capsys, "runs", "show", run_id)
    assert code == 0 and "$0.0000" not in out and "unknown" in out, out
    code, out, err = qualspec(capsys, "runs", "export", run_id, "--format", "json")
    assert json.loads(out)["summary"]["cost_usd"]["total"] is None


def test_known_prices_are_shown(
    server: FakeServer, workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    prices = workdir / "prices.json"
    prices.write_text(
        json.dumps(
            {
                "fake/model-a": {"input": 1.0, "output": 1.0},
                "fake/judge": {"input": 1.0, "output": 1.0},
            }
        ),
        encoding="utf-8",
    )
    suite = write_suite(workdir / "s.yaml", server.base_url, scenarios=SIMPLE)
    code, out, err = qualspec(capsys, "run", str(suite), "--quiet", "--prices", str(prices))
    assert code == 0, out + err
    assert "unknown" not in out
    data = json.loads(results_files(workdir)[0].read_text(encoding="utf-8"))
    assert data["summary"]["cost_usd"]["total"] > 0


# ----------------------------------------------------------------------- item 7


def test_show_responses_shows_every_repeated_run(
    server: FakeServer, workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    seen: list[int] = []

    suite = write_suite(workdir / "s.yaml", server.base_url, scenarios=SIMPLE)
    code, out, err = qualspec(
        capsys, "run", str(suite), "--quiet", "--show-responses", "--runs", "3"
    )
    assert code == 0, out + err
    answers = [line for line in out.splitlines() if "Answer to:" in line]
    assert len(answers) == 3, out
    seen.append(len(answers))
    run_id = only_run_id(workdir)
    code, out, err = qualspec(capsys, "runs", "show", run_id, "--show-responses")
    assert len([line for line in out.splitlines() if "Answer to:" in line]) == 3, out


# ----------------------------------------------------------------------- item 22


def test_reports_follow_suite_order_and_say_one_call(
    server: FakeServer, workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenarios = "".join(
        f"  - {{name: {n}, prompt: 'q {n}', criteria: [x]}}\n" for n in ("zeta", "alpha", "mid")
    )
    suite = write_suite(
        workdir / "s.yaml",
        server.base_url,
        scenarios=scenarios,
        candidates="[{name: zc, model: fake/model-a}, {name: ac, model: fake/model-b}]",
    )
    code, out, err = qualspec(capsys, "run", str(suite), "--quiet")
    assert code == 0, out + err
    assert out.index("zeta") < out.index("alpha") < out.index("mid"), out
    section = out[out.index("zeta") : out.index("alpha")]
    assert section.index("zc") < section.index("ac"), section
    assert "(none)" not in out
    assert "ROLE" not in out
    run_id = only_run_id(workdir)
    code, shown, err = qualspec(capsys, "runs", "show", run_id)
    assert shown.index("zeta") < shown.index("alpha") < shown.index("mid"), shown
    code, out, err = qualspec(
        capsys, "run", str(suite), "--dry-run", "--scenarios", "zeta", "--candidates", "zc"
    )
    assert code == 0, err
    assert "1 calls" not in out and " 1 call " in out + " ", out


def test_runs_list_never_cuts_run_ids(
    server: FakeServer,
    workdir: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    suite = write_suite(
        workdir / "s.yaml",
        server.base_url,
        scenarios=SIMPLE,
        name="a suite with a rather long name that takes room in the table",
    )
    assert qualspec(capsys, "run", str(suite), "--quiet")[0] == 0
    run_id = only_run_id(workdir)
    monkeypatch.setenv("COLUMNS", "40")
    code, out, err = qualspec(capsys, "runs", "list")
    assert code == 0, err
    assert run_id in out, out


def test_a_failed_cell_shows_its_error_and_the_provider_message(
    server: FakeServer, workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    class ErrorBody(FakeServer):
        async def _handle(self, request: Any) -> Any:
            from aiohttp import web

            await request.read()
            return web.json_response({"error": {"message": "model overloaded: try later"}})

    with ErrorBody() as failing:
        suite = write_suite(workdir / "s.yaml", failing.base_url, scenarios=SIMPLE)
        code, out, err = qualspec(capsys, "run", str(suite), "--quiet", "--retries", "0")
    assert "model overloaded: try later" in out, out
    assert "no choices" not in out
    run_id = only_run_id(workdir)
    code, out, err = qualspec(capsys, "runs", "show", run_id)
    assert "model overloaded: try later" in out, out


# ----------------------------------------------------------------------- item 23


def test_no_judge_needs_no_criteria_names_no_judge_and_marks_answered(
    server: FakeServer, workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = write_suite(
        workdir / "s.yaml",
        server.base_url,
        scenarios="  - {name: s, prompt: 'hello'}\n",
    )
    code, out, err = qualspec(capsys, "run", str(suite), "--dry-run", "--no-judge")
    assert code == 0, out + err
    assert "fake/judge" not in out and "judge        none (--no-judge)" in out, out
    assert "Judge calls" not in out
    code, out, err = qualspec(capsys, "run", str(suite), "--quiet", "--no-judge")
    assert code == 0, out + err
    assert "UNSCORED" not in out and "ANSWERED" in out, out
    # without --no-judge, a scenario with nothing to judge is an error, before any call
    calls = server.calls
    code, out, err = qualspec(capsys, "run", str(suite), "--quiet")
    assert code == 2 and "no criteria" in err, out + err
    assert server.calls == calls


# ----------------------------------------------------------------------- item 24


def test_a_run_where_every_call_failed_exits_1(
    server: FakeServer, workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server.set_fault_mode("fail", status=500)
    suite = write_suite(workdir / "s.yaml", server.base_url, scenarios=SIMPLE)
    code, out, err = qualspec(capsys, "run", str(suite), "--quiet", "--retries", "0")
    assert code == 1, out + err
    assert "no cell could be answered" in err
    assert len(results_files(workdir)) == 1


def test_fail_on_errors_exits_1_when_some_cell_errored(
    server: FakeServer, workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenarios = SIMPLE + "  - {name: t, prompt: 'other', criteria: [x]}\n"
    suite = write_suite(workdir / "s.yaml", server.base_url, scenarios=scenarios)
    server.fail_next(1, status=400)  # the first call (no judge calibration to come first)
    code, out, err = qualspec(
        capsys,
        "run",
        str(suite),
        "--quiet",
        "--retries",
        "0",
        "--max-concurrency",
        "1",
        "--no-calibration",
    )
    assert code == 0, out + err  # one cell answered: exit 0 by default
    server.fail_next(1, status=400)
    code, out, err = qualspec(
        capsys,
        "run",
        str(suite),
        "--quiet",
        "--retries",
        "0",
        "--max-concurrency",
        "1",
        "--no-cache",
        "--fail-on-errors",
        "--no-calibration",
    )
    assert code == 1, out + err
    assert "error" in err


def test_failing_scores_still_exit_0(
    server: FakeServer, workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server.judge_reply = '{"score": 1, "reasoning": "bad"}'
    suite = write_suite(workdir / "s.yaml", server.base_url, scenarios=SIMPLE)
    code, out, err = qualspec(capsys, "run", str(suite), "--quiet", "--fail-on-errors")
    assert code == 0, out + err
    assert "FAIL" in out


# ----------------------------------------------------------------------- item 19 (part)


def test_an_unknown_resume_id_prints_its_error_alone(
    server: FakeServer, workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = write_suite(workdir / "s.yaml", server.base_url, scenarios=SIMPLE)
    code, out, err = qualspec(capsys, "run", str(suite), "--resume", "nosuchrunid")
    assert code == 2, out + err
    assert len(err.strip().splitlines()) == 1, err
    assert "answers" not in err and "judgments" not in err, err
    assert "nosuchrunid" in err


@pytest.mark.parametrize(
    "command",
    [
        ["runs", "show", "nosuchrunid"],
        ["runs", "export", "nosuchrunid", "--format", "json"],
        ["diff", "nosuchrunid", "{known}"],
        ["diff", "{known}", "nosuchrunid"],
    ],
)
def test_an_unknown_run_id_exits_2_with_one_line(
    server: FakeServer, workdir: Path, capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    suite = write_suite(workdir / "s.yaml", server.base_url, scenarios=SIMPLE)
    assert qualspec(capsys, "run", str(suite), "--quiet")[0] == 0
    known = only_run_id(workdir)
    args = [part.format(known=known) for part in command]
    code, out, err = qualspec(capsys, *args)
    assert code == 2, out + err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "nosuchrunid" in lines[0], err
    assert "Traceback" not in err and out == ""


# ----------------------------------------------------------------------- item 9


def test_csv_export_neutralises_formulas(
    server: FakeServer, workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = write_suite(
        workdir / "s.yaml",
        server.base_url,
        scenarios="  - {name: '=cmd', prompt: 'hello', criteria: ['+x']}\n",
    )
    assert qualspec(capsys, "run", str(suite), "--quiet")[0] == 0
    run_id = only_run_id(workdir)
    code, out, err = qualspec(capsys, "runs", "export", run_id, "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert rows[0]["scenario"] == "'=cmd" and rows[0]["criterion"] == "'+x"
    code, out, err = qualspec(capsys, "runs", "export", run_id, "--format", "jsonl")
    assert json.loads(out.splitlines()[0])["scenario"] == "=cmd"
