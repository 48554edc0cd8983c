"""The web app in real headless Chromium (Debian's ``chromium`` driven by Playwright; never
a downloaded browser), served by uvicorn in a thread on port 0.

The store holds a suite run made against the fake server (2 candidates x 2 roles x 2
temperatures, one prompt - echoed in its answers - carrying script payloads); the Lab's
models are scripted on another fake server.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from typing import Any

import pytest
from helpers_web import KEY_ENV, providers, seed_reference, uvicorn_server

from qualspec import (
    Candidate,
    Evaluation,
    ExecuteOptions,
    ProviderConfig,
    Role,
    Scenario,
    Session,
)
from qualspec.testing import FakeServer, LabScript
from qualspec.web import create_app

pytestmark = pytest.mark.timeout(600)

PAYLOAD = '<script>window.__pwned=1</script><img src=x onerror="window.__pwned=1">'
WATCH = """
window.__violations = [];
document.addEventListener('securitypolicyviolation', e => {
  window.__violations.push(e.violatedDirective + ' ' + e.blockedURI);
});
window.__order = [];
new MutationObserver(records => {
  for (const r of records) {
    for (const n of r.addedNodes) {
      if (n.nodeType === 1 && n.matches('article.iteration')) {
        window.__order.push('iteration ' + n.dataset.iteration);
      }
    }
    if (r.type === 'attributes' && r.target.id === 'lab-result' && !r.target.hidden) {
      window.__order.push('result');
    }
  }
}).observe(document, {subtree: true, childList: true, attributes: true,
                      attributeFilter: ['hidden']});
