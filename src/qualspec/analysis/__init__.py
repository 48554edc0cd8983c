"""qualspec.analysis."""
