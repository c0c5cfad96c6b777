"""Notes and clips: happy paths, enforcement, bad input, and nothing partially written."""

from __future__ import annotations

import time
from typing import Any
from unittest.mock import ANY

import pytest

from tests.conftest import Api

PAGE = "https://example.com/article"


async def snapshot(api: Api) -> dict[str, list[tuple[Any, ...]]]:
    """Every memory table's rows, to prove a refused request changed nothing."""
    out = {}
    for table in ("facts", "conversations", "activity", "forget_batches"):
        rows = await api.store.fetchall(f"SELECT * FROM {table} ORDER BY rowid")  # noqa: S608 - fixed names
        out[table] = [tuple(r) for r in rows]
    out["facts_fts"] = [tuple(r) for r in await api.store.fetchall("SELECT rowid FROM facts_fts")]
    return out


async def set_mode(api: Api, host: str, mode: str) -> None:
    status, _ = await api.put("/api/site-mode", {"host": host, "mode": mode})
    assert status == 200


@pytest.mark.parametrize("route,kind", [("/api/notes", "note"), ("/api/clips", "clip")])
async def test_write_stores_a_stamped_fact_and_an_activity_row(api: Api, route: str, kind: str) -> None:
    status, body = await api.post(
        route, {"url": PAGE + "?utm_source=x#top", "title": "An article", "text": "walnut-lantern-4417"}
    )
    assert status == 201 and isinstance(body["id"], int)
    row = await api.store.fetchone("SELECT * FROM facts WHERE id = ?", (body["id"],))
    assert row is not None
    assert (row["kind"], row["source_url"], row["source_host"], row["source_ref"]) == (
        kind,
        PAGE,
        "example.com",
        "An article",
    )
    assert row["granularity"] == "instant" and abs(row["valid_at"] - time.time()) < 5
    status, log = await api.get("/api/activity")
    assert status == 200 and log["activity"][0]["kind"] == kind and log["activity"][0]["source_url"] == PAGE


async def test_note_with_a_day_is_day_granular(api: Api) -> None:
    today = time.strftime("%Y-%m-%d")
    status, body = await api.post(
        "/api/notes", {"url": PAGE, "title": "t", "text": "from today's log", "valid_day": today}
    )
    assert status == 201
    status, match = await api.get("/api/page-match", params={"url": PAGE, "title": ""})
    fact = match["tiers"]["exact"][0]
    assert fact["age"] == {"label": "today", "granularity": "day", "at": ANY}


@pytest.mark.parametrize("day", ["2026-13-01", "yesterday", "20261129", "2026-1-010"])
async def test_bad_valid_day_is_400_and_writes_nothing(api: Api, day: str) -> None:
    before = await snapshot(api)
    status, body = await api.post("/api/notes", {"url": PAGE, "title": "t", "text": "x", "valid_day": day})
    assert status == 400, body
    assert await snapshot(api) == before


async def test_clip_without_url_is_refused(api: Api) -> None:
    before = await snapshot(api)
    status, body = await api.post("/api/clips", {"title": "t", "text": "a selection"})
    assert status == 400 and body["error"]["code"] == "missing_field"
    status, body = await api.post("/api/clips", {"url": "", "title": "t", "text": "a selection"})
    assert status == 400
    assert await snapshot(api) == before


@pytest.mark.parametrize("route", ["/api/notes", "/api/clips"])
@pytest.mark.parametrize(
    "url",
    [
        "javascript:alert(1)",
        "file:///etc/passwd",
        "data:text/html,hi",
        "chrome://settings",
        "not a url",
        "https://",
        "ftp://x.com/a",
    ],
)
async def test_bad_urls_are_400_and_write_nothing(api: Api, route: str, url: str) -> None:
    before = await snapshot(api)
    status, body = await api.post(route, {"url": url, "title": "t", "text": "x"})
    assert status == 400 and body["error"]["code"] == "bad_url", body
    assert await snapshot(api) == before


