"""The diff and reference review journeys in real headless Chromium (Debian's ``chromium``
driven by Playwright; never a downloaded browser), served by uvicorn in a thread on port 0
(issue 19, item 7): compare two runs; review a reference against its source.

Each journey keeps a screenshot: under ``$QUALSPEC_TEST_ARTIFACTS/web-journeys/`` when that
variable is set (CI keeps the folder), else in the test's own ``tmp_path``. Every page must
log no error, break no CSP rule and ask nothing of another site.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers_compare import HTTP_500, seed_compare_runs
from helpers_review import CALL_KEY, DESCRIPTION, seed_review_run
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
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """The base URL and the seeded runs' ids (a reference-graded run, then A, another
    suite's run and B of suite Capitals, B the newest)."""
    work = tmp_path_factory.mktemp("compare-browser")
    db = f"sqlite:///{work / 'compare.db'}"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("QUALSPEC_HOME", str(work / "home"))
        review, _ = seed_review_run(db, work)
        a, b, other = seed_compare_runs(db)
        with uvicorn_server(create_app(db=db)) as base:
            yield {"base": base, "a": a, "b": b, "other": other, "review": review}


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

    def __init__(self, browser: Any, base: str) -> None:
        self.context = browser.new_context(viewport={"width": 1360, "height": 900})
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

    def problems(self) -> list[str]:
        violations = self.page.evaluate("window.__violations || []")
        return [*violations, *self.errors, *self.foreign]


@pytest.fixture
def tab(browser: Any, site: dict[str, str]) -> Iterator[Tab]:
    t = Tab(browser, site["base"])
    yield t
    t.context.close()


def _row(page: Any, candidate: str) -> Any:
    return page.locator("tbody#compare tr.tuple").filter(
        has=page.locator("td:nth-child(2)", has_text=candidate)
    )


def test_journey_compare_two_runs(tab: Tab, site: dict[str, str], artifacts: Path) -> None:
    base, a, b = site["base"], site["a"], site["b"]
    page = tab.page
    page.goto(base + "/runs", wait_until="load")
    # the runs list suggests the newest run and its own suite's previous run
    assert page.locator('form.diffpick select[name="a"]').input_value() == a
    assert page.locator('form.diffpick select[name="b"]').input_value() == b
    with page.expect_navigation():
        page.locator("form.diffpick button").click()
    assert f"a={a}" in page.url and f"b={b}" in page.url
    counts = page.inner_text("#diff-counts")
    assert "new_fail 2" in counts and "error 1" in counts and "unscored" not in counts
    # the HTTP 500 reads as an error with its message, on B's side
    beta = _row(page, "beta")
    assert beta.get_attribute("data-status") == "error"
    assert beta.locator('td[data-side="2"]').inner_text() == f"error: {HTTP_500}"
    # why alpha fails now: its clarity fell 3 points; the answers side by side
    alpha = _row(page, "alpha")
    assert alpha.locator('td[data-side="1"]').inner_text().startswith("8.00 PASS")
    assert alpha.locator('td[data-side="2"]').inner_text().startswith("6.50 FAIL")
    detail = alpha.locator("xpath=following-sibling::tr[1]")
    assert not detail.locator("table.aspects").is_visible()
    detail.locator("summary").click()
    clarity = detail.locator("tr.aspect", has_text="clarity")
    assert clarity.locator("td").all_inner_texts()[2:] == ["8.00", "5.00", "-3.00"]
    texts = detail.locator("div.sidebyside div.pair").first.locator("pre").all_inner_texts()
    assert texts == ["Paris is the capital (alpha, A).", "Paris, I think? (alpha, B)."]
    shot = artifacts / "compare-two-runs.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 10_000
    # B's verdict opens B's answers of that tuple in the run explorer
    with page.expect_navigation():
        alpha.locator('td[data-side="2"] a').click()
    assert page.url.startswith(f"{base}/runs/{b}?") and "candidate=alpha" in page.url
    assert "showing 1-2 of 2 matching" in page.inner_text("#count")
    # the picker offers suite Capitals only, until asked for every suite
    page.goto(f"{base}/diff?a={a}&b={b}", wait_until="load")
    options = page.locator('#diff-picker select[name="a"] option').all_inner_texts()
    assert options and all("Capitals" in o for o in options)
    with page.expect_navigation():
        page.locator("#show-all").click()
    options = page.locator('#diff-picker select[name="a"] option').all_inner_texts()
    assert any("Other" in o for o in options) and any("Profiles" in o for o in options)
    assert tab.problems() == []


def test_journey_review_a_reference_against_its_source(
    tab: Tab, site: dict[str, str], artifacts: Path
) -> None:
    base = site["base"]
    page = tab.page
    page.goto(base + "/references", wait_until="load")
    with page.expect_navigation():
        page.locator(f'a[href="/references/{CALL_KEY}"]').click()
    # the source: what the row said, and what was sent from it
    assert DESCRIPTION in page.inner_text("#source-row")
    assert page.inner_text("#source-sent").endswith(DESCRIPTION)
    assert "unchanged since the run" in page.inner_text("#source-note")
    assert '  "industry": "retail",' in page.inner_text("#ref-answer")  # pretty JSON
    # a candidate's answer against it, field by field
    changed = page.locator("#answer-diff tr.field.changed td:first-child").all_inner_texts()
    assert changed == ["industry", "founded_year"]
    # the candidate's other answer (a GET form: no script) is the reference's, field for field
    page.locator('#answer-choices select[name="answer"]').select_option(label="small · T 0 · run 2")
    with page.expect_navigation():
        page.locator("#answer-choices button").click()
    assert "answer=candidate-small-1" in page.url
    assert page.locator("#answer-diff tr.field").count() == 4
    assert page.locator("#answer-diff tr.field.changed").count() == 0
    # the reviewer corrects the industry: the override, diffed against the model's answer
    fixed = '{"name": "Acme Corp", "industry": "manufacturing", "founded_year": 1947}'
    page.locator('#override-form textarea[name="answer"]').fill(fixed)
    page.locator('#override-form textarea[name="notes"]').fill("anvils are manufactured")
    with page.expect_navigation():
        page.locator("#override-form button").click()
    assert page.inner_text("#ref-status") == "validated"
    rows = {
        cells[0]: cells[1:]
        for cells in (
            r.locator("td").all_inner_texts() for r in page.locator("#override-diff tr.field").all()
        )
    }
    assert rows["industry"] == ['"retail"', '"manufacturing"', "changed"]
    assert rows["tags[0]"] == ['"anvils"', "", "missing"]
    # graders use the override now: the candidate's industry agrees with it
    changed = page.locator("#answer-diff tr.field.changed td:first-child").all_inner_texts()
    assert changed == ["founded_year"]
    shot = artifacts / "review-a-reference.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 10_000
    assert tab.problems() == []
