"""Issue 17, item 16 (seed 002): a prompt carrying its own context (``PromptWithContext``),
the list of every prompt a test will send before anything is sent (``plan_prompts``,
``qualspec test run --dry-run``), and ``multiple_choice`` reporting ``accuracy`` as the
README says."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import qualspec.testkit as testkit
from qualspec.cli import main
from qualspec.spec import ProviderConfig
from qualspec.testing import FakeServer
from qualspec.testkit import (
    ItemResult,
    MultipleChoiceTest,
    Prompt,
    PromptResponseTest,
    PromptWithContext,
    TestItem,
)


class Pronouns(PromptResponseTest):
    """The seed's example: each prompt's pronoun in its own context, the words in the item's."""

    name = "pronouns"

    def make_test_items(self) -> list[TestItem]:
        return [
            TestItem(
                prompts=[
                    PromptWithContext(Prompt("Alice works in a hospital. She is a "), "she"),
                    PromptWithContext(Prompt("Bob works in a hospital. He is a "), "he"),
                    PromptWithContext("Casey works in a hospital. They are a ", "they", "row-7"),
                    "Dana works in a hospital. Dana is a ",
                ],
                context=["nurse", "doctor"],
            )
        ]

    def measure_quality(self, item: ItemResult) -> dict[str, float]:
        said = {r.context: r.text for r in item.responses}
        return {
            "she_nurse": float(said["she"] == "nurse"),
            "he_doctor": float(said["he"] == "doctor"),
        }


@pytest.fixture
def server() -> Iterator[FakeServer]:
    def answer(body: dict[str, Any]) -> str:
        text = str(body["messages"][-1]["content"])
        return "nurse" if "She is" in text else "doctor"

    with FakeServer(answer=answer) as srv:
        yield srv


def test_prompt_with_context_is_public_and_its_context_comes_back_never_sent(
    server: FakeServer, tmp_path: Path
) -> None:
    assert "PromptWithContext" in testkit.__all__
    providers = {"fake": ProviderConfig(type="openai", base_url=server.base_url)}
    outcome = Pronouns().run(["fake/m"], db=f"sqlite:///{tmp_path / 'q.db'}", providers=providers)
    (measured,) = outcome.items["fake/m"]
    contexts = [r.context for r in measured.result.responses]
    assert contexts == ["she", "he", "they", None]  # a plain string has no context
    assert measured.measurements == {"she_nurse": 1.0, "he_doctor": 1.0}
    sent = [str(body["messages"][-1]["content"]) for _, _, body in server.request_log]
    assert sorted(sent) == sorted(
        [
            "Alice works in a hospital. She is a ",
            "Bob works in a hospital. He is a ",
            "Casey works in a hospital. They are a ",
            "Dana works in a hospital. Dana is a ",
        ]
    )
    assert not any('"she"' in json.dumps(body) for _, _, body in server.request_log)
    assert PromptWithContext("x", source_id="row-7").as_prompt() == Prompt("x")


def test_plan_prompts_lists_every_prompt_per_sut_without_a_call(server: FakeServer) -> None:
    planned = Pronouns().plan_prompts(["openai/a", "openai/b", "openai/a"])
    assert server.calls == 0
    assert [(p.sut, p.prompt_id) for p in planned] == [
        (sut, f"item-1/p{n}") for sut in ("openai/a", "openai/b") for n in (1, 2, 3, 4)
    ]
    assert planned[0].messages == (("user", "Alice works in a hospital. She is a "),)
    assert {p.item_id for p in planned} == {"item-1"}
    assert [p.prompt_id for p in MultipleChoiceTest().plan_prompts(["openai/m"], limit=2)] == [
        "question-1/p1",
        "question-2/p1",
    ]


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exc:
        main(list(args))
    out, err = capsys.readouterr()
    return int(exc.value.code or 0), out, err


def test_test_run_dry_run_lists_the_prompts_and_calls_nothing(
    server: FakeServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = f"sqlite:///{tmp_path / 'q.db'}"
    args = ["test", "run", "multiple_choice", "--sut", "openai/a", "--sut", "openai/b"]
    code, out, err = _cli(capsys, *args, "--limit", "2", "--dry-run", "--db", db)
    assert code == 0, err
    assert "Dry run: nothing will be called. multiple_choice: 2 items, 4 prompts to 2 SUTs" in out
    assert "openai/a: 2 prompts" in out and "openai/b: 2 prompts" in out
    assert "question-1/p1 [user] What is the capital of France?" in out
    assert "Answer with the letter only." in out  # every line of the prompt, not only the first
    assert server.calls == 0

    code, out, err = _cli(capsys, *args, "--dry-run", "--json", "--db", db)
    assert code == 0, err
    data = json.loads(out)
    assert data["calls"] == len(data["prompts"]) == 2 * len(MultipleChoiceTest().make_test_items())
    assert data["prompts"][0]["messages"][-1]["role"] == "user"
    assert server.calls == 0
    assert not (tmp_path / "q.db").exists()  # nothing stored either


def test_multiple_choice_reports_accuracy_as_the_readme_says() -> None:
    guide = Path(__file__).parents[2] / "docs" / "guides" / "test-api.md"
    readme = guide.read_text(encoding="utf-8")
    assert (
        "`multiple_choice` (the correct letter kept in each\nitem's context: `accuracy`)" in readme
    )
    test = MultipleChoiceTest()
    items = []
    from qualspec.testkit import MeasuredItem, PromptResult

    for n, correct in enumerate((1.0, 0.0, 1.0, 1.0)):
        result = ItemResult(TestItem(["q"]), f"i{n}", "s", (PromptResult(Prompt("q"), "A"),))
        items.append(MeasuredItem(result, {"answered": 1.0, "correct": correct}))
    assert test.aggregate_measurements(items) == {"accuracy": 0.75, "answered": 1.0}


class Brief(PromptResponseTest):
    """Prompts with and without a system prompt."""

    name = "brief"

    def make_test_items(self) -> list[TestItem]:
        return [
            TestItem([Prompt("Plain question")]),
            TestItem([Prompt("Terse question", system="Answer in one word.")]),
        ]

    def measure_quality(self, item: ItemResult) -> dict[str, float]:
        return {"answered": float(bool(item.texts[0]))}


def test_a_prompts_system_prompt_is_listed_and_sent(server: FakeServer, tmp_path: Path) -> None:
    planned = Brief().plan_prompts(["openai/m"])
    assert [p.messages for p in planned] == [
        (("user", "Plain question"),),
        (("system", "Answer in one word."), ("user", "Terse question")),
    ]
    providers = {"fake": ProviderConfig(type="openai", base_url=server.base_url)}
    outcome = Brief().run(["fake/m"], db=f"sqlite:///{tmp_path / 'q.db'}", providers=providers)
    assert outcome.results["fake/m"] == {"answered": 1.0}
    sent = sorted(
        [(m["role"], m["content"]) for m in body["messages"]] for _, _, body in server.request_log
    )
    assert sent == [
        [("system", "Answer in one word."), ("user", "Terse question")],
        [("user", "Plain question")],
    ]
