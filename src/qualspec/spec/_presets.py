"""The named temperature presets a suite may give instead of a list (``temperatures:
stability_test``)."""

from __future__ import annotations

__all__ = ["TEMPERATURE_PRESETS"]

TEMPERATURE_PRESETS: dict[str, tuple[float, ...]] = {
    "stability_test": (0.0, 0.5, 1.0),
    "full_range": (0.0, 0.3, 0.5, 0.7, 1.0, 1.2, 1.5),
    "safety_probe": (0.0, 1.0, 1.5, 2.0),
}
