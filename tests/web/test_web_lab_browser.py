"""The Lab in real headless Chromium (issue 19, item 7: "run the Lab and stop it"), served
by uvicorn on 127.0.0.1 with the Lab's models scripted on the fake server.

Stop: the second answer is held by the fake server; Stop is pressed while it is held; the
page says it stopped, shows the best answer so far and links to the run, which the server
left ``interrupted``; once the held answer is released, no further call reaches the fake
server. A whole Lab: the best answer comes first, then the score trend (one bar per
iteration, the best marked) and each iteration's changes from the one before. A refused
Lab: the error is a red box naming the field to fix, never a suite's section. No step
waits on a time: each waits on a state of the page or of the server (with generous
timeouts). Each journey keeps a screenshot: under ``$QUALSPEC_TEST_ARTIFACTS/web-journeys/``
when that is set, else in the test's temporary folder.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers_web import KEY_ENV, providers, uvicorn_server

from qualspec.store import Store
from qualspec.testing import FakeServer, LabScript
from qualspec.web import create_app

pytestmark = pytest.mark.timeout(600)

WAIT_MS = 120_000
WATCH = """
window.__violations = [];
document.addEventListener('securitypolicyviolation', e => {
  window.__violations.push(e.violatedDirective + ' ' + e.blockedURI);
});
"""
ANSWERS = (
    "The moon pulls the sea.",
    "The moon pulls the oceans, so the sea rises twice a day.",
    "The moon pulls the oceans twice a day.",
)


@pytest.fixture
def artifacts(tmp_path: Path) -> Path:
    """Where the journeys' screenshots go (see the module docstring)."""
    root = os.environ.get("QUALSPEC_TEST_ARTIFACTS")
    folder = Path(root) / "web-journeys" if root else tmp_path / "web-journeys"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


class Lab:
    """The Lab's models on a fake server: scripted verdicts (0.3, 0.7, 0.5); the ``hold``-th
    answer written (0: none) is held until ``release``."""

    def __init__(self, hold: int = 0) -> None:
        self.script = LabScript(scores=[0.3, 0.7, 0.5], answers=ANSWERS)
        self.hold = hold
        self.asked = threading.Event()
        self.release = threading.Event()
        self._written = 0

    def answer(self, body: dict[str, Any]) -> str:
        self._written += 1
        if self._written == self.hold:
            self.asked.set()
            self.release.wait(WAIT_MS / 1000)
        return self.script.generate(body)


class Site:
    def __init__(self, base: str, db: str, server: FakeServer, lab: Lab) -> None:
        self.base, self.db, self.server, self.lab = base, db, server, lab


@pytest.fixture
def site(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Site]:
    monkeypatch.setenv(KEY_ENV, "sk-web")
    lab = Lab(hold=request.param)
    db = f"sqlite:///{tmp_path / 'lab.db'}"
    with FakeServer(answer=lab.answer, judge_reply=lab.script.evaluate) as server:
        try:
            with uvicorn_server(create_app(db=db, providers=providers(server))) as base:
                yield Site(base, db, server, lab)
        finally:
            lab.release.set()


class Tab:
    """A page that may only reach the site, with its CSP violations and logged errors."""

    def __init__(self, browser: Any, base: str) -> None:
        self.base = base
        self.context = browser.new_context(viewport={"width": 1280, "height": 900})
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
        self.page.set_default_timeout(WAIT_MS)
        self.page.add_init_script(WATCH)
        self.page.on("pageerror", lambda exc: self.errors.append(str(exc)))
        self.page.on(
            "console",
            lambda m: self.errors.append(m.text) if m.type in ("error", "warning") else None,
        )

    def clean(self) -> bool:
        violations = self.page.evaluate("window.__violations")
        return violations == [] and self.errors == [] and self.foreign == []


@pytest.fixture
def tab(browser: Any, site: Site) -> Iterator[Tab]:
    opened = Tab(browser, site.base)
    yield opened
    opened.context.close()


def _start(page: Any, iter_max: int) -> None:
    page.fill("#instruct", "Explain tides")
    page.fill("#resp_format", "Two sentences")
    page.fill("#eval_crit", "Mentions the moon")
    page.fill("#iter_max", str(iter_max))
    page.fill("#score_threshold", "0.8")
    page.fill("#model", "fake/gen")
    page.click("#lab-submit")


def _lab_run_once_ended(db: str) -> Any:
    deadline = time.monotonic() + WAIT_MS / 1000  # waits for a state, not a time
    while time.monotonic() < deadline:
        with Store.open(db) as store:
            runs = [r for r in store.list_runs() if r.metadata.get("kind") == "lab"]
        if runs and runs[0].status != "running":
            return runs[0]
        time.sleep(0.05)
    raise AssertionError("the Lab's run never ended")


