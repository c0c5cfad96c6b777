"""The activity log: a row for every write, newest first, with provenance and age."""

from __future__ import annotations

from tests.conftest import Api


async def test_a_row_for_every_write_newest_first(api: Api) -> None:
    await api.post("/api/notes", {"url": "https://a.example/1", "title": "t", "text": "n"})
    await api.post("/api/clips", {"url": "https://a.example/2", "title": "t", "text": "c"})
    await api.post(
        "/api/captures",
        {"url": "https://chatgpt.com/c/1", "title": "t", "site": "chatgpt", "turns": [{"role": "user", "text": "q"}]},
    )
    await api.put("/api/site-mode", {"host": "b.example", "mode": "off"})
    _, dry = await api.post("/api/forget", {"host": "a.example", "dry_run": True})
    _, done = await api.post("/api/forget", {"host": "a.example", "confirm": dry["confirm"]})
    await api.post("/api/forget/undo", {"batch": done["batch"]})
    status, body = await api.get("/api/activity")
    assert status == 200
    rows = body["activity"]
    assert [r["kind"] for r in rows] == ["undo", "forget", "rule", "capture", "clip", "note"]
    assert all(set(r) >= {"at", "kind", "summary", "source_url", "source_host", "age"} for r in rows)
    assert rows[-1]["source_url"] == "https://a.example/1" and rows[-1]["source_host"] == "a.example"
    assert rows[0]["age"]["granularity"] == "instant"
    ats = [r["at"] for r in rows]
    assert ats == sorted(ats, reverse=True)


async def test_refused_writes_leave_no_activity(api: Api) -> None:
    await api.put("/api/site-mode", {"host": "b.example", "mode": "suggest"})
    _, before = await api.get("/api/activity")
    status, _ = await api.post("/api/notes", {"url": "https://b.example/1", "title": "t", "text": "n"})
    assert status == 403
    _, after = await api.get("/api/activity")
    assert after == before


async def test_limit(api: Api) -> None:
    for i in range(5):
        await api.post("/api/notes", {"url": f"https://a.example/{i}", "title": "t", "text": f"n{i}"})
    _, body = await api.get("/api/activity", params={"limit": 2})
    assert len(body["activity"]) == 2 and "n4" in body["activity"][0]["summary"]
    status, _ = await api.get("/api/activity", params={"limit": 0})
    assert status == 400
