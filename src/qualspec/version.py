"""The package's version, in a module of its own: every layer may read it without
importing the top-level package (which imports every layer lazily)."""

__version__ = "0.1.0"
