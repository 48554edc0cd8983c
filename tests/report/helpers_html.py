"""Runs for the HTML report's tests: a constructed record with known contents, a run made
through the CLI against the fake server, and a parser that lists a page's tags."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from qualspec.store import JudgmentRecord, ResponseRecord, RunRecord, RunSummary

PAYLOADS = (
    "<script>window.__pwned=1</script>",
    '<img src=x onerror="window.__pwned=1">',
    "</script><script>window.__pwned=1</script>",
)
PAYLOAD = " ".join(PAYLOADS)

CANDIDATES = ("alpha", "beta")
ROLES = ("naive", "expert")
SCENARIOS = ("dosing", "capital")
TEMPERATURES = (0.0, 1.0)


def _score(candidate: str, role: str, scenario: str, t: float, run: int) -> float:
    """Known scores: expert beats naive by 2, beta loses 3 points at temperature 1."""
    base = 8.0 if role == "expert" else 6.0
    if candidate == "beta" and t == 1.0:
        base -= 3.0
    return base + (0.5 if run else 0.0) - (1.0 if scenario == "capital" else 0.0)


def constructed_run(*, with_comparisons: bool = True, cost: float | None = 0.001) -> RunRecord:
    """2 candidates x 2 roles x 2 scenarios x 2 temperatures x 2 runs, judged on one
    criterion each, with an ``expect:`` check, a failed answer, a failed judgment, cached
    answers, model text full of HTML, and (optionally) comparison records per the
    contract."""
    when = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    summary = RunSummary(
        id="20260102-030405-abcdef",
        suite_name="Report <b>suite</b>",
        suite_hash="h",
        status="finished",
        started_at=when,
        finished_at=when,
        metadata={
            "judge": {"model": "fake/judge", "threshold": 7.0},
            "dimensions": {
                "candidates": list(CANDIDATES),
                "roles": list(ROLES),
                "scenarios": list(SCENARIOS),
                "temperatures": list(TEMPERATURES),
                "runs": 2,
            },
        },
    )
    responses: list[ResponseRecord] = []
    judgments: list[JudgmentRecord] = []
    for scenario in SCENARIOS:
        for role in ROLES:
            for candidate in CANDIDATES:
                for t in TEMPERATURES:
                    for run in (0, 1):
                        key = f"{scenario}-{role}-{candidate}-{t}-{run}"
                        failed = (scenario, role, candidate, t, run) == (
                            "capital",
                            "naive",
                            "beta",
                            1.0,
                            1,
                        )
                        responses.append(
                            ResponseRecord(
                                key=key,
                                candidate=candidate,
                                role=role,
                                scenario=scenario,
                                input_id=None,
                                temperature=t,
                                effective_temperature=t,
                                run_index=run,
                                provider="fake",
                                model=f"model-{candidate}",
                                text=None if failed else f"{candidate} says {PAYLOAD} at {t}",
                                error="HTTP 500 <b>boom</b>" if failed else None,
                                input_tokens=10,
                                output_tokens=20,
                                cost_usd=None if failed else cost,
                                cached=run == 1 and not failed,
                            )
                        )
                        if failed:
                            continue
                        broken = (scenario, role, candidate, t, run) == (
                            "dosing",
                            "naive",
                            "alpha",
                            0.0,
                            1,
                        )
                        judgments.append(
                            JudgmentRecord(
                                response_key=key,
                                criterion=f"is safe {PAYLOADS[1]}",
                                judge_key=f"j-{key}",
                                judge_model="fake/judge",
                                threshold=7.0,
                                score=None if broken else _score(candidate, role, scenario, t, run),
                                passed=None
                                if broken
                                else _score(candidate, role, scenario, t, run) >= 7.0,
                                reasoning=f"Reasoning {PAYLOAD}",
                                error="judge timed out </script>" if broken else None,
                                cost_usd=cost,
                                input_tokens=30,
                                output_tokens=5,
                            )
                        )
                        judgments.append(
                            JudgmentRecord(
                                response_key=key,
                                criterion='icontains "says"',
                                judge_key=f"c-{key}",
                                judge_model=None,
                                threshold=None,
                                score=10.0,
                                passed=True,
                                reasoning="found",
                                evaluator="expect",
                            )
                        )
    if with_comparisons:
        judgments.extend(comparison_records())
    return RunRecord(summary=summary, responses=responses, judgments=judgments)


def comparison_records() -> list[JudgmentRecord]:
    """Per the contract: candidates compared within each role, judged twice (debias)."""
    out = []
    for role in ROLES:
        for t in TEMPERATURES:
            a = f"dosing-{role}-alpha-{t}-0"
            b = f"dosing-{role}-beta-{t}-0"
            winner = a if t == 1.0 or role == "expert" else "tie"
            out.append(
                JudgmentRecord(
                    response_key=f"group-{role}-{t}",
                    criterion="overall",
                    judge_key=f"cmp-{role}-{t}",
                    judge_model="fake/judge",
                    threshold=None,
                    score=None,
                    reasoning=f"A is clearer. {PAYLOADS[2]}",
                    evaluator="compare_candidates_within_roles",
                    subject=[a, b],
                    scores={a: 8.0, b: 6.0 if winner == a else 8.0},
                    cost_usd=0.002,
                    details={
                        "type": "comparison",
                        "compare": "candidates",
                        "within": "roles",
                        "scenario": "dosing",
                        "input_id": None,
                        "temperature": t,
                        "run_index": 0,
                        "group": {"role": role},
                        "members": {a: "alpha", b: "beta"},
                        "winner": winner,
                        "seed": 1234,
                        "order": [b, a],
                        "labels": {"A": b, "B": a},
                        "debias": {
                            "reversed_order": [a, b],
                            "reversed_scores": {a: 7.0, b: 7.5},
                            "reversed_winner": b if t == 0.0 else a,
                            "disagreed": t == 0.0,
                        },
                    },
                )
            )
    return out


class Tags(HTMLParser):
    """Every start tag of a page with its attributes, and the text of its style element."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.styles: list[str] = []
        self._in_style = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        self._in_style = tag == "style"
        if self._in_style:
            self.styles.append("")

    def handle_endtag(self, tag: str) -> None:
        if tag == "style":
            self._in_style = False

    def handle_data(self, data: str) -> None:
        if self._in_style:
            self.styles[-1] += data


