"""qualspec.store."""
