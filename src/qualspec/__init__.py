"""qualspec: LLM-judged, qualitative evaluation."""
__version__ = "0.1.0"