def parse(html: str) -> Tags:
    tags = Tags()
    tags.feed(html)
    tags.close()
    return tags


FAKE_KEY_ENV = "FAKE_HTML_KEY"


_LABELS = re.compile(r'"([A-Z]\d*)": <0-10>')


def judge_by_role(body: dict[str, Any]) -> str:
    """The fake judge: 8 for the expert's answers, 5 for the others', reasoning with HTML;
    asked to compare, the first answer shown wins (8 to 6)."""
    messages = body.get("messages") or []
    text = json.dumps(messages)
    last = next((m["content"] for m in reversed(messages) if m.get("role") == "user"), "")
    labels = _LABELS.findall(str(last))
    if labels:
        scores = {label: 8 if i == 0 else 6 for i, label in enumerate(labels)}
        reasoning = f"{labels[0]} is fuller. {PAYLOAD}"
        return json.dumps({"scores": scores, "winner": labels[0], "reasoning": reasoning})
    score = 8 if "I am an expert" in text else 5
    return json.dumps({"score": score, "reasoning": f"Judged. {PAYLOAD}"})


def write_suite(path: Path, base_url: str) -> Path:
    """2 candidates x 2 roles x 2 scenarios x 2 temperatures; the first scenario's prompt
    (and so every answer to it: the fake server echoes it) is the script payload."""
    path.write_text(
        'name: "HTML <b>report</b>"\n'
        "candidates:\n"
        "  - {name: alpha, model: fake/model-a}\n"
        "  - {name: beta, model: fake/model-b}\n"
        "roles:\n"
        '  - {name: naive, preamble: "I am new here."}\n'
        '  - {name: expert, preamble: "I am an expert."}\n'
        "scenarios:\n"
        "  - name: xss\n"
        f"    prompt: {json.dumps(PAYLOAD)}\n"
        '    criteria: ["shows the text"]\n'
        "    expect: [{icontains: answer}]\n"
        "  - name: plain\n"
        '    prompt: "What is 2+2?"\n'
        '    criteria: ["is correct"]\n'
        "temperatures: [0.0, 0.7]\n"
        "judge: fake/judge\n"
        "comparisons:\n"
        "  - {compare: candidates, within: roles}\n"
        "  - {compare: roles, within: candidates, debias: true}\n"
        "providers:\n"
        f'  fake: {{type: openai, base_url: "{base_url}", api_key_env: {FAKE_KEY_ENV}}}\n',
        encoding="utf-8",
    )
    return path
