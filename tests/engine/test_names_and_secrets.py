"""Issue 17, item 19: the secret filter keeps the names people gave.

A scenario named "basic greeting" was stored as ``***`` in the run's dimensions (read as an
HTTP Basic credential), and the reports then ordered the scenarios wrongly. Names that
merely contain a word such as "bearer", "token" or "key" are names; real credentials in
the same run are still hidden.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from pathlib import Path

import pytest

import qualspec
from qualspec import Candidate, Evaluation, ExecuteOptions, Scenario
from qualspec.analysis import suite_order
from qualspec.spec import ProviderConfig
from qualspec.store import Store, redact, redact_text
from qualspec.testing import FakeServer

# in an order that no sort of the names gives back
NAMES = ["token ring", "basic greeting", "bearer of news", "api_key_rotation", "secret santa"]
CANDIDATES = ["monkey", "token-bot", "keyboard"]
KEY = "sk-names-0123456789abcdefghij"


@pytest.fixture
def server() -> Iterator[FakeServer]:
    with FakeServer() as srv:
        yield srv


def test_scenario_and_candidate_names_survive_the_run_metadata(
    server: FakeServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_KEY", KEY)
    evaluation = Evaluation(
        name="names",
        candidates=[Candidate(name=n, model="fake/model-a") for n in CANDIDATES],
        scenarios=[
            Scenario(name=n, prompt=f"say {i}", criteria=["is an answer"], inputs=[{"i": 1}])
            for i, n in enumerate(NAMES)
        ],
        judge="fake/judge",
        providers={
            "fake": ProviderConfig(type="openai", base_url=server.base_url, api_key_env="FAKE_KEY")
        },
    )
    db = f"sqlite:///{tmp_path / 'q.db'}"
    outcome = qualspec.run(
        evaluation, db=db, options=ExecuteOptions(calibrate=False), temperatures=[0.0]
    )
    assert outcome.status == "finished"
    meta = outcome.record.summary.metadata
    dims = meta["dimensions"]
    assert dims["scenarios"] == NAMES
    assert dims["candidates"] == CANDIDATES
    assert sorted(dims["inputs"]) == sorted(NAMES)
    assert all(isinstance(ids, list) and ids for ids in dims["inputs"].values())
    assert set(meta["candidates"]) == set(CANDIDATES)
    assert all(c["model"] == "fake/model-a" for c in meta["candidates"].values())
    # the reports follow the suite's order
    with Store.open(db) as store:
        record = store.load_run(outcome.run_id)
    order = suite_order(record)
    cells = sorted(
        {(r.scenario, r.input_id, r.role, r.candidate, r.temperature) for r in record.responses},
        key=order,
    )
    assert [c[0] for c in cells if c[3] == "monkey"] == NAMES
    # and the key is nowhere
    assert KEY not in repr(record)


@pytest.mark.parametrize(
    "name",
    [
        "basic greeting",
        "Basic greeting",
        "bearer of news",
        "Bearer bonds explained",
        "token ring",
        "basic understanding of tokens",
        "Bearer mountains",
    ],
)
def test_names_that_sound_like_credentials_are_kept(name: str) -> None:
    meta = {"dimensions": {"scenarios": [name], "inputs": {name: ["r1"]}}, "note": name}
    assert redact(meta) == meta
    assert redact_text(f"scenario {name}: fine") == f"scenario {name}: fine"


@pytest.mark.parametrize(
    "setting", ["token ring", "monkey", "keyboard", "tokenizer", "secretary", "max_tokens"]
)
def test_settings_whose_names_only_contain_a_secret_word_are_kept(setting: str) -> None:
    assert redact({setting: "value"}) == {setting: "value"}


def test_real_credentials_are_still_hidden() -> None:
    basic = base64.b64encode(b"alice:s3cr3t-pass-word").decode()
    meta = {
        "note": "Bearer sk-in-a-string",
        "basic": f"Basic {basic}",
        "header": "Authorization: Basic anything",
        "said": "it sent Authorization: Bearer abc.def.ghi12345 twice",
        "jwt": "bearer eyJhbGciOi.eyJzdWIiOiIx.SflKxwRJSMeKKF2QT4",
        "headers": {"X-Api-Key": "k-1", "Authorization": "Bearer abc", "clientSecret": "x"},
        "params": {"api_key": "sk-1", "access_token": "t", "max_tokens": 64},
    }
    assert redact(meta) == {
        "note": "***",
        "basic": "***",
        "header": "***",
        "said": "it sent Authorization: Bearer *** twice",
        "jwt": "***",
        "headers": {"X-Api-Key": "***", "Authorization": "***", "clientSecret": "***"},
        "params": {"api_key": "***", "access_token": "***", "max_tokens": 64},
    }
    assert redact_text(f"curl -H 'Authorization: Basic {basic}'") == (
        "curl -H 'Authorization: Basic ***'"
    )
    assert redact_text(f"login with Basic {basic} ok") == "login with Basic *** ok"
    assert redact_text("Bearer abcdefgh12345678 sent") == "Bearer *** sent"
