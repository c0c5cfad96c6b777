"""Forget covers the activity log: after a host is forgotten, /api/activity no longer shows its
notes' text or URLs (hidden in the forget's batch, like the facts); undo brings them back.
Documents are kept by forget, and so are their rows; the rule / forget rows stay."""

from __future__ import annotations

from typing import Any

from tests.conftest import Api

MARKER = "hazelnut-ledger-7731"


async def activity(api: Api) -> list[dict[str, Any]]:
    status, body = await api.get("/api/activity", params={"limit": 500})
    assert status == 200, body
    return list(body["activity"])


def mentions(rows: list[dict[str, Any]], needle: str) -> list[dict[str, Any]]:
    return [r for r in rows if needle in r["summary"] or needle in (r["source_url"] or "")]


async def test_forget_hides_the_activity_rows_of_its_notes_and_undo_restores_them(api: Api) -> None:
    for url, text in [
        ("https://forgetme.example/a", f"{MARKER} on the root"),
        ("https://deep.forgetme.example/b", f"{MARKER} on a subdomain"),
    ]:
        status, body = await api.post("/api/notes", {"url": url, "title": "t", "text": text})
        assert status == 201, body
    status, body = await api.post(
        "/api/captures",
        {
            "url": "https://forgetme.example/chat",
            "title": "c",
            "site": "x",
            "turns": [{"role": "user", "text": "hello"}],
        },
    )
    assert status == 200, body
    status, body = await api.post(
        "/api/library/add_text",
        {"url": "https://forgetme.example/doc", "title": "Doc", "text": "A document kept by forget. " * 30},
    )
    assert status == 201, body
    status, body = await api.post(
        "/api/notes", {"url": "https://notforgetme.example/c", "title": "t", "text": f"{MARKER} elsewhere"}
    )
    assert status == 201, body

    before = await activity(api)
    assert len(mentions(before, MARKER)) == 3  # positive control: the text is in the log
    assert len(mentions(before, "forgetme.example/chat")) == 1

    status, dry = await api.post("/api/forget", {"host": "forgetme.example", "dry_run": True})
    assert status == 200, dry
    status, done = await api.post("/api/forget", {"host": "forgetme.example", "confirm": dry["confirm"]})
    assert status == 200, done
    assert done["activity"] == 3  # two notes and the capture

    after = await activity(api)
    left = mentions(after, MARKER)
    assert [r["source_url"] for r in left] == ["https://notforgetme.example/c"]
    assert not [
        r
        for r in after
        if (r["source_url"] or "").startswith(("https://forgetme.example/chat", "https://deep.forgetme.example"))
    ]
    kinds = {r["kind"] for r in after if r["source_host"] == "forgetme.example"}
    assert kinds == {"document", "forget"}  # the kept document's row and the forget itself
    # soft: the rows are marked with the batch, not deleted
    rows = await api.store.fetchall("SELECT forget_batch FROM activity WHERE invalid_at IS NOT NULL")
    assert [r["forget_batch"] for r in rows] == [done["batch"]] * 3

    status, undone = await api.post("/api/forget/undo", {"batch": done["batch"]})
    assert status == 200, undone
    restored = await activity(api)
    assert len(mentions(restored, MARKER)) == 3
    assert {r["id"] for r in before} <= {r["id"] for r in restored}
