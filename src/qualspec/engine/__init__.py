"""qualspec.engine."""
