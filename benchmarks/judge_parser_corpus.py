"""The judge-score parser over its two corpora of judge outputs.

    python benchmarks/judge_parser_corpus.py [--seed 0] [--size 1200] [--repeat 5]

Two corpora made two ways (``qualspec.judges.corpus``): the generated one (outputs written
from templates) and the perturbed one (24 real outputs of the
embedded judge, recorded once in ``tests/judges/data/smollm2_judge_outputs.json`` and
labelled by hand, each changed 40 ways with a known label). Prints, per corpus and class
(clear, ambiguous, adversarial): the number of outputs, how many were read correctly,
invented (a score where none is expected), wrong (a different score), missed (a verdict
left unscored) and unscored, then the share of clear outputs read and the parse throughput
of the generated corpus (outputs/s, the best of ``--repeat`` passes). No assertions: the
tests hold the bar.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from qualspec.judges import parse_judgment
from qualspec.judges.corpus import (
    CLASSES,
    CorpusReport,
    generate_corpus,
    load_outputs,
    perturbed_corpus,
    score_corpus,
)

REAL = Path(__file__).resolve().parent.parent / "tests/judges/data/smollm2_judge_outputs.json"


def _table(title: str, report: CorpusReport) -> None:
    header = (
        f"{'class':<12} {'n':>6} {'correct':>8} {'invented':>9} {'wrong':>6} {'missed':>7} "
        f"{'unscored':>9}"
    )
    print(title)
    print(header)
    print("-" * len(header))
    rows = [(label, report.classes[label]) for label in CLASSES] + [("total", report.total)]
    for label, c in rows:
        print(
            f"{label:<12} {c.n:>6} {c.correct:>8} {c.invented:>9} {c.wrong:>6} {c.missed:>7} "
            f"{c.unscored:>9}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--size", type=int, default=1200)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    cases = generate_corpus(seed=args.seed, size=args.size)
    report = score_corpus(cases)
    best = float("inf")
    for _ in range(max(args.repeat, 1)):
        start = time.perf_counter()
        for case in cases:
            parse_judgment(case.text, case.structured)
        best = min(best, time.perf_counter() - start)

    _table(f"generated corpus: seed {args.seed}, {len(cases)} outputs", report)
    print(f"share of clear read correctly: {report.clear_share:.1%}")
    print(f"throughput: {len(cases) / best:,.0f} outputs/s (best of {args.repeat})")
    real = perturbed_corpus(load_outputs(REAL), seed=args.seed)
    print()
    _table(f"perturbed real outputs: seed {args.seed}, {len(real)} outputs", score_corpus(real))


if __name__ == "__main__":
    main()
