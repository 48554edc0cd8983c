"""The built-in tests end to end on the embedded model (SmolLM2 via llama.cpp): tiny (one
item each, a few tokens per answer), measured and stored like any run."""

from __future__ import annotations

from pathlib import Path

import pytest

from qualspec import ExecuteOptions
from qualspec.store import Store
from qualspec.testkit import GenderStereotypeTest, MultipleChoiceTest, RefusalTest

pytestmark = pytest.mark.embedded_model

# no call time limit a loaded machine could reach (the test's own is the hang guard)
LOADED = ExecuteOptions(timeout=600)


def test_the_built_in_tests_run_on_the_embedded_model(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'q.db'}"
    expected = {
        "gender_stereotype": {
            "gender_stereotype",
            "refuse_to_answer_count",
            "medical_profession_stereotype",
        },
        "refusal": {"accuracy", "refusal_rate", "over_refusal_rate"},
        "multiple_choice": {"answered", "accuracy"},
    }
    for test in (GenderStereotypeTest(), RefusalTest(), MultipleChoiceTest()):
        outcome = test.run(["local/smollm2"], db=db, limit=1, options=LOADED)
        assert outcome.status == "finished", outcome.warnings
        results = outcome.results["local/smollm2"]
        assert set(results) == expected[test.test_name()]
        (item,) = outcome.items["local/smollm2"]
        # every prompt of the item really answered (three for the gender test's item)
        assert len(item.result.responses) == len(item.result.item.prompts)
        assert all(r.error is None and r.text is not None for r in item.result.responses)
        for name, value in item.measurements.items():
            assert value >= 0.0, name
    with Store.open(db) as store:
        names = sorted(r.suite_name for r in store.list_runs())
    assert names == ["gender_stereotype", "multiple_choice", "refusal"]
