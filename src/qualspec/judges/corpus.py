"""The score parser's labelled corpora of judge outputs, public for the benchmarks.

Two corpora, made two ways, scored the same way:

* :func:`generate_corpus`: judge outputs written from templates (clear, ambiguous and
  adversarial), from a seed;
* :func:`perturbed_corpus`: real judge outputs (read by :func:`load_outputs` from a
  recording such as ``tests/judges/data/smollm2_judge_outputs.json``), each changed the
  ways real answers differ, with a label known from the change.

:func:`score_corpus` runs :func:`~qualspec.judges.parse_judgment` over either and counts, per
class (:data:`CLASSES`), the outputs read correctly, invented, wrong and missed.

Example::

    from qualspec.judges.corpus import generate_corpus, score_corpus

    report = score_corpus(generate_corpus(seed=0, size=1200))
    print(f"{report.clear_share:.1%} of the clear verdicts read")
"""

from __future__ import annotations

from qualspec.judges._corpus import (
    CLASSES,
    ClassCounts,
    CorpusCase,
    CorpusReport,
    generate_corpus,
    score_corpus,
)
from qualspec.judges._perturb import load_outputs, perturbed_corpus

# in the order a reader meets them: the two corpora, their scoring, what it returns
__all__ = [
    "generate_corpus",
    "load_outputs",
    "perturbed_corpus",
    "score_corpus",
    "CorpusCase",
    "CorpusReport",
    "ClassCounts",
    "CLASSES",
]
