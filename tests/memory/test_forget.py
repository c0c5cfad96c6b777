"""Forget a site: dry run with counts and an 8-second confirmation, soft apply over whole-label
subdomains, library documents counted not removed, undo, and 409s."""

from __future__ import annotations

import time
from typing import Any

import pytest

from server.memory import forget
from tests.conftest import Api
from tests.memory.test_memory_pagematch import add_document, note
from tests.memory.test_memory_writes import snapshot


async def seed(api: Api) -> None:
    await note(api, "https://example.com/a", "root")
    await note(api, "https://www.example.com/b", "www")
    await note(api, "https://deep.a.example.com/c", "deep")
    await note(api, "https://notexample.com/d", "not a subdomain")
    await note(api, "https://example.com.evil.test/e", "not either")


async def dry(api: Api, host: str) -> dict[str, Any]:
    status, body = await api.post("/api/forget", {"host": host, "dry_run": True})
    assert status == 200, body
    return dict(body)


async def live_texts(api: Api) -> set[str]:
    return {r["text"] for r in await api.store.fetchall("SELECT text FROM facts WHERE invalid_at IS NULL")}


async def test_dry_run_counts_and_changes_nothing(api: Api) -> None:
    await seed(api)
    before = await snapshot(api)
    body = await dry(api, "Example.COM")
    assert (body["host"], body["facts"], body["documents"]) == ("example.com", 3, 0)
    assert isinstance(body["confirm"], str) and len(body["confirm"]) >= 16
    assert await snapshot(api) == before


async def test_apply_hides_the_host_and_its_subdomains_by_whole_labels(api: Api) -> None:
    await seed(api)
    token = (await dry(api, "example.com"))["confirm"]
    status, body = await api.post("/api/forget", {"host": "example.com", "confirm": token})
    assert status == 200 and (body["facts"], body["documents"]) == (3, 0) and body["batch"]
    assert await live_texts(api) == {"not a subdomain", "not either"}
    rows = await api.store.fetchall("SELECT COUNT(*) FROM facts")
    assert rows[0][0] == 5  # soft: nothing deleted
    status, log = await api.get("/api/activity")
    assert log["activity"][0]["kind"] == "forget" and log["activity"][0]["source_host"] == "example.com"


async def test_library_documents_are_counted_not_removed(api: Api) -> None:
    await note(api, "https://example.com/a", "root")
    await add_document(api, "https://blog.example.com/post", "Post", "A saved post about walnuts. " * 20)
    body = await dry(api, "example.com")
    assert (body["facts"], body["documents"]) == (1, 1)
    status, done = await api.post("/api/forget", {"host": "example.com", "confirm": body["confirm"]})
    assert (done["facts"], done["documents"]) == (1, 1)
    status, docs = await api.get("/api/library")
    assert status == 200
    assert any(d["source_url"] == "https://blog.example.com/post" for d in docs["documents"])


async def test_undo_restores_exactly_the_batch(api: Api) -> None:
    await seed(api)
    await note(api, "https://example.com/z", "hidden earlier")
    t1 = (await dry(api, "www.example.com"))["confirm"]
    _, first = await api.post("/api/forget", {"host": "www.example.com", "confirm": t1})
    t2 = (await dry(api, "example.com"))["confirm"]
    _, second = await api.post("/api/forget", {"host": "example.com", "confirm": t2})
    assert second["facts"] == 3  # www was already hidden by the first batch
    status, body = await api.post("/api/forget/undo", {"batch": second["batch"]})
    assert status == 200 and body["restored"] == 3
    assert "www" not in await live_texts(api)
    status, again = await api.post("/api/forget/undo", {"batch": second["batch"]})
    assert status == 200 and again["restored"] == 0
    _, log = await api.get("/api/activity")
    assert log["activity"][0]["kind"] == "undo"
    status, body = await api.post("/api/forget/undo", {"batch": first["batch"]})
    assert body["restored"] == 1 and "www" in await live_texts(api)


async def test_confirmation_expires_after_8_seconds(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    await seed(api)
    token = (await dry(api, "example.com"))["confirm"]
    real = time.monotonic
    monkeypatch.setattr(forget.time, "monotonic", lambda: real() + forget.CONFIRM_SECONDS + 0.5)
    before = await snapshot(api)
    status, body = await api.post("/api/forget", {"host": "example.com", "confirm": token})
    assert status == 409 and body["error"]["code"] == "confirm_expired"
    assert await snapshot(api) == before


async def test_confirmation_within_8_seconds_works(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    await seed(api)
    token = (await dry(api, "example.com"))["confirm"]
    real = time.monotonic
    monkeypatch.setattr(forget.time, "monotonic", lambda: real() + forget.CONFIRM_SECONDS - 1)
    status, _ = await api.post("/api/forget", {"host": "example.com", "confirm": token})
    assert status == 200


@pytest.mark.parametrize("case", ["unknown", "other_host", "reused", "stale_counts"])
async def test_bad_confirmations_are_409_and_change_nothing(api: Api, case: str) -> None:
    await seed(api)
    confirm = (await dry(api, "example.com"))["confirm"]
    host = "example.com"
    if case == "unknown":
        confirm = "not-a-confirmation"
    elif case == "other_host":
        host = "notexample.com"
    elif case == "reused":
        status, _ = await api.post("/api/forget", {"host": host, "confirm": confirm})
        assert status == 200
    elif case == "stale_counts":
        await note(api, "https://new.example.com/", "arrived after the dry run")
    before = await snapshot(api)
    status, body = await api.post("/api/forget", {"host": host, "confirm": confirm})
    assert status == 409, body
    assert await snapshot(api) == before


@pytest.mark.parametrize(
    "payload,code",
    [
        ({"host": "example.com"}, "missing_field"),
        ({"host": "http://example.com/", "dry_run": True}, "bad_host_name"),
        ({"host": "", "dry_run": True}, "bad_value"),
        ({"dry_run": True}, "missing_field"),
        ({"host": "example.com", "dry_run": True, "confirm": "x"}, "bad_value"),
    ],
)
async def test_bad_forget_requests_are_400(api: Api, payload: dict[str, Any], code: str) -> None:
    await seed(api)
    before = await snapshot(api)
    status, body = await api.post("/api/forget", payload)
    assert status == 400 and body["error"]["code"] == code, body
    assert await snapshot(api) == before


async def test_unknown_batch_is_404(api: Api) -> None:
    status, body = await api.post("/api/forget/undo", {"batch": "nope"})
    assert status == 404


async def test_every_reader_honours_invalid_at(api: Api) -> None:
    url = "https://chatgpt.com/c/1"
    await note(api, url, "walnut note")
    await api.post(
        "/api/captures",
        {"url": url, "title": "t", "site": "chatgpt", "turns": [{"role": "user", "text": "walnut turn"}]},
    )
    await note(api, "https://chatgpt.com/c/2", "walnut sibling")
    token = (await dry(api, "chatgpt.com"))["confirm"]
    await api.post("/api/forget", {"host": "chatgpt.com", "confirm": token})
    _, m = await api.get("/api/page-match", params={"url": url, "title": "walnut"})
    assert m["green"] is False and m["tiers"] == {"exact": [], "site": [], "related": [], "documents": []}
    _, p = await api.get("/api/page-probe", params={"url": url})
    assert p["exact"] == 0
    _, c = await api.get("/api/conversations", params={"url": url})
    assert c["turns"] == []
    _, s = await api.get("/api/search", params={"q": "walnut"})
    assert s["results"] == []
    assert (await dry(api, "chatgpt.com"))["facts"] == 0
