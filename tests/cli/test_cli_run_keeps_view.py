"""``qualspec run`` keeps the page snapshot of a run of 1,000 answers or more at its end
(issue 19: the web app's first view of a large run reads it instead of loading the run); a
smaller run leaves none (its first view makes it). End to end, in process, against the
fake server."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_cli_reports import (  # the CLI report tests' helpers and fixtures
    SIMPLE,
    only_run_id,
    qualspec,
    server,
    workdir,
    write_suite,
)

from qualspec.store import Store
from qualspec.testing import FakeServer

__all__ = ["server", "workdir"]  # fixtures, imported to be used here


def _kept(work: Path, run_id: str) -> tuple[bool, int]:
    with Store.open(f"sqlite:///{work.parent / 'qualspec-home' / 'qualspec.db'}") as store:
        found = store.cache_get_many([f"view:{run_id}"])
        return bool(found), store.get_run(run_id).n_responses


def test_a_large_run_leaves_its_page_snapshot(
    server: FakeServer, workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = ", ".join(f"{{n: r{i}}}" for i in range(100))
    scenarios = (
        f'  - name: s\n    prompt: "Say {{{{ n }}}}."\n    criteria: ["is an answer"]\n'
        f"    inputs: [{rows}]\n"
    )
    suite = write_suite(
        workdir / "big.yaml",
        server.base_url,
        scenarios=scenarios,
        extra="runs_per_temperature: 5\n",
    )
    code, out, err = qualspec(capsys, "run", str(suite), "--quiet", "--no-judge", "--temps", "0,1")
    assert code == 0, out + err
    assert _kept(workdir, only_run_id(workdir)) == (True, 1000)


def test_a_small_run_leaves_none(
    server: FakeServer, workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = write_suite(workdir / "s.yaml", server.base_url, scenarios=SIMPLE)
    code, out, err = qualspec(capsys, "run", str(suite), "--quiet", "--no-judge")
    assert code == 0, out + err
    assert _kept(workdir, only_run_id(workdir)) == (False, 1)


def test_a_run_over_the_summary_limit_keeps_its_page_snapshot_too(
    server: FakeServer, workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Above ``--summarise-above`` work items (default 5,000; 50 here, so 60 calls prove it)
    the run is summarised (nothing loaded whole) and its page snapshot is still kept, built
    from the store in parts (issue 19: the first view of a 100,000-answer run no longer
    builds it), whatever the run's size."""
    rows = workdir / "rows.csv"
    rows.write_text("id,n\n" + "".join(f"r{i},{i}\n" for i in range(30)), encoding="utf-8")
    scenarios = '  - name: s\n    prompt: "Say {{ n }}."\n    inputs: rows.csv\n'
    suite = write_suite(workdir / "big.yaml", server.base_url, scenarios=scenarios)
    html = workdir / "big.html"
    flags = ["--quiet", "--no-judge", "--temps", "0,1", "--html", str(html)]
    code, out, err = qualspec(capsys, "run", str(suite), *flags, "--summarise-above", "50")
    assert code == 0, out + err
    run_id = only_run_id(workdir)
    assert "Large run: 60 answers" in out
    assert f"Run page: ready for `qualspec serve` (/runs/{run_id})" in out
    assert _kept(workdir, run_id) == (True, 60)
    # --html keeps working: the run summed up from its snapshot (not every answer)
    assert f"HTML report: {html} (the run summed up" in out
    page = html.read_text(encoding="utf-8")
    assert "default-src &#39;none&#39;" in page and "<script" not in page  # the strict CSP
    assert "A large run: this report sums it up" in page
    assert ">60<" in page  # the candidate's answers, in its overview line
    assert page.count("<tr><td>s</td><td>r") == 30  # a matrix row per input row


def test_at_or_under_the_summary_limit_a_run_is_reported_whole(
    server: FakeServer, workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--summarise-above N`` summarises runs of more than N work items only."""
    suite = write_suite(workdir / "s.yaml", server.base_url, scenarios=SIMPLE)
    code, out, err = qualspec(
        capsys, "run", str(suite), "--quiet", "--no-judge", "--summarise-above", "1"
    )
    assert code == 0, out + err
    assert "Large run:" not in out
    assert _kept(workdir, only_run_id(workdir)) == (False, 1)


def test_a_summary_limit_below_one_is_refused_in_one_line(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = qualspec(capsys, "run", "any.yaml", "--summarise-above", "0")
    assert code == 2
    assert "--summarise-above: expected 1 or more, got 0" in err
    assert "Traceback" not in err