@pytest.mark.parametrize("site", [2], indirect=True)  # iteration 2's answer is held
def test_the_lab_stops_when_stop_is_pressed_and_calls_nothing_more(
    site: Site, tab: Tab, artifacts: Path
) -> None:
    page = tab.page
    page.goto(site.base + "/lab", wait_until="load")
    assert page.locator("#lab-stop").is_hidden()  # nothing to stop yet
    _start(page, iter_max=5)
    page.wait_for_selector('article.iteration[data-iteration="1"]')
    assert site.lab.asked.wait(WAIT_MS / 1000), "iteration 2 never asked for its answer"
    assert page.locator("#lab-stop").is_visible()
    page.click("#lab-stop")
    page.wait_for_selector('#lab-status[data-state="stopped"]')
    # the server stopped the Lab: its run ended, interrupted, while the answer was held
    run = _lab_run_once_ended(site.db)
    assert run.status == "interrupted"
    site.lab.release.set()
    status = page.locator("#lab-status")
    assert "Stopped after 1 iteration(s): no further model call is made" in status.inner_text()
    assert status.locator("a").get_attribute("href") == f"/runs/{run.id}"
    assert page.locator("#lab-stop").is_hidden()
    assert not page.locator("#lab-submit").is_disabled()  # ready for another go
    # the best so far comes first, and the trend shows the one iteration scored
    assert "Best answer so far" in page.locator("#lab-result h2").inner_text()
    assert page.locator("#lab-result pre.final").inner_text() == ANSWERS[0]
    assert page.locator("svg.trend g.bar").count() == 1
    assert page.locator("article.iteration").count() == 1
    page.screenshot(path=str(artifacts / "lab-stopped.png"), full_page=True)
    assert tab.clean(), (tab.errors, tab.foreign)
    # the stopped run's page says so
    page.click(f'#lab-status a[href="/runs/{run.id}"]')
    page.wait_for_selector("dl.facts")
    shown = page.locator("main").inner_text()
    assert "stopped before it finished (its Stop pressed or its page closed)" in shown
    assert "Best answer so far" in shown  # the iteration done before Stop is kept
    assert page.locator("pre.final").inner_text() == ANSWERS[0]
    assert page.locator("article.iteration").count() == 1
    assert page.locator("svg.trend g.bar").count() == 1
    # nothing reached the fake server after Stop: iteration 1 (answer, verdict) and the
    # held answer of iteration 2, never evaluated, and no iteration 3
    assert site.server.calls == 3
    assert len(site.lab.script.evaluation_prompts) == 1


@pytest.mark.parametrize("site", [0], indirect=True)
def test_a_whole_lab_shows_the_best_first_the_trend_and_the_changes(
    site: Site, tab: Tab, artifacts: Path
) -> None:
    page = tab.page
    page.goto(site.base + "/lab", wait_until="load")
    _start(page, iter_max=3)
    page.wait_for_selector("#lab-result:not([hidden])")
    page.wait_for_selector('#lab-status[data-state="done"]')
    # the best answer (iteration 2) is above the trend and the iterations, on screen
    order = page.evaluate(
        """() => ['lab-result', 'lab-trend', 'iterations']
            .map(id => document.getElementById(id).getBoundingClientRect().top)"""
    )
    assert order == sorted(order)
    assert page.locator("#lab-result pre.final").inner_text() == ANSWERS[1]
    bars = page.locator("svg.trend g.bar")
    assert bars.count() == 3
    assert page.locator("svg.trend g.bar.best").get_attribute("data-iteration") == "2"
    assert page.locator("svg.trend line.threshold").count() == 1
    heights = [
        float(h or 0)
        for h in page.locator("svg.trend rect").evaluate_all(
            "rects => rects.map(r => r.getAttribute('height'))"
        )
    ]
    assert heights == pytest.approx([24.0, 56.0, 40.0])
    # iteration 2's changes from iteration 1, marked word by word
    second = page.locator('article.iteration[data-iteration="2"] details.changes')
    second.locator("summary").click()
    assert second.locator("ins").all_inner_texts() == ["oceans, so the ", " rises twice a day"]
    assert second.locator("del").count() == 0
    third = page.locator('article.iteration[data-iteration="3"] details.changes')
    assert third.locator("del").count() >= 1
    assert page.locator('article.iteration[data-iteration="1"] details.changes').count() == 0
    page.screenshot(path=str(artifacts / "lab-done.png"), full_page=True)
    assert tab.clean(), (tab.errors, tab.foreign)


@pytest.mark.parametrize("site", [0], indirect=True)
def test_a_lab_error_stands_out_and_says_which_field_to_fix(
    site: Site, tab: Tab, artifacts: Path
) -> None:
    page = tab.page
    page.goto(site.base + "/lab", wait_until="load")
    page.fill("#judge_model", "nosuch/judge")
    _start(page, iter_max=1)
    page.wait_for_selector('#lab-status[data-state="error"]')
    status = page.locator("#lab-status")
    said = status.inner_text()
    assert "judge_model: unknown provider 'nosuch'" in said and "suite" not in said
    assert status.get_attribute("class") == "note-box error"
    assert status.get_attribute("role") == "alert"
    colour = status.evaluate("e => getComputedStyle(e).backgroundColor")
    assert colour not in ("rgba(0, 0, 0, 0)", "transparent")  # a box, not muted text
    assert page.locator("#lab-stop").is_hidden()
    page.screenshot(path=str(artifacts / "lab-error.png"), full_page=True)
    assert site.server.calls == 0
    # the refused request shows as an HTTP error in the console: nothing else is logged
    assert [e for e in tab.errors if "400" not in e] == [] and tab.foreign == []
