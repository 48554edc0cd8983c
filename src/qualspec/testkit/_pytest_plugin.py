"""The qualspec pytest plugin (entry point ``pytest11``): judged assertions in any test suite.

* ``qualspec_judge(response, criteria, threshold=7)``: a fixture; the criteria judge's
  verdict (``.passed``, ``.score``, ``.reasoning``), whose ``repr`` in a failed ``assert``
  shows criteria, score and reasoning.
* ``qualspec_model(prompt)``: a fixture; the answer of the test's model (the marker's).
* ``@pytest.mark.qualspec(model=..., judge=..., threshold=...)``: per test settings.
* ``--qualspec-record=none|new|all``: every call goes through one :class:`qualspec.Session`
  whose cache is the recording (``--qualspec-db``, default ``.qualspec/recordings.db``
  under the rootdir). ``new`` (default) answers recorded calls from it and records new
  ones; ``all`` records every call again; ``none`` replays only: no model is called, and
  a call not recorded fails its test.

pytest loads this module in every session of every project that has qualspec installed:
it imports only pytest and the standard library until a test asks for a fixture, and it
changes nothing for tests that do not use it.
"""

from __future__ import annotations

from collections.abc import Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import pytest

if TYPE_CHECKING:
    import asyncio
    import threading

    from qualspec.engine import Session
    from qualspec.testkit._judge import JudgeResult

__all__ = ["QualspecJudge", "QualspecModel"]

RECORD_MODES = ("none", "new", "all")
_T = TypeVar("_T")


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("qualspec", "qualspec: LLM-judged assertions")
    group.addoption(
        "--qualspec-record",
        choices=RECORD_MODES,
        default="new",
        help="none: replay recorded model calls only (offline; a missing one fails the test); "
        "new (default): replay, and record new calls; all: record every call again",
    )
    group.addoption(
        "--qualspec-db",
        default=None,
        metavar="URL",
        help="the recordings database: a URL or a SQLite file (default: "
        ".qualspec/recordings.db under the rootdir)",
    )
    group.addoption(
        "--qualspec-judge",
        default=None,
        metavar="MODEL",
        help="the judge model (provider/model) of tests whose marker names none",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "qualspec(model=None, judge=None, threshold=None): the model qualspec_model calls, "
        "the judge model and the pass threshold of qualspec_judge in this test",
    )


def pytest_unconfigure(config: pytest.Config) -> None:
    runner = config.stash.get(_RUNNER, None)
    if runner is not None:
        runner.close()


class _Runner:
    """One session for the whole pytest run, on an event loop in a thread of its own."""

    def __init__(self, db: str, record: str) -> None:
        self.db = db
        self.record = record
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._session: Session | None = None

    def session(self) -> Session:
        if self._session is None:
            import asyncio
            import threading

            from qualspec.engine import ExecuteOptions, Session

            options = ExecuteOptions(
                replay_only=self.record == "none", refresh=self.record == "all"
            )
            self._loop = asyncio.new_event_loop()
            self._thread = threading.Thread(
                target=self._loop.run_forever, name="qualspec-pytest", daemon=True
            )
            self._thread.start()
            session = Session(db=self.db, options=options)
            self.run(session.open())
            self._session = session
        return self._session

    def run(self, coro: Coroutine[Any, Any, _T]) -> _T:
        import asyncio

        if self._loop is None:
            raise RuntimeError("the qualspec session is not started")
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result()

    def close(self) -> None:
        if self._loop is None:
            return
        try:
            if self._session is not None:
                self.run(self._session.aclose())
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            if self._thread is not None:
                self._thread.join(timeout=60)
            self._loop.close()
            self._loop = None


_RUNNER = pytest.StashKey[_Runner]()


def _runner(config: pytest.Config) -> _Runner:
    runner = config.stash.get(_RUNNER, None)
    if runner is None:
        db = config.getoption("qualspec_db")
        if db is None:
            home = Path(config.rootpath) / ".qualspec"
            home.mkdir(parents=True, exist_ok=True)
            db = f"sqlite:///{home / 'recordings.db'}"
        elif "://" not in db:  # a file path
            db = f"sqlite:///{Path(db).resolve()}"
        runner = _Runner(db, config.getoption("qualspec_record"))
        config.stash[_RUNNER] = runner
    return runner


