"""Regular expressions compiled on first use.

The verdict parser's patterns (some thirty, :mod:`qualspec.judges._verdict_patterns` and
:mod:`qualspec.judges._reported`) read the judge's free text; a structured verdict (the
JSON a judge with a response format returns) needs two of them. Compiled at import they
cost every ``qualspec run`` some 10 ms of CPU; compiled when first used, only the patterns
a run needs are compiled.
"""

from __future__ import annotations

import re
from typing import Any, cast

__all__ = ["lazy_compile"]

_PATTERN_ATTRIBUTES = (
    "match",
    "fullmatch",
    "search",
    "finditer",
    "findall",
    "sub",
    "subn",
    "split",
    "pattern",
    "flags",
    "groups",
    "groupindex",
)


class _LazyPattern:
    """Stands for ``re.compile(source, flags)``: the first attribute read compiles it and
    keeps the compiled pattern's methods as attributes of this object, so later reads are
    plain attribute reads (``__getattr__`` runs once)."""

    def __init__(self, source: str, flags: int) -> None:
        self._source = source
        self._flags = flags

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):  # copy, pickle and the like probe for special methods
            raise AttributeError(name)
        compiled = re.compile(self._source, self._flags)
        for attribute in _PATTERN_ATTRIBUTES:
            setattr(self, attribute, getattr(compiled, attribute))
        return getattr(compiled, name)

    def __repr__(self) -> str:
        return f"lazy_compile({self._source!r}, {self._flags!r})"


def lazy_compile(source: str, flags: int | re.RegexFlag = 0) -> re.Pattern[str]:
    """``re.compile(source, flags)``, compiled when first used (see the module docstring).

    The object is not a ``re.Pattern`` (pass it to no ``re`` function): use its methods
    (``match``, ``search``, ``sub``, ...) and attributes (``pattern``, ``flags``).
    """
    return cast("re.Pattern[str]", _LazyPattern(source, int(flags)))
