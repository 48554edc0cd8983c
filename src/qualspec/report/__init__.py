"""qualspec.report."""
