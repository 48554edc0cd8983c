"""Field paths (tuples of keys and indices) and where they are in a source file."""

from __future__ import annotations

__all__ = ["FieldPath", "FixedLocator", "Positions", "format_field"]

FieldPath = tuple[str | int, ...]


def format_field(path: FieldPath) -> str:
    """Print a field path the way users write it: ``scenarios[2].rubric``."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


class Positions:
    """Where each value (and each mapping key) of a document starts, 1-based."""

    def __init__(self) -> None:
        self.values: dict[FieldPath, tuple[int, int]] = {}
        self.keys: dict[FieldPath, tuple[int, int]] = {}

    def find(self, path: FieldPath, *, key: bool = False) -> tuple[int, int]:
        """Position of ``path`` (its key when ``key``), else of its nearest known ancestor."""
        if key and path in self.keys:
            return self.keys[path]
        probe = path
        while probe:
            if probe in self.values:
                return self.values[probe]
            probe = probe[:-1]
        return self.values.get((), (1, 1))


class FixedLocator:
    """Puts every field path at one position (when no finer source position is known)."""

    def __init__(self, line: int = 1, col: int = 1) -> None:
        self.line = line
        self.col = col

    def find(self, path: FieldPath, *, key: bool = False) -> tuple[int, int]:
        """The fixed position, whatever the path."""
        return self.line, self.col
