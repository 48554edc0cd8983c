"""``--verbose``: the log's secret filter masks URL passwords as the store shows them."""

from __future__ import annotations

import logging

import pytest

from helpers_urls import MASKED_FORMS
from qualspec.cli import main
from qualspec.cli._logging import SecretFilter
from qualspec.store import display_url


@pytest.mark.parametrize(("url", "shown"), MASKED_FORMS)
def test_the_log_filter_masks_like_the_store(url: str, shown: str) -> None:
    assert SecretFilter().mask(url) == shown == display_url(url)


def test_main_run_twice_in_one_process_logs_to_the_stderr_of_now(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A ``--verbose`` call's handler does not outlive its call: a later call's log
    records go to the stderr of the later call, or nowhere without ``--verbose``."""
    logger = logging.getLogger("qualspec")
    before = list(logger.handlers)

    def run(*argv: str) -> None:
        with pytest.raises(SystemExit) as ended:
            main(list(argv))
        assert ended.value.code in (0, None)

    try:
        run("--verbose", "schema")
        run("--verbose", "schema")
        assert len(logger.handlers) == len(before) + 1  # replaced, not added again
        run("schema")
        assert logger.handlers == before
        assert logger.level == logging.NOTSET
        capsys.readouterr()
        logger.warning("after a plain call")
        assert "after a plain call" not in capsys.readouterr().err
    finally:
        for handler in [h for h in logger.handlers if h not in before]:
            logger.removeHandler(handler)
        logger.setLevel(logging.NOTSET)
