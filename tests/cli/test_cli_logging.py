"""``--verbose``: the log's secret filter masks URL passwords as the store shows them."""

from __future__ import annotations

import pytest

from helpers_urls import MASKED_FORMS
from qualspec.cli._logging import SecretFilter
from qualspec.store import display_url


@pytest.mark.parametrize(("url", "shown"), MASKED_FORMS)
def test_the_log_filter_masks_like_the_store(url: str, shown: str) -> None:
    assert SecretFilter().mask(url) == shown == display_url(url)
