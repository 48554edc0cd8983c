"""URLs and connection strings with a secret in them, and how qualspec shows each (the store's
display, the run metadata and the ``--verbose`` log mask them the same way)."""

from __future__ import annotations

MASKED_FORMS = [
    ("postgresql://u:canary@h/db", "postgresql://u:***@h/db"),
    ("postgresql://u:can@ry@h:5432/db", "postgresql://u:***@h:5432/db"),
    ("postgresql://u@h/db?password=canary", "postgresql://u@h/db?password=***"),
    (
        "postgresql://h/db?user=u&password=canary&sslmode=require",
        "postgresql://h/db?user=u&password=***&sslmode=require",
    ),
    (
        "postgresql://h/db?sslmode=require&PASSWORD=canary",
        "postgresql://h/db?sslmode=require&PASSWORD=***",
    ),
    ("https://user:canary@gw.example/v1", "https://user:***@gw.example/v1"),
    ("https://gw.example/v1?api-key=canary", "https://gw.example/v1?api-key=***"),
    ("https://gw.example/v1?key=canary&x=1", "https://gw.example/v1?key=***&x=1"),
    ("https://gw.example/v1?token=canary#frag", "https://gw.example/v1?token=***#frag"),
    ("https://gw.example/v1?access_token=canary", "https://gw.example/v1?access_token=***"),
    ("host=h dbname=q password=canary", "host=h dbname=q password=***"),
    (
        "error on http://a:canary@h/v1 and http://b:canary@k/v2: refused",
        "error on http://a:***@h/v1 and http://b:***@k/v2: refused",
    ),
]
