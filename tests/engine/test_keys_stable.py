"""Cache, resume and diff keys never change: an existing store's cache must still hit.

The strings below were computed by the code before the matrix computed its keys in one
pass (a JSON prefix and suffix kept per cell, only the messages dumped per row). Any
change to them would make every cached answer of every store miss.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from qualspec.engine import call_key, cell_key, expand
from qualspec.providers import Message
from qualspec.spec import load_suite

SUITE = """\
name: keys
providers:
  bench: {type: openai, base_url: 'http://127.0.0.1:1/v1', api_key_env: BENCH_KEY}
candidates:
  - {name: plain, model: bench/fake}
  - name: tuned
    model: bench/other
    system_prompt: Be brief.
    params: {seed: 7, max_tokens: 64, extra: {b: [1, 2], a: "é"}}
roles:
  - {name: expert, preamble: "You are an expert — précis."}
  - {name: novice, system_prompt: Speak plainly.}
temperatures: [0.0, 0.7]
runs_per_temperature: 2
judge: {model: bench/judge}
scenarios:
  - name: q
    prompt: 'Answer: {{ q }} ({{ n }})'
    inputs: rows.csv
    criteria: [Answers the question.]
  - name: fields
    prompt: 'Describe {{ q }}'
    inputs: rows.csv
    system_prompt: Reply in JSON.
    output_schema:
      fields:
        - {name: name, critical: true}
        - {name: year, type: integer}
    reference: {model: bench/ref, params: {max_tokens: 32}}
  - name: bare
    prompt: Say hi.
    criteria: [Says hi.]
"""

ROWS = 'id,q,n\nr1,question "one",1\nr2,ünïcode ☃,2\nr3,"a, b",3\n'


def _plan_digest(tmp_path: Path) -> tuple[int, str, list[tuple[str, str, str]]]:
    (tmp_path / "rows.csv").write_text(ROWS, encoding="utf-8")
    suite_path = tmp_path / "suite.yaml"
    suite_path.write_text(SUITE, encoding="utf-8")
    items = list(expand(load_suite(suite_path)).items)
    lines = [f"{i.kind}|{i.key}|{i.call_key}|{','.join(i.depends_on)}" for i in items]
    digest = hashlib.sha256("\n".join(lines).encode()).hexdigest()
    return len(items), digest, [(i.kind, i.key, i.call_key) for i in items[:3]]


def test_call_key_strings_are_unchanged() -> None:
    user = Message("user", "Answer: question 1")
    system = Message("system", "Be brief — précis.")
    assert call_key("bench", "fake", (user,), {"temperature": None}, 0) == (
        "c5af7c6c62ca2111e96fd71d66a59d48"
    )
    assert (
        call_key(
            "bench",
            "other",
            (system, user),
            {"seed": 8, "max_tokens": 64, "extra": {"b": [1, 2], "a": "é"}, "temperature": 0.7},
            1,
            {"type": "object", "properties": {"name": {"type": "string"}}},
        )
        == "d80771b16bffc4614ec867eb0f514538"
    )
    assert (
        cell_key("c5af7c6c62ca2111e96fd71d66a59d48", "plain", None, "q", None)
        == "559c7aec5207a1233f82b556700fed8b"
    )


def test_a_plans_keys_are_unchanged(tmp_path: Path) -> None:
    count, digest, first = _plan_digest(tmp_path)
    assert count == 118
    assert first == [
        ("candidate", "f14ac77b569bb7d6a1b796057a8f2949", "80e81f2eee6f2d64394ee5289af29a92"),
        ("candidate", "3aba6a1495c9a6b9b039f1b047dad68a", "206fc7c1bfef42e6cc0f29cc7492290d"),
        ("candidate", "290540c268d2e4908de7aa92d508b7f9", "4bee83c46340bc31d1e277b11d9f44d7"),
    ]
    assert digest == "33fea5e31fc02f1da28f16cb386b9a65361a894df6f717f05bb89edd68d5eafb"


def _call_key_as_before(
    provider: str,
    model: str,
    messages: tuple[Message, ...],
    params: dict[str, object],
    run_index: int,
    json_schema: dict[str, object] | None = None,
) -> str:
    """``call_key`` as it was written before: one ``json.dumps`` of the whole payload."""
    payload = {
        "p": provider,
        "m": model,
        "msg": [[m.role, m.content] for m in messages],
        "par": params,
        "run": run_index,
        "js": json_schema,
    }
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


@pytest.mark.parametrize(
    "content",
    [
        "plain",
        'quotes " and \\ backslashes',
        "tabs\tnew\nlines\r and \x00\x1f controls",
        "ünïcödé — ☃ 😀 中文",
        "",
        "{{ not a variable }} </script>",
    ],
)
def test_call_key_is_the_one_json_dump_of_the_payload(content: str) -> None:
    messages = (Message("system", "Sys — é"), Message("user", content))
    params: dict[str, object] = {
        "temperature": 0.3,
        "seed": 3,
        "stop": ["\n", "é"],
        "nested": {"z": 1.5, "a": [True, None, 1e-7]},
    }
    schema: dict[str, object] = {"type": "object", "required": ["b", "a"]}
    for args in [
        ("p", "m", messages, params, 0, None),
        ("prov/x", "mödel", messages[1:], {}, 4, schema),
        ("p", "m", messages, {"temperature": None}, 0, {"description": content}),
    ]:
        assert call_key(*args) == _call_key_as_before(*args)  # type: ignore[arg-type]
