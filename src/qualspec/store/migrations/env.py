"""Alembic environment: qualspec passes an open connection, inside its own transaction."""

from __future__ import annotations

from alembic import context

connection = context.config.attributes.get("connection")
if connection is None:  # pragma: no cover - only reachable by calling alembic by hand
    raise RuntimeError(
        "qualspec migrations run through qualspec.store: use Store.open(url) or "
        "qualspec.store.upgrade(url), not the alembic command line"
    )

context.configure(connection=connection, target_metadata=None)
with context.begin_transaction():
    context.run_migrations()
