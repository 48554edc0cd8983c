"""Reference review in the web app through httpx: the list with statuses, a status change
with notes, an override checked against the output_schema, the audit trail, 422 naming
the field, 404 for an unknown id, the pages (escaped, forms posting back), and a change
from another site refused."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import pytest_asyncio
from helpers_web import seed_reference

from qualspec.store import Store
from qualspec.web import create_app

pytestmark = pytest.mark.asyncio
KEY = "ck-acme-0123456789"


@pytest.fixture
def db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("QUALSPEC_USER", "carol")
    url = f"sqlite:///{tmp_path / 'web.db'}"
    seed_reference(url, KEY, '{"name": "<script>alert(1)</script>", "industry": "SaaS"}')
    return url


@pytest_asyncio.fixture
async def client(db: str) -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(db=db)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as c:
        yield c
    await app.fastapi.state.web.aclose()


def _fields(response: httpx.Response) -> list[str]:
    return [".".join(str(p) for p in d["loc"]) for d in response.json()["detail"]]


async def test_status_change_override_and_audit_trail(client: httpx.AsyncClient, db: str) -> None:
    (row,) = (await client.get("/api/references")).json()
    assert row["id"] == KEY and row["status"] == "unvalidated" and row["overridden"] is False
    assert row["scenario"] == "profile" and row["model"] == "ref/big"

    changed = await client.post(
        f"/api/references/{KEY[:8]}/status", json={"status": "disputed", "notes": "odd name"}
    )
    assert changed.status_code == 200, changed.text
    body = changed.json()
    assert body["status"] == "disputed" and body["notes"] == "odd name"
    (entry,) = body["audit"]
    assert (entry["who"], entry["action"], entry["before"], entry["after"]) == (
        "carol",
        "dispute",
        "unvalidated",
        "disputed",
    )

    fixed = '{"name": "Acme", "industry": "SaaS"}'
    over = await client.post(
        f"/api/references/{KEY}/override",
        json={"answer": fixed, "notes": "the real name", "who": "dave"},
    )
    assert over.status_code == 200, over.text
    detail = (await client.get(f"/api/references/{KEY}")).json()
    assert detail["override_text"] == fixed and detail["status"] == "validated"
    assert detail["overridden"] is True and detail["human_validated_at"]
    assert [(e["who"], e["action"]) for e in detail["audit"]] == [
        ("carol", "dispute"),
        ("dave", "override"),
        ("dave", "validate"),
    ]
    assert "<script>" in (detail["audit"][1]["before"] or "")  # the model's answer
    assert [r["id"] for r in (await client.get("/api/references?status=validated")).json()] == [KEY]
    assert (await client.get("/api/references?status=disputed")).json() == []
    with Store.open(db) as store:  # the same store API the CLI and the grader read
        assert store.reference_override(KEY) == fixed


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        ("status", {"status": "great"}, "body.status"),
        ("status", {"notes": "no status"}, "body.status"),
        ("status", {"status": "validated", "surprise": 1}, "body.surprise"),
        ("override", {"answer": "{not json"}, "body.answer"),
        ("override", {"answer": ""}, "body.answer"),
        ("override", {"answer": '{"name": "Acme"}'}, "body.answer"),  # industry missing
        ("override", {"answer": "[1, 2]"}, "body.answer"),
    ],
)
async def test_bad_status_or_json_is_422_naming_the_field(
    client: httpx.AsyncClient, path: str, body: dict[str, Any], field: str
) -> None:
    response = await client.post(f"/api/references/{KEY}/{path}", json=body)
    assert response.status_code == 422, response.text
    assert _fields(response) == [field]
    detail = (await client.get(f"/api/references/{KEY}")).json()
    assert detail["audit"] == [] and detail["status"] == "unvalidated"


async def test_unknown_id_is_404(client: httpx.AsyncClient) -> None:
    assert (await client.get("/api/references/nope")).status_code == 404
    missing = await client.post("/api/references/nope/status", json={"status": "validated"})
    assert missing.status_code == 404 and "qualspec reference list" in missing.json()["detail"]
    assert (
        await client.post("/references/nope/status", data={"status": "validated"})
    ).status_code == 404
    assert (await client.get("/references/nope")).status_code == 404


async def test_changes_are_post_only_and_refused_from_another_site(
    client: httpx.AsyncClient,
) -> None:
    assert (await client.get(f"/api/references/{KEY}/status")).status_code == 405
    for headers in ({"Origin": "http://evil.example"}, {"Sec-Fetch-Site": "cross-site"}):
        refused = await client.post(
            f"/api/references/{KEY}/status", json={"status": "validated"}, headers=headers
        )
        assert refused.status_code == 403
    same = await client.post(
        f"/api/references/{KEY}/status",
        json={"status": "validated"},
        headers={"Origin": "http://127.0.0.1", "Sec-Fetch-Site": "same-origin"},
    )
    assert same.status_code == 200


async def test_pages_list_review_and_escape(client: httpx.AsyncClient) -> None:
    listing = await client.get("/references")
    assert listing.status_code == 200 and f'href="/references/{KEY}"' in listing.text
    assert "unvalidated" in listing.text
    assert "content-security-policy" in listing.headers

    page = await client.get(f"/references/{KEY}")
    assert page.status_code == 200
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page.text and "<script>alert" not in page.text
    assert "No changes yet" in page.text

    posted = await client.post(
        f"/references/{KEY}/status", data={"status": "needs_review", "notes": "<i>check</i>"}
    )
    assert posted.status_code == 303 and posted.headers["location"] == f"/references/{KEY}"
    page = await client.get(f"/references/{KEY}")
    assert "needs_review" in page.text and "&lt;i&gt;check&lt;/i&gt;" in page.text
    assert "<i>check</i>" not in page.text and "carol" in page.text

    bad = await client.post(f"/references/{KEY}/override", data={"answer": '{"name": 1'})
    assert bad.status_code == 422 and "answer: line 1 column" in bad.text
    assert "{&#34;name&#34;: 1" in bad.text  # the draft is kept, escaped
    good = await client.post(
        f"/references/{KEY}/override",
        data={"answer": '{"name": "Acme", "industry": "SaaS"}', "notes": "fixed"},
    )
    assert good.status_code == 303
    page = await client.get(f"/references/{KEY}")
    assert "OVERRIDE" in page.text and "Audit trail (3)" in page.text
