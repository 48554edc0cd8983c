"""The HTML report in real headless Chromium (Debian's ``chromium``, driven by Playwright).

The report comes from a real run: ``qualspec run --html`` against the fake server, 2
candidates x 2 roles x 2 scenarios x 2 temperatures, one scenario's prompt (echoed in its
answers) and the judge's reasoning carrying script payloads. The page is opened from a
``file://`` URL with every other request aborted.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers_html import FAKE_KEY_ENV, PAYLOAD, PAYLOADS, judge_by_role, write_suite

from qualspec.cli import main
from qualspec.testing import FakeServer

pytestmark = pytest.mark.timeout(600)

# collects CSP violations before the page's own content runs (an init script is injected
# by the browser's devtools protocol, which the page's CSP does not govern)
WATCH_CSP = """
window.__violations = [];
document.addEventListener('securitypolicyviolation', e => {
  window.__violations.push(e.violatedDirective + ' ' + e.blockedURI);
});
"""


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``qualspec run SUITE --html`` once for the module."""
    work = tmp_path_factory.mktemp("html-run")
    with pytest.MonkeyPatch.context() as mp, FakeServer(judge_reply=judge_by_role) as server:
        mp.chdir(work)
        mp.setenv("QUALSPEC_HOME", str(work / "home"))
        mp.setenv(FAKE_KEY_ENV, "sk-html")
        suite = write_suite(work / "suite.yaml", server.base_url)
        with pytest.raises(SystemExit) as exc:
            main(["run", str(suite), "--quiet", "--no-calibration", "--html", "report.html"])
        assert exc.value.code == 0
    path = work / "report.html"
    assert path.is_file()
    return path


class Opened:
    """A page opened offline, with what it logged and what it tried to fetch."""

    def __init__(self, browser: Any, path: Path) -> None:
        self.context = browser.new_context(java_script_enabled=True)
        self.attempts: list[str] = []
        self.console_errors: list[str] = []
        self.page_errors: list[str] = []

        def route(r: Any) -> None:
            if r.request.url.startswith("file://"):
                r.continue_()
            else:
                self.attempts.append(r.request.url)
                r.abort()

        self.context.route("**/*", route)
        self.page = self.context.new_page()
        self.page.add_init_script(WATCH_CSP)
        self.page.on("request", self._request)
        self.page.on("console", self._console)
        self.page.on("pageerror", lambda exc: self.page_errors.append(str(exc)))
        self.page.goto(path.as_uri(), wait_until="load")

    def _request(self, request: Any) -> None:
        if not request.url.startswith("file://"):
            self.attempts.append(request.url)

    def _console(self, message: Any) -> None:
        if message.type in ("error", "warning"):
            self.console_errors.append(f"{message.type}: {message.text}")

    def violations(self) -> list[str]:
        found: list[str] = self.page.evaluate("window.__violations")
        return found

    def close(self) -> None:
        self.context.close()


@pytest.fixture
def opened(browser: Any, report: Path) -> Iterator[Opened]:
    page = Opened(browser, report)
    try:
        yield page
    finally:
        page.close()


def test_opens_offline_with_no_console_error_no_csp_violation_no_request(
    opened: Opened,
) -> None:
    page = opened.page
    assert page.title().startswith("HTML <b>report</b>")
    assert page.locator("h1").inner_text() == "HTML <b>report</b>"
    assert opened.console_errors == []
    assert opened.page_errors == []
    assert opened.violations() == []
    assert opened.attempts == []
    # the page's style applied (its hash is in the CSP): the hidden role panel is hidden
    assert page.locator('.rp[data-role="expert"]').first.is_hidden()


def test_the_watchers_do_see_a_violation_and_a_request(browser: Any, tmp_path: Path) -> None:
    """A control: the same checks catch a script the CSP blocks, and a fetch attempt."""
    bad = tmp_path / "bad.html"
    source = Path(__file__).with_name("helpers_html.py")  # any file: only its URL matters
    bad.write_text(
        "<!DOCTYPE html><html><head>"
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'">'
        "</head><body><script>window.__pwned=1</script>"
        f"<p>{source.name}</p></body></html>",
        encoding="utf-8",
    )
    opened = Opened(browser, bad)
    try:
        assert opened.page.evaluate("typeof window.__pwned") == "undefined"
        assert any("script-src" in v for v in opened.violations())
        assert any("Content Security Policy" in e for e in opened.console_errors)
    finally:
        opened.close()
    fetching = tmp_path / "fetching.html"
    fetching.write_text(
        '<!DOCTYPE html><html><body><img src="http://192.0.2.1/x.png"></body></html>',
        encoding="utf-8",
    )
    opened = Opened(browser, fetching)
    try:
        assert opened.attempts and opened.attempts[0].startswith("http://192.0.2.1/")
    finally:
        opened.close()


