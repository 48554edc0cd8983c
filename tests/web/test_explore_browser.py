"""The run page's user journeys in real headless Chromium (Debian's ``chromium`` driven by
Playwright; never a downloaded browser), served by uvicorn in a thread on port 0 (issue 19,
item 7): find the failures of a run by filter and search; open a failing answer and read
why.

Each journey keeps a screenshot: under ``$QUALSPEC_TEST_ARTIFACTS/web-journeys/`` when that
variable is set (CI keeps the folder), else in the test's own ``tmp_path``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers_explore import CHECK, PREAMBLES, PROMPT, SYSTEM, seed_explore_run
from helpers_web import uvicorn_server

from qualspec.web import create_app

pytestmark = pytest.mark.timeout(600)

WATCH = """
window.__violations = [];
document.addEventListener('securitypolicyviolation', e => {
  window.__violations.push(e.violatedDirective + ' ' + e.blockedURI);
});
"""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """(base URL, run id): the seeded run (with 20 input rows besides), served."""
    work = tmp_path_factory.mktemp("explore-browser")
    db = f"sqlite:///{work / 'explore.db'}"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("QUALSPEC_HOME", str(work / "home"))
        run_id = seed_explore_run(db, inputs=20)
        with uvicorn_server(create_app(db=db)) as base:
            yield base, run_id


@pytest.fixture
def artifacts(tmp_path: Path) -> Path:
    """Where the journeys' screenshots go (see the module docstring)."""
    root = os.environ.get("QUALSPEC_TEST_ARTIFACTS")
    folder = Path(root) / "web-journeys" if root else tmp_path / "web-journeys"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


class Tab:
    """A page with what it logged, what it tried to fetch off the site, and its CSP
    violations."""

    def __init__(self, browser: Any, base: str, *, script: bool) -> None:
        self.base = base
        self.context = browser.new_context(
            java_script_enabled=script, viewport={"width": 1360, "height": 900}
        )
        self.foreign: list[str] = []
        self.errors: list[str] = []

        def route(r: Any) -> None:
            if r.request.url.startswith(base):
                r.continue_()
            else:
                self.foreign.append(r.request.url)
                r.abort()

        self.context.route("**/*", route)
        self.page = self.context.new_page()
        self.page.add_init_script(WATCH)
        self.page.on("pageerror", lambda exc: self.errors.append(str(exc)))
        self.page.on(
            "console",
            lambda m: self.errors.append(m.text) if m.type in ("error", "warning") else None,
        )

    def clean(self) -> bool:
        violations = self.page.evaluate("window.__violations || []")
        return not violations and not self.errors and not self.foreign


@pytest.fixture
def tab(browser: Any, site: tuple[str, str]) -> Iterator[Any]:
    made: list[Tab] = []

    def make(script: bool = True) -> Tab:
        made.append(Tab(browser, site[0], script=script))
        return made[-1]

    yield make
    for t in made:
        t.context.close()


def _rows(page: Any) -> list[dict[str, str]]:
    out = []
    for row in page.locator("table.answers tr.answer").all():
        cells = row.locator("td").all_inner_texts()
        out.append({"candidate": cells[0], "t": cells[2], "verdict": cells[5], "why": cells[6]})
    return out


