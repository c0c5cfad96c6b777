"""Forget and the saved pages of a site: the dry run names them, the person chooses to keep or
forget them, forgetting them hides them from every reader (search, page match, probe, library,
export) through the one visibility rule, and undo brings them back. On the wire, read back."""

from __future__ import annotations

from typing import Any

from tests.conftest import Api
from tests.memory.test_memory_pagematch import add_document, match, note
from tests.memory.test_memory_writes import snapshot

WALNUT = "\n".join(f"Paragraph {i}: the walnut lantern article explains grafting and pruning." for i in range(40))
PAGE = "https://blog.example.com/walnut"
OTHER = "https://notexample.com/walnut"  # not a subdomain: never touched


async def seed(api: Api) -> dict[str, Any]:
    await note(api, "https://example.com/a", "a note about walnut trees")
    doc = await add_document(api, PAGE, "Walnut lantern", WALNUT)
    await add_document(api, OTHER, "Walnut elsewhere", WALNUT)
    return doc


async def dry(api: Api, host: str = "example.com") -> dict[str, Any]:
    status, body = await api.post("/api/forget", {"host": host, "dry_run": True})
    assert status == 200, body
    return dict(body)


async def seen(api: Api, doc_id: int) -> dict[str, bool]:
    """Where the saved page shows, reader by reader."""
    _, found = await api.get("/api/search", params={"q": "walnut lantern grafting"})
    _, tiers = await api.get("/api/page-match", params={"url": PAGE, "title": "walnut"})
    _, probe = await api.get("/api/page-probe", params={"url": PAGE})
    _, library = await api.get("/api/library")
    status_one, _ = await api.get(f"/api/library/{doc_id}")
    _, export = await api.get("/api/export", params={"kind": "documents"})
    return {
        "search": any(r["kind"] == "document" and r["source_url"] == PAGE for r in found["results"]),
        "page_match": any(d["id"] == doc_id for d in tiers["tiers"]["documents"]),
        "probe": probe["documents"] == 1,
        "library": any(d["id"] == doc_id for d in library["documents"]),
        "get": status_one == 200,
        "export": any(d["url"] == PAGE for d in export["items"]),
    }


EVERYWHERE = dict.fromkeys(("search", "page_match", "probe", "library", "get", "export"), True)
NOWHERE = dict.fromkeys(EVERYWHERE, False)


async def test_the_dry_run_names_the_saved_pages_and_changes_nothing(api: Api) -> None:
    doc = await seed(api)
    before = await snapshot(api)
    body = await dry(api)
    assert (body["facts"], body["documents"]) == (1, 1)
    assert body["pages"] == [{"id": doc["id"], "title": "Walnut lantern", "url": PAGE}]
    assert await snapshot(api) == before


async def test_apply_without_a_choice_is_refused_and_keeps_the_confirmation(api: Api) -> None:
    await seed(api)
    body = await dry(api)
    before = await snapshot(api)
    status, refused = await api.post("/api/forget", {"host": "example.com", "confirm": body["confirm"]})
    assert status == 400 and refused["error"]["code"] == "missing_field", refused
    assert "1 saved library page" in refused["error"]["message"] and "documents" in refused["error"]["message"]
    assert await snapshot(api) == before
    # the same confirmation still works once the choice is made
    status, done = await api.post(
        "/api/forget", {"host": "example.com", "confirm": body["confirm"], "documents": "keep"}
    )
    assert status == 200, done


async def test_a_host_without_saved_pages_needs_no_choice(api: Api) -> None:
    await note(api, "https://nopages.example/a", "just a note")
    body = await dry(api, "nopages.example")
    assert body["documents"] == 0 and body["pages"] == []
    status, done = await api.post("/api/forget", {"host": "nopages.example", "confirm": body["confirm"]})
    assert status == 200 and done["facts"] == 1 and done["documents_forgotten"] == 0


async def test_keep_leaves_the_saved_page_everywhere(api: Api) -> None:
    doc = await seed(api)
    assert await seen(api, doc["id"]) == EVERYWHERE  # positive control
    body = await dry(api)
    status, done = await api.post(
        "/api/forget", {"host": "example.com", "confirm": body["confirm"], "documents": "keep"}
    )
    assert status == 200
    assert (done["facts"], done["documents"], done["documents_forgotten"], done["documents_kept"]) == (1, 1, 0, 1)
    assert done["pages"] == body["pages"]
    assert await seen(api, doc["id"]) == EVERYWHERE
    _, found = await api.get("/api/search", params={"q": "walnut trees"})
    assert not any(r["kind"] == "note" for r in found["results"])  # the note went


