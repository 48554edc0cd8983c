"""The verdict parser's patterns are compiled on first use (qualspec.judges._lazy_re): a
lazy pattern matches, searches and substitutes as ``re.compile`` does, and compiles once."""

from __future__ import annotations

import re
import subprocess
import sys

from qualspec.judges._lazy_re import lazy_compile


def test_a_lazy_pattern_answers_as_the_compiled_one() -> None:
    lazy = lazy_compile(r"score\s*:\s*(?P<n>\d+)", re.IGNORECASE)
    real = re.compile(r"score\s*:\s*(?P<n>\d+)", re.IGNORECASE)
    text = "Fine.\nSCORE: 8\nscore: 9"
    assert lazy.search(text) is not None
    assert lazy.search(text).group("n") == real.search(text).group("n")  # type: ignore[union-attr]
    assert lazy.match(text) is None
    assert lazy.findall(text) == real.findall(text)
    assert [m.span() for m in lazy.finditer(text)] == [m.span() for m in real.finditer(text)]
    assert lazy.sub("X", text) == real.sub("X", text)
    assert lazy.split(text) == real.split(text)
    assert (lazy.pattern, lazy.flags) == (real.pattern, real.flags)
    assert lazy.groupindex == real.groupindex


def test_importing_the_verdict_parser_compiles_none_of_its_patterns() -> None:
    code = (
        "import re, sys\n"
        "compiled = []\n"
        "real = re.compile\n"
        "def counted(*a, **k):\n"
        "    if 'qualspec/judges' in sys._getframe(1).f_code.co_filename:\n"
        "        compiled.append(a)\n"
        "    return real(*a, **k)\n"
        "re.compile = counted\n"
        "import qualspec.judges\n"
        "before = len(compiled)\n"
        "from qualspec.judges import parse_judgment\n"
        'verdict = parse_judgment(\'{"score": 8, "reasoning": "fine"}\')\n'
        "assert verdict.score == 8, verdict\n"
        "print(len(compiled) - before)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert int(done.stdout.strip()) <= 5  # what a JSON verdict is read with, of the 27
