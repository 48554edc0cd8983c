"""``--verbose``: qualspec's log records to stderr, with every secret masked."""

from __future__ import annotations

import logging
import os
import re
import sys

__all__ = ["SecretFilter", "configure_logging"]

_MARK = "_qualspec_cli_handler"  # set on the handler configure_logging adds

_SECRET_NAME = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD)", re.IGNORECASE)
_MIN_SECRET = 6


class SecretFilter(logging.Filter):
    """Masks the values of secret-looking environment variables and URL passwords.

    qualspec never puts a secret into a log message; this filter is the second line of
    defence for text that comes from elsewhere (a server's error message, a URL).
    """

    def __init__(self) -> None:
        super().__init__()
        self._secrets = sorted(
            (
                value
                for name, value in os.environ.items()
                if _SECRET_NAME.search(name) and len(value) >= _MIN_SECRET
            ),
            key=len,
            reverse=True,
        )

    def mask(self, text: str) -> str:
        """``text`` with every known secret replaced by ``***``."""
        for secret in self._secrets:
            text = text.replace(secret, "***")
        from qualspec.store import display_url

        return display_url(text)

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        masked = self.mask(message)
        if masked != message or record.args:
            record.msg, record.args = masked, None
        return True


def configure_logging(verbosity: int) -> None:
    """Send ``qualspec.*`` records to stderr: INFO at 1, DEBUG at 2 or more; nothing at 0.

    The handler an earlier call added (``main()`` run twice in one process) is removed
    first: it would write to the stderr of then, which may be closed now."""
    logger = logging.getLogger("qualspec")
    earlier = [h for h in logger.handlers if getattr(h, _MARK, False)]
    for old in earlier:
        logger.removeHandler(old)
    if verbosity <= 0:
        if earlier:  # the level an earlier call set goes with its handler
            logger.setLevel(logging.NOTSET)
        return
    handler = logging.StreamHandler(sys.stderr)
    setattr(handler, _MARK, True)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)-7s %(name)s: %(message)s"))
    handler.addFilter(SecretFilter())
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG if verbosity >= 2 else logging.INFO)