def test_journey_find_the_failures_of_a_run_by_filter_and_search(
    tab: Any, site: tuple[str, str], artifacts: Path
) -> None:
    base, run_id = site
    t = tab(script=False)  # the filters are a plain form: no script needed
    page = t.page
    page.goto(base + "/runs", wait_until="load")
    page.locator(f'a[href="/runs/{run_id}"]').click()
    page.wait_for_selector("form.filters")
    assert "showing 1-50 of 336 matching" in page.inner_text("#count")
    # failed only, for one candidate: the URL carries the view
    form = page.locator("form.filters")
    form.locator('input[name="failed"]').check()
    form.locator('select[name="candidate"]').select_option("beta")
    with page.expect_navigation():
        form.locator('button[type="submit"]').click()
    assert "failed=1" in page.url and "candidate=beta" in page.url
    assert "showing 1-50 of 84 matching" in page.inner_text("#count")
    rows = _rows(page)
    assert {r["verdict"] for r in rows} == {"FAIL"} and {r["candidate"] for r in rows} == {"beta"}
    assert {r["why"] for r in rows} == {f"check '{CHECK}' failed"}
    # a search narrows it further; the view opens again from its URL alone
    page.locator('form.filters input[name="q"]').fill("SEINE expert")
    page.locator('form.filters select[name="scenario"]').select_option("capital")
    with page.expect_navigation():
        page.locator('form.filters button[type="submit"]').click()
    assert "showing 1-2 of 2 matching" in page.inner_text("#count")
    shared = page.url
    other = tab(script=False)
    other.page.goto(shared, wait_until="load")
    assert other.page.inner_text("#count") == page.inner_text("#count")
    assert other.page.input_value('form.filters input[name="q"]') == "SEINE expert"
    # the next page of a long list, and a red matrix cell's answers
    page.goto(f"{base}/runs/{run_id}?failed=1", wait_until="load")
    assert "showing 1-50 of 168 matching" in page.inner_text("#count")
    page.locator("p.pager a", has_text="2").last.click()
    page.wait_for_load_state("load")
    assert "showing 51-100 of 168 matching" in page.inner_text("#count")
    page.goto(f"{base}/runs/{run_id}", wait_until="load")
    red = page.locator("#matrix td.num.fail a").first
    red.click()
    page.wait_for_load_state("load")
    rows = _rows(page)
    assert len(rows) == 2 and {r["verdict"] for r in rows} == {"FAIL"}
    assert all(r["why"] for r in rows)
    shot = artifacts / "find-the-failures.png"
    page.goto(f"{base}/runs/{run_id}?failed=1&candidate=beta&scenario=capital", wait_until="load")
    page.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 10_000
    assert t.clean() and other.clean()


def test_journey_open_a_failing_answer_and_read_why(
    tab: Any, site: tuple[str, str], artifacts: Path
) -> None:
    base, run_id = site
    t = tab(script=True)
    page = t.page
    page.goto(f"{base}/runs/{run_id}", wait_until="load")
    # the criterion that fails most, at the top: its count lists the answers it failed on
    top = page.locator("#failing table.aspects tbody tr").first
    assert top.locator("td").first.inner_text() == "clarity"
    top.locator("a").click()
    page.wait_for_load_state("load")
    assert "criterion=clarity" in page.url and "failed=1" in page.url
    rows = _rows(page)
    assert rows and all("clarity" in r["why"] for r in rows)
    page.goto(
        f"{base}/runs/{run_id}?failed=1&candidate=alpha&role=naive&scenario=capital",
        wait_until="load",
    )
    first = page.locator("table.answers tr.answer").first
    assert first.locator("td.why").inner_text() == "score 6.5/10 < 7: clarity 4 < 7"
    details = page.locator("table.answers details.resp").first
    assert not details.locator("dl.sent").is_visible()
    details.locator("summary").click()
    assert details.locator("dl.sent").is_visible()
    sent = details.locator("dl.sent").inner_text()
    assert SYSTEM in sent and PREAMBLES["naive"] in sent and PROMPT in sent
    verdicts = details.locator("table.criteria tbody tr")
    by_criterion = {
        cells[1]: cells for cells in (r.locator("td").all_inner_texts() for r in verdicts.all())
    }
    assert by_criterion["clarity"][3] == "FAIL" and "clarity rated 4" in by_criterion["clarity"][4]
    assert by_criterion["accuracy"][3] == "PASS"
    assert by_criterion[CHECK][3] == "PASS"
    shot = artifacts / "read-why.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 10_000
    assert t.clean()
