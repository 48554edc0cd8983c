"""``qualspec serve`` on a public address refuses a token too short to guard it, in one
line that says how to make a real one (before anything is served)."""

from __future__ import annotations

import pytest

from qualspec.cli import main


@pytest.fixture(autouse=True)
def never_serve(monkeypatch: pytest.MonkeyPatch) -> None:
    """Were the token let through, fail instead of serving on a public address."""
    import uvicorn

    def run(*args: object, **kwargs: object) -> None:
        raise AssertionError("a short token was let through: the server started")

    monkeypatch.setattr(uvicorn, "run", run)


@pytest.mark.parametrize("token", ["x", "   ", "short-token-15c"])
def test_serve_refuses_a_short_token_on_a_public_address(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, token: str
) -> None:
    monkeypatch.delenv("QUALSPEC_WEB_TOKEN", raising=False)
    with pytest.raises(SystemExit) as exc:
        main(["serve", "--host", "0.0.0.0", "--port", "0", "--token", token])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1, err
    assert "at least 16" in err and "secrets.token_urlsafe(24)" in err


def test_serve_refuses_a_short_token_from_the_environment(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("QUALSPEC_WEB_TOKEN", "abc")
    with pytest.raises(SystemExit) as exc:
        main(["serve", "--host", "0.0.0.0", "--port", "0"])
    assert exc.value.code == 2
    assert "with a token of 3 character(s)" in capsys.readouterr().err
