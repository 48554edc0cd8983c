"""Prompt templates, stored as files in this package and versioned by content."""

from qualspec.prompts._templates import load_template, render_template

__all__ = ["load_template", "render_template"]
