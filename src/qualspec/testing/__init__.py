"""Test helpers: a fake OpenAI-compatible server."""
