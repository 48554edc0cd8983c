"""How fast and in how little memory YAML bombs are refused, against loading a normal suite.

    python benchmarks/yaml_limits.py [--repeat 5] [--quick]

Each case is loaded with ``load_suite`` (which refuses a bomb with a suite error, exit 2
in the CLI), as the suite itself and inside its inputs file: a 390-byte alias bomb 9
levels deep, a recursive alias (``a: &x [*x]``) and 20,000 levels of ``[[[[``. The
baseline is a normal suite with a 200-row inputs file, loaded in the same run. Prints per
case: the best time of ``--repeat`` loads, its ratio to the baseline, and the peak of
memory traced by ``tracemalloc`` during one load (measured apart, so it does not slow the
timed loads). No assertions: tests/spec/test_spec_yaml_limits.py holds the bars.
"""

from __future__ import annotations

import argparse
import tempfile
import time
import tracemalloc
from pathlib import Path

from qualspec.errors import SpecError
from qualspec.spec import load_suite

SUITE = """\
name: yaml-limits
candidates: [{name: a, model: openai/gpt-4o-mini}, {name: b, model: local/smollm2}]
roles: [{name: expert, preamble: "I am an expert."}, {name: novice}]
scenarios:
  - name: x
    prompt: "Answer {{ q }} for {{ who }}"
    criteria: [is correct, is concise]
    inputs: rows.yaml
"""


def _bomb(levels: int) -> str:
    lines = ['zz_a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, levels + 1):
        prev, cur = chr(ord("a") + i - 1), chr(ord("a") + i)
        lines.append(f"{cur}: &{cur} [{','.join(['*' + prev] * 9)}]")
    return "\n".join(lines) + "\n"


BOMBS = {
    "alias bomb (9 levels)": _bomb(9),
    "recursive alias": "zz_a: &x [*x]\n",
    "20,000 levels of [": "zz_a: " + "[" * 20_000 + "]" * 20_000 + "\n",
}


def _write(root: Path, bomb: str | None, where: str) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    rows = "".join(f"- {{q: question {i}, who: person {i}}}\n" for i in range(200))
    suite = root / "s.yaml"
    if bomb is not None and where == "suite":
        suite.write_text(SUITE + bomb, encoding="utf-8")
    else:
        suite.write_text(SUITE, encoding="utf-8")
    if bomb is not None and where == "inputs":
        nested = "".join("    " + line + "\n" for line in bomb.splitlines())
        rows = "- q: hi\n  who: me\n  extra:\n" + nested
    (root / "rows.yaml").write_text(rows, encoding="utf-8")
    return suite


def _load(path: Path) -> bool:
    """Load ``path``; True when it was refused as a suite error."""
    try:
        load_suite(path)
    except SpecError:
        return True
    return False


def _best(path: Path, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        _load(path)
        best = min(best, time.perf_counter() - start)
    return best


def _peak(path: Path) -> int:
    tracemalloc.start()
    try:
        _load(path)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="one load per case")
    args = parser.parse_args()
    repeat = 1 if args.quick else max(args.repeat, 1)

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        normal = _write(root / "normal", None, "suite")
        if _load(normal):
            raise SystemExit("the normal suite was refused: fix the benchmark")
        _load(normal)  # warm imports before timing
        base = _best(normal, repeat)
        print(f"yaml limits: best of {repeat} loads each, ratio to the normal suite")
        header = f"{'case':<36} {'refused':>8} {'time':>10} {'ratio':>7} {'peak MB':>8}"
        print(header)
        print("-" * len(header))
        print(
            f"{'normal suite (200 input rows)':<36} {'no':>8} {base * 1000:>8.1f}ms "
            f"{1.0:>6.2f}x {_peak(normal) / 2**20:>8.1f}"
        )
        for i, (name, bomb) in enumerate(BOMBS.items()):
            for where in ("suite", "inputs"):
                path = _write(root / f"{i}-{where}", bomb, where)
                refused = "yes" if _load(path) else "NO"
                took = _best(path, repeat)
                label = f"{name} in the {where}"
                print(
                    f"{label:<36} {refused:>8} {took * 1000:>8.1f}ms {took / base:>6.2f}x "
                    f"{_peak(path) / 2**20:>8.1f}"
                )


if __name__ == "__main__":
    main()