async def test_forget_hides_the_saved_page_from_every_reader_and_undo_restores_it(api: Api) -> None:
    doc = await seed(api)
    assert await seen(api, doc["id"]) == EVERYWHERE
    body = await dry(api)
    status, done = await api.post(
        "/api/forget", {"host": "example.com", "confirm": body["confirm"], "documents": "forget"}
    )
    assert status == 200, done
    assert (done["documents_forgotten"], done["documents_kept"]) == (1, 0)
    assert await seen(api, doc["id"]) == NOWHERE
    # soft: the rows are still there, hidden; the page of another host is untouched
    rows = await api.store.fetchall("SELECT source_url, invalid_at FROM documents ORDER BY id")
    assert [(r["source_url"], r["invalid_at"] is not None) for r in rows] == [(PAGE, True), (OTHER, False)]
    chunks = await api.store.fetchall(
        "SELECT COUNT(*) AS n, SUM(invalid_at IS NULL) AS live FROM document_chunks WHERE source_url = ?", (PAGE,)
    )
    assert chunks[0]["n"] > 1 and chunks[0]["live"] == 0
    # the activity row that named the page is hidden with it; the forget row says what happened
    _, log = await api.get("/api/activity")
    kinds = [(a["kind"], a.get("source_url")) for a in log["activity"]]
    assert ("document", PAGE) not in kinds and ("document", OTHER) in kinds
    assert "1 library pages forgotten" in log["activity"][0]["summary"]
    # a second dry run finds nothing left to forget
    again = await dry(api)
    assert (again["facts"], again["documents"], again["pages"]) == (0, 0, [])

    status, undone = await api.post("/api/forget/undo", {"batch": done["batch"]})
    assert status == 200 and (undone["restored"], undone["documents"]) == (1, 1)
    assert await seen(api, doc["id"]) == EVERYWHERE
    _, log = await api.get("/api/activity")
    assert ("document", PAGE) in [(a["kind"], a.get("source_url")) for a in log["activity"]]


async def test_saving_a_forgotten_page_again_brings_it_back_outside_the_batch(api: Api) -> None:
    doc = await seed(api)
    body = await dry(api)
    _, done = await api.post("/api/forget", {"host": "example.com", "confirm": body["confirm"], "documents": "forget"})
    assert await seen(api, doc["id"]) == NOWHERE
    status, saved = await api.post("/api/library/add_text", {"url": PAGE, "title": "Walnut lantern", "text": WALNUT})
    assert status == 201 and saved["outcome"] == "saved" and saved["document"]["id"] == doc["id"]
    assert await seen(api, doc["id"]) == EVERYWHERE
    # undo of the old batch restores its note and leaves the page as it is
    _, undone = await api.post("/api/forget/undo", {"batch": done["batch"]})
    assert (undone["restored"], undone["documents"]) == (1, 0)
    assert await seen(api, doc["id"]) == EVERYWHERE


async def test_an_import_never_brings_a_forgotten_page_back(api: Api) -> None:
    doc = await seed(api)
    _, export = await api.get("/api/export", params={"kind": "documents"})
    item = next(d for d in export["items"] if d["url"] == PAGE)
    body = await dry(api)
    await api.post("/api/forget", {"host": "example.com", "confirm": body["confirm"], "documents": "forget"})
    newer = {**item, "updated_at": item["updated_at"] + 60, "text": item["text"] + "\nA newer paragraph."}
    status, answer = await api.post(
        "/api/import",
        {"import_id": "forgotten-page", "source": "wherefrom", "documents": [newer]},
    )
    assert status == 200, answer
    assert answer["documents"]["unchanged"] == 1
    assert await seen(api, doc["id"]) == NOWHERE


async def test_a_dry_run_takes_no_documents_choice(api: Api) -> None:
    await seed(api)
    before = await snapshot(api)
    status, body = await api.post("/api/forget", {"host": "example.com", "dry_run": True, "documents": "forget"})
    assert status == 400 and body["error"]["code"] == "bad_value"
    status, body = await api.post("/api/forget", {"host": "example.com", "confirm": "x", "documents": "maybe"})
    assert status == 400 and body["error"]["code"] == "bad_value"
    assert await snapshot(api) == before


async def test_page_match_of_the_page_itself_shows_nothing_after_forget(api: Api) -> None:
    doc = await seed(api)
    body = await dry(api)
    await api.post("/api/forget", {"host": "example.com", "confirm": body["confirm"], "documents": "forget"})
    tiers = (await match(api, PAGE, "walnut"))["tiers"]
    assert tiers["documents"] == [] and all(d["id"] != doc["id"] for t in tiers.values() for d in t)