"""


def _suite_run(db: str) -> str:
    with FakeServer() as suite_server:
        fake = ProviderConfig(
            type="openai", base_url=suite_server.base_url, api_key_env="FAKE_SUITE_KEY"
        )
        evaluation = Evaluation(
            name="Web <b>suite</b>",
            candidates=[
                Candidate(name="alpha", model="fake/model-a"),
                Candidate(name="beta", model="fake/model-b"),
            ],
            roles=[
                Role(name="naive", preamble="I am new here."),
                Role(name="expert", preamble="I am an expert."),
            ],
            scenarios=[Scenario(name="xss", prompt=f"Repeat {PAYLOAD}", criteria=["Helpful"])],
            temperatures=[0.0, 1.0],
            judge="fake/judge",
            providers={"fake": fake},
        )

        async def main() -> str:
            options = dataclasses.replace(ExecuteOptions(), calibrate=False)
            async with Session(db=db, options=options) as session:
                outcome = await session.run(evaluation)
                return outcome.run_id

        return asyncio.run(main())


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    """A store holding one suite run: (database URL, run id)."""
    work = tmp_path_factory.mktemp("web-store")
    db = f"sqlite:///{work / 'web.db'}"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("QUALSPEC_HOME", str(work / "home"))
        mp.setenv("FAKE_SUITE_KEY", "sk-suite")
        run_id = _suite_run(db)
    return db, run_id


class Site:
    """The app served by uvicorn on the stored runs, with the Lab on a fake server."""

    def __init__(self, base: str, script: LabScript, lab_server: FakeServer) -> None:
        self.base = base
        self.script = script
        self.lab_server = lab_server


@pytest.fixture
def serve(
    stored: tuple[str, str], monkeypatch: pytest.MonkeyPatch
) -> Iterator[Callable[..., Site]]:
    monkeypatch.setenv(KEY_ENV, "sk-web")
    with ExitStack() as stack:

        def start(
            token: str | None = None,
            scores: tuple[float | str, ...] = (0.4, 0.9),
            answers: tuple[str, ...] = (),
        ) -> Site:
            script = LabScript(scores=list(scores), answers=list(answers))
            lab = stack.enter_context(
                FakeServer(judge_reply=script.evaluate, answer=script.generate, latency=0.05)
            )
            app = create_app(db=stored[0], providers=providers(lab), token=token)
            return Site(stack.enter_context(uvicorn_server(app)), script, lab)

        yield start


class Page:
    """A page with what it logged, what it tried to fetch off the site, and its CSP
    violations."""

    def __init__(self, browser: Any, base: str) -> None:
        self.base = base
        self.context = browser.new_context(java_script_enabled=True)
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

    def goto(self, path: str) -> Any:
        return self.page.goto(self.base + path, wait_until="load")

    def violations(self) -> list[str]:
        found: list[str] = self.page.evaluate("window.__violations")
        return found

    def close(self) -> None:
        self.context.close()


@pytest.fixture
def open_page(browser: Any) -> Iterator[Callable[[str], Page]]:
    pages: list[Page] = []

    def make(base: str) -> Page:
        pages.append(Page(browser, base))
        return pages[-1]

    yield make
    for page in pages:
        page.close()


def _fill_lab(page: Any, iter_max: int = 3) -> None:
    page.fill("#instruct", "Explain tides")
    page.fill("#resp_format", "Two sentences")
    page.fill("#eval_crit", "Mentions the moon")
    page.fill("#iter_max", str(iter_max))
    page.fill("#score_threshold", "0.8")
    page.fill("#model", "fake/gen")
    page.click("#lab-submit")


def test_the_lab_form_shows_each_iteration_as_it_finishes_then_the_best(
    serve: Callable[..., Site], open_page: Callable[[str], Page]
) -> None:
    site = serve(scores=(0.3, 0.7, 0.5))
    opened = open_page(site.base)
    page = opened.page
    opened.goto("/lab")
    _fill_lab(page)
    page.wait_for_selector("#lab-result:not([hidden])", timeout=120_000)
    # every iteration card was added before the result was shown, in order
    assert page.evaluate("window.__order") == [
        "iteration 1",
        "iteration 2",
        "iteration 3",
        "result",
    ]
    cards = page.locator("article.iteration")
    assert cards.count() == 3
    assert "score 0.30" in cards.nth(0).inner_text()
    assert "Verdict 1: rated 0.3." in cards.nth(0).locator(".reasoning").inner_text()
    assert "Suggestion 1: add an example" in cards.nth(0).locator(".suggestions").inner_text()
    # the best (iteration 2), not the last, is marked and given as the answer
    best = page.locator("article.iteration.best")
    assert best.count() == 1 and best.get_attribute("data-iteration") == "2"
    assert "best answer" in best.inner_text()
    assert page.locator("pre.final").inner_text() == "Answer 2"
    assert "did not meet the threshold" in page.locator("#lab-result").inner_text()
    assert opened.violations() == [] and opened.errors == [] and opened.foreign == []
    # the Lab run is listed and its page shows the same history
    page.locator("#lab-result a").click()
    page.wait_for_selector("article.iteration.best")
    assert page.locator("article.iteration.best").get_attribute("data-iteration") == "2"


def test_a_run_opens_from_the_list_and_its_role_tabs_switch(
    serve: Callable[..., Site], open_page: Callable[[str], Page], stored: tuple[str, str]
) -> None:
    site = serve()
    opened = open_page(site.base)
    page = opened.page
    opened.goto("/runs")
    page.locator(f'a[href="/runs/{stored[1]}"]').click()
    page.wait_for_selector("h1")
    assert page.locator("h1").inner_text() == "Web <b>suite</b>"
    # the run page explores the run; its whole report (role tabs, charts) is one click on
    page.locator(f'a[href="/runs/{stored[1]}/report"]').click()
    page.wait_for_selector("h1")
    assert page.locator("h1").inner_text() == "Web <b>suite</b>"
    naive = page.locator('.rp[data-role="naive"] tr.mrow')
    expert = page.locator('.rp[data-role="expert"] tr.mrow')
    assert naive.count() == 2 and expert.count() == 2  # 2 candidates x 1 scenario
    assert naive.first.is_visible() and not expert.first.is_visible()
    page.locator('label[data-role="expert"]').click()
    assert expert.first.is_visible() and not naive.first.is_visible()
    page.locator('label[data-role="naive"]').click()
    assert naive.first.is_visible() and not expert.first.is_visible()
    # the temperature charts are there, each response expands
    assert page.locator("#temperatures svg.chart").count() >= 1
    details = page.locator("details").first
    details.locator("summary").click()
    assert details.get_attribute("open") is not None
    assert opened.violations() == [] and opened.errors == [] and opened.foreign == []


def test_script_in_model_text_shows_as_text_and_never_runs(
    serve: Callable[..., Site], open_page: Callable[[str], Page], stored: tuple[str, str]
) -> None:
    site = serve(scores=(0.9,), answers=(PAYLOAD,))
    opened = open_page(site.base)
    page = opened.page
    # a stored run whose answers echo the payload
    opened.goto(f"/runs/{stored[1]}")
    page.locator("details summary").first.click()
    assert "<script>window.__pwned=1</script>" in page.locator("body").inner_text()
    assert page.evaluate("typeof window.__pwned") == "undefined"
    # the Lab, whose answer is the payload: streamed in by the page's script
    opened.goto("/lab")
    _fill_lab(page, iter_max=1)
    page.wait_for_selector("#lab-result:not([hidden])", timeout=120_000)
    assert page.locator("pre.final").inner_text() == PAYLOAD
    assert page.locator("article.iteration pre.answer").inner_text() == PAYLOAD
    assert page.locator("#iterations script, #iterations img, #lab-result img").count() == 0
    assert page.evaluate("typeof window.__pwned") == "undefined"
    assert opened.foreign == []
    run_link = page.locator("#lab-result a").get_attribute("href")
    opened.goto(str(run_link))
    assert page.locator("pre.final").inner_text() == PAYLOAD
    assert page.evaluate("typeof window.__pwned") == "undefined"


def test_the_token_is_required_when_set(
    serve: Callable[..., Site], open_page: Callable[[str], Page]
) -> None:
    site = serve(token="tok-9f2c", scores=(0.9,))
    opened = open_page(site.base)
    page = opened.page
    for path in ("/runs", "/lab", "/api/runs", "/static/lab.js"):
        assert opened.goto(path).status == 401, path
    assert opened.goto("/login?token=wrong").status == 401
    response = opened.goto("/login?token=tok-9f2c")
    assert response.status == 200 and page.url == site.base + "/runs"
    assert "tok-9f2c" not in page.url
    # the cookie carries the token: the Lab's streamed request is let through
    opened.goto("/lab")
    _fill_lab(page, iter_max=1)
    page.wait_for_selector("#lab-result:not([hidden])", timeout=120_000)
    assert page.locator("pre.final").inner_text() == "Answer 1"
    # a fresh browser context has no cookie
    other = open_page(site.base)
    assert other.goto("/lab").status == 401
    assert site.lab_server.calls == 2  # one answer, one evaluation: only the logged-in run


def test_marking_a_reference_validated_with_a_note_adds_an_audit_row(
    browser: Any,
    open_page: Callable[[str], Page],
    tmp_path: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("QUALSPEC_USER", "erin")
    db = f"sqlite:///{tmp_path / 'refs.db'}"
    key = "ck-browser-0123456789"
    seed_reference(db, key, '{"name": "Acme", "industry": "SaaS"}')
    with uvicorn_server(create_app(db=db)) as base:
        view = open_page(base)
        view.goto("/references")
        view.page.click(f'a[href="/references/{key}"]')
        view.page.wait_for_selector("#ref-status")
        assert view.page.inner_text("#ref-status") == "unvalidated"
        assert view.page.locator("#audit").count() == 0
        form = view.page.locator("#status-form")
        form.locator('input[value="validated"]').check()
        form.locator('textarea[name="notes"]').fill("checked <b>by hand</b>")
        with view.page.expect_navigation():
            form.locator('button[type="submit"]').click()
        view.page.wait_for_selector("#audit tbody tr")
        rows = view.page.locator("#audit tbody tr")
        assert rows.count() == 1
        cells = rows.first.locator("td").all_inner_texts()
        assert cells[1:4] == ["erin", "validate", "unvalidated"]
        assert cells[5] == "checked <b>by hand</b>"  # shown as text
        assert view.page.inner_text("#ref-status") == "validated"
        assert view.violations() == [] and view.errors == [] and view.foreign == []


def test_the_lab_says_when_no_iteration_was_scored(
    serve: Callable[..., Site], open_page: Callable[[str], Page]
) -> None:
    """The streamed result, rendered by the page's script, says it as the CLI does."""
    site = serve(scores=("I cannot rate this.",))
    opened = open_page(site.base)
    page = opened.page
    opened.goto("/lab")
    _fill_lab(page, iter_max=2)
    page.wait_for_selector("#lab-result:not([hidden])", timeout=120_000)
    shown = page.locator("#lab-result").inner_text()
    assert "no iteration was scored (2 tried): did not meet the threshold 0.8" in shown
    assert "Last answer written" in shown and "Best answer" not in shown
    assert "score unscored" not in shown
    assert page.locator("article.iteration.best").count() == 0
    assert opened.violations() == [] and opened.errors == [] and opened.foreign == []
