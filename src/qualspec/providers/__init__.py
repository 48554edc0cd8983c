"""qualspec.providers."""