def _settings(request: pytest.FixtureRequest) -> dict[str, Any]:
    marker = request.node.get_closest_marker("qualspec")
    found = dict(marker.kwargs) if marker is not None else {}
    unknown = sorted(set(found) - {"model", "judge", "threshold"})
    if unknown:
        pytest.fail(
            f"@pytest.mark.qualspec: unknown argument(s) {', '.join(unknown)}: it takes "
            "model, judge and threshold",
            pytrace=False,
        )
    return found


def _not_answered(what: str, error: str, record: str) -> NoReturn:
    hint = (
        "record it once with --qualspec-record=new (it calls the model)"
        if record == "none"
        else "check the model's provider, key and base URL"
    )
    pytest.fail(f"qualspec: {what} could not be answered: {error}; {hint}", pytrace=False)


class QualspecJudge:
    """The ``qualspec_judge`` fixture: call it to judge a response.

    Example::

        def test_greeting(qualspec_judge):
            result = qualspec_judge("Hello! How can I help?", "Greets the user politely")
            assert result.passed
    """

    def __init__(self, config: pytest.Config, settings: dict[str, Any]) -> None:
        self._config = config
        self.model: str | None = settings.get("judge") or config.getoption("qualspec_judge")
        self.threshold: float | None = settings.get("threshold")

    def __call__(
        self,
        response: str,
        criteria: str,
        threshold: float | None = None,
        *,
        prompt: str | None = None,
        model: str | None = None,
    ) -> JudgeResult:
        """The judge's verdict on ``response`` (to ``prompt``) against ``criteria``."""
        from qualspec.testkit._judge import ajudge_response

        runner = _runner(self._config)
        session = runner.session()
        result = runner.run(
            ajudge_response(
                session,
                response,
                criteria,
                model=model or self.model,
                threshold=threshold if threshold is not None else self.threshold,
                prompt=prompt,
            )
        )
        if result.error is not None:
            _not_answered(f"the judge call ({result.model})", result.error, runner.record)
        return result


class QualspecModel:
    """The ``qualspec_model`` fixture: call it for the answer of the marker's model.

    Example::

        @pytest.mark.qualspec(model="openai/gpt-4o-mini")
        def test_answer(qualspec_model, qualspec_judge):
            answer = qualspec_model("What is the capital of France?")
            assert qualspec_judge(answer, "Names Paris").passed
    """

    def __init__(self, config: pytest.Config, settings: dict[str, Any]) -> None:
        self._config = config
        self.model: str | None = settings.get("model")

    def __call__(
        self,
        prompt: str,
        *,
        model: str | None = None,
        system: str | None = None,
        temperature: float | None = 0.0,
        max_tokens: int | None = None,
    ) -> str:
        """The model's answer to ``prompt`` (recorded, or replayed)."""
        chosen = model or self.model
        if chosen is None:
            pytest.fail(
                "qualspec_model: no model: give @pytest.mark.qualspec(model='provider/model') "
                "or model=",
                pytrace=False,
            )
        runner = _runner(self._config)
        session = runner.session()
        reply = runner.run(
            session.complete(
                chosen,
                prompt,
                kind="candidate",
                system=system,
                temperature=temperature,
                max_tokens=max_tokens,
            )
        )
        if reply.error is not None or reply.text is None:
            _not_answered(f"the call to {chosen}", reply.error or "no text", runner.record)
        return reply.text or ""


@pytest.fixture
def qualspec_judge(request: pytest.FixtureRequest) -> QualspecJudge:
    """Judge a response against criteria: ``qualspec_judge(response, criteria, threshold=7)``."""
    return QualspecJudge(request.config, _settings(request))


@pytest.fixture
def qualspec_model(request: pytest.FixtureRequest) -> QualspecModel:
    """Ask the test's model (``@pytest.mark.qualspec(model=...)``): ``qualspec_model(prompt)``."""
    return QualspecModel(request.config, _settings(request))
