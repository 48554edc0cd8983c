"""qualspec.judges."""
