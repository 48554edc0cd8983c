"""The database driver's own warnings never reach stderr beside qualspec's one error line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = """
import logging, sys
from qualspec.cli import main
try:
    main(["runs", "list", "--db", sys.argv[1]])
except SystemExit:
    pass
# what psycopg logs when a PostgreSQL server goes away in the middle of a pipeline
logging.getLogger("psycopg").warning("error ignored terminating %r: %s", "<Pipeline>", "gone")
"""


def test_psycopgs_warning_when_a_server_goes_away_is_not_printed(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'q.db'}"
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT, db], capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr
    assert "error ignored terminating" not in result.stderr
