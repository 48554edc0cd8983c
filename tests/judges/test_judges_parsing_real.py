"""The parser over a corpus made another way: real judge outputs, perturbed.

The outputs were recorded once from the embedded model on the project's judge prompt
(``benchmarks/record_judge_outputs.py``) and labelled by hand; ``qualspec.judges._perturb``
changes them with labels known from the change. Reproduce the table with
``python benchmarks/judge_parser_corpus.py``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from qualspec.judges import parse_judgment
from qualspec.judges._corpus import CLASSES, score_corpus
from qualspec.judges._perturb import load_outputs, perturbed_corpus

DATA = Path(__file__).parent / "data" / "smollm2_judge_outputs.json"


def test_recorded_outputs_read_as_labelled() -> None:
    outputs = load_outputs(DATA)
    assert len(outputs) >= 20
    assert {o.expected is None for o in outputs} == {True, False}
    for output in outputs:
        got = parse_judgment(output.text, output.structured).score
        assert got == output.expected, (output.text[:200], got)


def test_perturbed_corpus_is_deterministic() -> None:
    outputs = load_outputs(DATA)
    first = perturbed_corpus(outputs, seed=0)
    assert first == perturbed_corpus(outputs, seed=0)
    assert first != perturbed_corpus(outputs, seed=1)
    assert {case.label for case in first} == set(CLASSES)


@pytest.mark.parametrize("seed", [0, 1])
def test_perturbed_real_outputs_never_invent_or_misread(seed: int) -> None:
    cases = perturbed_corpus(load_outputs(DATA), seed=seed)
    report = score_corpus(cases)
    shown = [(case.kind, case.text[:160], got) for case, got in report.failures[:5]]
    print(f"\nperturbed real outputs, seed {seed}: {len(cases)} outputs")
    for label in CLASSES:
        c = report.classes[label]
        print(
            f"  {label:<12} n={c.n:>4} correct={c.correct:>4} invented={c.invented} "
            f"wrong={c.wrong} missed={c.missed}"
        )
        assert c.n >= 150, label
        assert c.invented == 0, shown
        assert c.wrong == 0, shown
    # a verdict the parser reads today must stay read: at most 5% of scored cases missed
    expected_scored = sum(1 for case in cases if case.expected is not None)
    assert report.total.missed <= 0.05 * expected_scored, shown
