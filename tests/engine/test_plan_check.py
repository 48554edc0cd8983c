"""``check_plan`` locates a comparison's model by its position among the suite's
evaluators (judges, the field grader, then one per ``comparisons:`` entry), not by its
type: with a field grader before it, a comparison that cannot run is an issue at its own
line (it was an IndexError when its type was read as the marker of the entries after the
judges)."""

from __future__ import annotations

from pathlib import Path

import pytest

from qualspec.engine import check_plan, expand
from qualspec.errors import SpecError
from qualspec.spec import load_suite

SUITE = """\
name: graded
candidates: [{name: bot, model: fake/bot}, {name: bot2, model: fake/bot}]
roles: [{name: r1, preamble: hi}]
scenarios:
  - name: profile
    prompt: "Profile of Acme as JSON"
    criteria: [ok]
    reference: {model: fake/ref}
    output_schema: {fields: [{name: name}, {name: industry}]}
grader: {model: fake/grader}
comparisons:
  - {compare: candidates, within: roles, model: nowhere/x}
providers:
  fake: {type: openai, base_url: "http://127.0.0.1:9", api_key_env: K}
"""


def test_a_comparison_after_the_field_grader_is_located_at_its_line(tmp_path: Path) -> None:
    path = tmp_path / "suite.yaml"
    path.write_text(SUITE, encoding="utf-8")
    suite = load_suite(path)
    with pytest.raises(SpecError) as caught:
        check_plan(suite, expand(suite))
    (issue,) = caught.value.issues
    assert ":12:" in str(issue) and "comparisons[0].model" in str(issue)
    assert "nowhere/x cannot run" in str(issue)