@pytest.mark.parametrize("route", ["/api/notes", "/api/clips"])
@pytest.mark.parametrize("mode", ["off", "suggest"])
async def test_write_is_403_unless_collect(api: Api, route: str, mode: str) -> None:
    await set_mode(api, "example.com", mode)
    before = await snapshot(api)
    status, body = await api.post(route, {"url": "https://sub.example.com/x", "title": "t", "text": "x"})
    assert status == 403 and body["error"]["code"] == "site_mode" and body["error"]["mode"] == mode
    assert await snapshot(api) == before
    await set_mode(api, "example.com", "collect")  # control
    status, _ = await api.post(route, {"url": "https://sub.example.com/x", "title": "t", "text": "x"})
    assert status == 201


@pytest.mark.parametrize("route", ["/api/notes", "/api/clips"])
async def test_sensitive_default_host_is_refused(api: Api, route: str) -> None:
    before = await snapshot(api)
    status, body = await api.post(route, {"url": "https://accounts.google.com/signin", "title": "t", "text": "x"})
    assert status == 403 and body["error"]["mode"] == "off"
    assert await snapshot(api) == before


@pytest.mark.parametrize("route", ["/api/notes", "/api/clips"])
async def test_text_cap_counts_characters(api: Api, route: str) -> None:
    before = await snapshot(api)
    status, body = await api.post(route, {"url": PAGE, "title": "t", "text": "🧪" * 20_001})
    assert status == 413, body
    assert await snapshot(api) == before
    status, body = await api.post(route, {"url": PAGE, "title": "t", "text": "🧪" * 20_000})  # 80 kB, at the cap
    assert status == 201
    row = await api.store.fetchone("SELECT text FROM facts WHERE id = ?", (body["id"],))
    assert row is not None and row["text"] == "🧪" * 20_000


@pytest.mark.parametrize("route", ["/api/notes", "/api/clips"])
@pytest.mark.parametrize(
    "payload,code",
    [
        ({"url": PAGE, "title": "t"}, "missing_field"),
        ({"url": PAGE, "title": "t", "text": ""}, "bad_value"),
        ({"url": PAGE, "title": "t", "text": "   \n"}, "bad_value"),
        ({"url": PAGE, "title": "t", "text": 5}, "bad_type"),
        ({"url": PAGE, "title": "t", "text": "x", "extra": 1}, "unknown_field"),
    ],
)
async def test_bad_bodies_are_400_and_write_nothing(api: Api, route: str, payload: dict[str, Any], code: str) -> None:
    before = await snapshot(api)
    status, body = await api.post(route, payload)
    assert status == 400 and body["error"]["code"] == code, body
    assert await snapshot(api) == before


async def test_long_title_is_cut_on_a_character_boundary(api: Api) -> None:
    title = "漢" * 499 + "🧪" + "e\u0301" * 10
    status, body = await api.post("/api/notes", {"url": PAGE, "title": title, "text": "x"})
    assert status == 201
    row = await api.store.fetchone("SELECT title, source_ref FROM facts WHERE id = ?", (body["id"],))
    assert row is not None
    for value in (row["title"], row["source_ref"]):
        assert len(value) <= 500 and value.endswith("…") and title.startswith(value[:-1])


async def test_idempotent_replay_writes_once(api: Api) -> None:
    headers = {"Idempotency-Key": "outbox-1"}
    first = await api.post("/api/notes", {"url": PAGE, "title": "t", "text": "once"}, headers=headers)
    second = await api.post("/api/notes", {"url": PAGE, "title": "t", "text": "once"}, headers=headers)
    assert first == second and first[0] == 201
    rows = await api.store.fetchall("SELECT id FROM facts WHERE text = 'once'")
    assert len(rows) == 1


@pytest.mark.parametrize("day", ["0001-01-01", "1969-12-31", "2026-13-01", "2026-02-30"])
async def test_out_of_range_days_are_400_not_500(api, day: str) -> None:
    status, body = await api.post(
        "/api/notes", {"url": "https://example.com/d", "title": "t", "text": "x", "valid_day": day}
    )
    assert status == 400 and body["error"]["field"] == "body.valid_day"
    assert await api.store.fetchall("SELECT * FROM facts") == []
