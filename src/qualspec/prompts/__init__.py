"""qualspec.prompts."""
