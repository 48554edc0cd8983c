"""Issue 17, item 15 (seed 001): the cost and tokens of a reference-graded run per model,
per input and per prompt version (not only per kind of call), in the analysis, the
results JSON and the console block."""

from __future__ import annotations

import io

import pytest
from helpers_fields import FieldRunBuilder
from rich.console import Console

from qualspec.analysis import cost_breakdown, field_analysis, field_analysis_to_dict
from qualspec.report import render_run, run_to_dict
from qualspec.store import RunRecord

# prompt version ids as a store would give them, and what they name
REFS = {11: ("scenario_prompt:company_profile", 2), 12: ("preamble:analyst", 1)}


def _run() -> RunRecord:
    builder = FieldRunBuilder("costs")
    for candidate in ("gpt", "llama"):
        for input_id in ("acme", "bolt"):
            builder.add(candidate, input_id, {"name": 100, "industry": 70})
    run = builder.run()
    for r in run.responses:
        big = r.input_id == "bolt"  # bolt's prompt is longer: more tokens, more cost
        r.input_tokens, r.output_tokens = (300, 50) if big else (100, 20)
        if r.kind == "reference":
            r.cost_usd = 0.03 if big else 0.01
        else:
            r.cost_usd = (0.002 if r.candidate == "gpt" else 0.0) * (3 if big else 1)
            r.prompt_versions = {"scenario_prompt:company_profile": 11, "preamble:analyst": 12}
    for j in run.judgments:
        j.input_tokens, j.output_tokens, j.cost_usd = 200, 30, 0.001
    return run


def test_cost_per_model_input_and_prompt_version() -> None:
    costs = cost_breakdown(_run(), REFS)
    gpt = costs.by_model["gpt"]
    # its two answers and their two gradings; the shared references are not a model's
    assert (gpt.agent.calls, gpt.reference.calls, gpt.grading.calls) == (2, 0, 2)
    assert gpt.input_tokens == 100 + 300 + 2 * 200
    assert gpt.cost_usd == pytest.approx(0.002 + 0.006 + 0.002)
    assert costs.by_model["llama"].cost_usd == pytest.approx(0.002)  # a free local model
    bolt = costs.by_input[("company_profile", "bolt")]
    assert (bolt.agent.calls, bolt.reference.calls, bolt.grading.calls) == (2, 1, 2)
    assert bolt.cost_usd == pytest.approx(0.006 + 0.0 + 0.03 + 0.002)
    assert bolt.output_tokens == 50 * 3 + 30 * 2
    version = costs.by_prompt_version["scenario_prompt:company_profile v2"]
    assert version.agent.calls == 4 and version.grading.calls == 4
    assert version.cost_usd == pytest.approx(0.008 + 0.004)
    assert set(costs.by_prompt_version) == {
        "scenario_prompt:company_profile v2",
        "preamble:analyst v1",
    }
    # read without its store: named by the part, never by a store id
    assert set(cost_breakdown(_run()).by_prompt_version) == {
        "scenario_prompt:company_profile",
        "preamble:analyst",
    }


def test_the_results_json_and_the_console_show_the_breakdown() -> None:
    run = _run()
    analysis = field_analysis(run)
    assert analysis is not None
    data = field_analysis_to_dict(analysis, run, REFS)["cost_breakdown"]
    assert data["by_model"]["gpt"]["cost_usd"] == pytest.approx(0.01)
    assert data["by_model"]["gpt"]["grading"]["calls"] == 2
    (bolt,) = [row for row in data["by_input"] if row["input_id"] == "bolt"]
    assert bolt["reference"]["input_tokens"] == 300
    assert "scenario_prompt:company_profile v2" in data["by_prompt_version"]
    whole = run_to_dict(run, REFS)["field_grades"]["cost_breakdown"]
    assert whole == data

    out = io.StringIO()
    render_run(run, Console(file=out, width=200, highlight=False), prompts=REFS)
    text = out.getvalue()
    assert "Cost per model" in text and "Cost per input" in text
    assert "Cost per prompt version" in text
    model_row = next(line for line in text.splitlines() if "│ gpt " in line and "$" in line)
    assert "$0.0100" in model_row and "800" in model_row  # tokens in: 100 + 300 + 400
    lines = text.splitlines()
    inputs_at = next(i for i, line in enumerate(lines) if "Cost per input" in line)
    first_input = next(line for line in lines[inputs_at:] if "company_profile" in line)
    assert "bolt" in first_input  # the most expensive input first
    assert any("scenario_prompt:company_profile v2" in line for line in lines)
