"""qualspec.spec."""
