"""Alembic migrations of the qualspec store (run through ``qualspec.store``)."""
