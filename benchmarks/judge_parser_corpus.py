"""The judge-score parser over the generated corpus of judge outputs.

    python benchmarks/judge_parser_corpus.py [--seed 0] [--size 1200] [--repeat 5]

Prints, per class (clear, ambiguous, adversarial): the number of outputs, how many were
read correctly, invented (a score where none is expected), wrong (a different score) and
unscored, then the share of clear outputs read and the parse throughput (outputs/s, the
best of ``--repeat`` passes). No assertions: the tests hold the bar.
"""

from __future__ import annotations

import argparse
import time

from qualspec.judges import parse_judgment
from qualspec.judges._corpus import CLASSES, generate_corpus, score_corpus


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

    header = f"{'class':<12} {'n':>6} {'correct':>8} {'invented':>9} {'wrong':>6} {'unscored':>9}"
    print(f"judge parser corpus: seed {args.seed}, {len(cases)} outputs")
    print(header)
    print("-" * len(header))
    rows = [(label, report.classes[label]) for label in CLASSES] + [("total", report.total)]
    for label, c in rows:
        print(f"{label:<12} {c.n:>6} {c.correct:>8} {c.invented:>9} {c.wrong:>6} {c.unscored:>9}")
    print(f"share of clear read correctly: {report.clear_share:.1%}")
    print(f"clear outputs missed (unscored): {report.classes['clear'].missed}")
    print(f"throughput: {len(cases) / best:,.0f} outputs/s (best of {args.repeat})")


if __name__ == "__main__":
    main()