def test_role_tabs_switch_which_rows_are_shown(opened: Opened) -> None:
    page = opened.page
    naive_rows = page.locator('.rp[data-role="naive"] tr.mrow')
    expert_rows = page.locator('.rp[data-role="expert"] tr.mrow')
    assert naive_rows.count() == 4 and expert_rows.count() == 4  # 2 candidates x 2 scenarios
    assert all(naive_rows.nth(i).is_visible() for i in range(4))
    assert not any(expert_rows.nth(i).is_visible() for i in range(4))

    page.locator('label[data-role="expert"]').click()
    assert page.locator("#rt-1").is_checked()
    assert all(expert_rows.nth(i).is_visible() for i in range(4))
    assert not any(naive_rows.nth(i).is_visible() for i in range(4))
    # the judge gave the expert's answers 8, the naive's 5: the shown scores follow the tab
    assert expert_rows.first.locator("td").first.inner_text() == "8"

    page.locator('label[data-role="naive"]').click()
    assert all(naive_rows.nth(i).is_visible() for i in range(4))
    assert not any(expert_rows.nth(i).is_visible() for i in range(4))
    assert naive_rows.first.locator("td").first.inner_text() == "5"
    # the keyboard works too: arrows move between the radios of the group
    page.locator("#rt-0").focus()
    page.keyboard.press("ArrowRight")
    assert page.locator("#rt-1").is_checked() and expert_rows.first.is_visible()


def test_charts_are_drawn_one_line_per_candidate_and_role(opened: Opened) -> None:
    page = opened.page
    charts = page.locator("#temperatures svg.chart")
    assert charts.count() == 2  # one per scenario
    for i in range(2):
        chart = charts.nth(i)
        assert chart.is_visible()
        assert chart.locator("g.series").count() == 4  # 2 candidates x 2 roles
        assert chart.locator("g.series polyline").count() == 4
        assert chart.locator("g.series circle").count() == 8  # 2 temperatures each
        box = chart.bounding_box()
        assert box is not None and box["width"] > 300 and box["height"] > 150
    labels = charts.first.locator("g.series").evaluate_all(
        "gs => gs.map(g => g.getAttribute('data-series'))"
    )
    assert labels == ["alpha (naive)", "beta (naive)", "alpha (expert)", "beta (expert)"]


def test_script_payloads_show_as_text_and_nothing_runs(opened: Opened) -> None:
    page = opened.page
    assert page.evaluate("typeof window.__pwned") == "undefined"
    assert page.evaluate("document.scripts.length") == 0
    assert page.evaluate("document.images.length") == 0
    answer = page.locator("details.resp").first
    assert answer.locator("pre.answer").is_hidden()  # collapsed until opened
    answer.locator("summary").click()
    text = answer.locator("pre.answer").inner_text()
    assert PAYLOAD in text
    for payload in PAYLOADS:
        assert payload in text
    reasoning = answer.locator("td.reason").first.inner_text()
    assert f"Judged. {PAYLOAD}" in reasoning
    assert page.evaluate("typeof window.__pwned") == "undefined"
    assert opened.violations() == [] and opened.console_errors == []


def test_every_answer_expands_to_its_scores(opened: Opened) -> None:
    page = opened.page
    page.locator('label[data-role="expert"]').click()
    answers = page.locator('.rp[data-role="expert"] details.resp')
    assert answers.count() == 2 * 2 * 2  # 2 scenarios x 2 candidates x 2 temperatures
    last = answers.nth(7)
    last.locator("summary").click()
    assert last.evaluate("d => d.open")
    body = last.locator(".body").inner_text()
    assert "is correct" in body and "PASS" in body
    assert "model: fake/model-b" in body


def test_comparisons_of_the_run_show_winners_reasoning_and_order_bias(opened: Opened) -> None:
    page = opened.page
    comparisons = page.locator("#comparisons section.comparison")
    names = comparisons.evaluate_all("cs => cs.map(c => c.getAttribute('data-comparison'))")
    assert names == ["compare_candidates_within_roles", "compare_roles_within_candidates"]
    across, inside = comparisons.nth(0), comparisons.nth(1)
    # one group per scenario x role (or candidate) x temperature: 2 x 2 x 2
    assert across.locator("details.cmp").count() == 8
    assert inside.locator("details.cmp").count() == 8
    # the fake judge always prefers the answer shown first: judged again in reversed
    # order, it names the other one, every time
    assert "the two orders disagreed in 8 of 8 groups (100%)" in inside.inner_text()
    assert "Order bias check" not in across.inner_text()
    # in the suite's order: scenario xss first, then plain
    first = across.locator("details.cmp").first
    assert first.locator("summary").inner_text().startswith("xss / T 0 / run 1 · role naive")
    first.locator("summary").click()
    assert first.locator("tr.winner").count() == 1  # 8 to 6: one winner
    assert "is fuller. " + PAYLOAD in first.locator(".body").inner_text()
    record = inside.locator("details.cmp").first
    record.locator("summary").click()
    body = record.locator(".body").inner_text()
    assert "is fuller. " + PAYLOAD in body
    # averaged over both orders (8 and 6 each way) the two roles tie
    assert "winner tie" in record.locator("summary").inner_text()
    assert "(the two orders disagreed)" in body and "seed " in body
    assert record.locator("th", has_text="reversed").count() == 1
    assert page.evaluate("typeof window.__pwned") == "undefined"
