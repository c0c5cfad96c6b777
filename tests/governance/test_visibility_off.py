"""`off` means never read and never shown: a site turned off after things were stored from it
hides them from every reader at once (page match in all tiers, probe, search, conversations,
library list and document, activity); turned back to collect, they are all there again.
Everything runs against the real server on a real port."""

from __future__ import annotations

from typing import Any

from tests.conftest import Api

OFF_HOST = "offlater.example"
PAGE = f"https://{OFF_HOST}/walnut"
SUB_PAGE = f"https://www.{OFF_HOST}/lantern"
CHAT = f"https://{OFF_HOST}/chat/1"
DOC = f"https://{OFF_HOST}/saved"
OTHER = "https://other.example/reading"
WORD = "quillwort"  # in every item from offlater.example, and in the other page's title
OTHER_WORD = "bracken"  # only in the control note of other.example


async def ok(api: Api, method: str, path: str, **kw: Any) -> Any:
    status, body = await api.call(method, path, **kw)
    assert status in (200, 201), (path, status, body)
    return body


async def seed(api: Api) -> int:
    await ok(api, "POST", "/api/notes", json={"url": PAGE, "title": "Walnut", "text": f"{WORD} note on the page"})
    await ok(api, "POST", "/api/notes", json={"url": SUB_PAGE, "title": "Lantern", "text": f"{WORD} from a subdomain"})
    await ok(
        api,
        "POST",
        "/api/captures",
        json={
            "url": CHAT,
            "title": "A chat",
            "site": "x",
            "turns": [
                {"role": "user", "text": f"tell me about {WORD}"},
                {"role": "assistant", "text": f"{WORD} is a fern ally"},
            ],
        },
    )
    doc = await ok(
        api,
        "POST",
        "/api/library/add_text",
        json={"url": DOC, "title": f"{WORD} handbook", "text": f"The {WORD} handbook. " * 40},
    )
    await ok(api, "POST", "/api/notes", json={"url": OTHER, "title": "Other", "text": f"{OTHER_WORD} control note"})
    return int(doc["document"]["id"])


async def seen(api: Api, doc_id: int) -> dict[str, Any]:
    """What every reader shows of offlater.example (and of the control page)."""
    match = await ok(api, "GET", "/api/page-match", params={"url": PAGE, "title": "Walnut"})
    sub_match = await ok(api, "GET", "/api/page-match", params={"url": SUB_PAGE, "title": "Lantern"})
    doc_match = await ok(api, "GET", "/api/page-match", params={"url": DOC, "title": "Handbook"})
    other = await ok(api, "GET", "/api/page-match", params={"url": OTHER, "title": f"All about {WORD}"})
    probe = await ok(api, "GET", "/api/page-probe", params={"url": PAGE})
    doc_probe = await ok(api, "GET", "/api/page-probe", params={"url": DOC})
    search = await ok(api, "GET", "/api/search", params={"q": WORD})
    control = await ok(api, "GET", "/api/search", params={"q": OTHER_WORD})
    conv = await ok(api, "GET", "/api/conversations", params={"url": CHAT})
    library = await ok(api, "GET", "/api/library")
    doc_status, _ = await api.get(f"/api/library/{doc_id}")
    activity = await ok(api, "GET", "/api/activity", params={"limit": 500})
    tiers = match["tiers"]
    return {
        "exact": len(tiers["exact"]) + len(sub_match["tiers"]["exact"]),
        "site": len(tiers["site"]) + len(sub_match["tiers"]["site"]),
        "documents": len(doc_match["tiers"]["documents"]),
        "related": [r["source_host"] for r in other["tiers"]["related"]],
        "probe": (probe["exact"], doc_probe["documents"]),
        "search": sorted({r["source_host"] for r in search["results"]}),
        "control": [r["source_host"] for r in control["results"]],
        "turns": len(conv["turns"]),
        "library": [d["source_host"] for d in library["documents"]],
        "document": doc_status,
        "activity_urls": sorted({a["source_url"] for a in activity["activity"] if a["source_url"]}),
        "activity_text": [a["summary"] for a in activity["activity"] if WORD in a["summary"]],
    }


async def test_off_hides_every_item_of_the_site_and_collect_shows_them_again(api: Api) -> None:
    doc_id = await seed(api)
    before = await seen(api, doc_id)
    # positive control: every reader shows what was stored (so "nothing" below means hidden)
    assert before["exact"] == 2 and before["site"] >= 1 and before["documents"] == 1
    assert before["related"] and set(before["related"]) <= {OFF_HOST, f"www.{OFF_HOST}"}
    assert before["probe"] == (1, 1)
    assert {OFF_HOST, f"www.{OFF_HOST}"} <= set(before["search"])
    assert before["turns"] == 2 and before["library"] == [OFF_HOST] and before["document"] == 200
    assert {PAGE, SUB_PAGE, CHAT, DOC} <= set(before["activity_urls"]) and before["activity_text"]

    await ok(api, "PUT", "/api/site-mode", json={"host": OFF_HOST, "mode": "off"})
    after = await seen(api, doc_id)
    assert after["exact"] == after["site"] == after["documents"] == 0
    assert after["related"] == []  # not even from another site's page
    assert after["probe"] == (0, 0)
    # (search also answers the nearest items by meaning: another site's note may come back, never the off site's)
    assert not {OFF_HOST, f"www.{OFF_HOST}"} & set(after["search"])
    assert after["turns"] == 0
    assert after["library"] == [] and after["document"] == 404
    assert after["activity_urls"] == [OTHER] and after["activity_text"] == []
    assert after["control"] == ["other.example"]  # the rule hides one site, not everything
    # the person's own rule change stays in the log (a host, no page)
    _, log = await api.get("/api/activity")
    assert any(a["kind"] == "rule" and a["source_host"] == OFF_HOST for a in log["activity"])
    # hidden, not deleted: the rows are all still stored
    (n,) = await api.store.fetchone("SELECT COUNT(*) FROM facts WHERE source_host LIKE '%offlater.example'")  # type: ignore[misc]
    assert n == 4

    await ok(api, "PUT", "/api/site-mode", json={"host": OFF_HOST, "mode": "collect"})
    assert await seen(api, doc_id) == before


async def test_suggest_still_shows_and_a_subdomain_rule_hides_only_the_subdomain(api: Api) -> None:
    doc_id = await seed(api)
    before = await seen(api, doc_id)
    await ok(api, "PUT", "/api/site-mode", json={"host": OFF_HOST, "mode": "suggest"})
    assert await seen(api, doc_id) == before
    await ok(api, "PUT", "/api/site-mode", json={"host": f"www.{OFF_HOST}", "mode": "off"})
    after = await seen(api, doc_id)
    assert after["search"] == [OFF_HOST]
    assert SUB_PAGE not in after["activity_urls"] and PAGE in after["activity_urls"]
    assert after["library"] == [OFF_HOST]


async def test_a_deleted_rule_falls_back_to_the_sensitive_default(api: Api) -> None:
    """A host shown only because a rule opened it is hidden again when the rule goes."""
    host = "login.offlater.example"  # a sign-in host: off by default
    await ok(api, "PUT", "/api/site-mode", json={"host": host, "mode": "collect"})
    await ok(api, "POST", "/api/notes", json={"url": f"https://{host}/x", "title": "t", "text": f"{WORD} sign-in note"})
    body = await ok(api, "GET", "/api/search", params={"q": WORD})
    assert [r["source_host"] for r in body["results"]] == [host]
    await ok(api, "DELETE", "/api/site-mode", params={"host": host})
    body = await ok(api, "GET", "/api/search", params={"q": WORD})
    assert body["results"] == []


async def test_another_process_reading_the_store_follows_the_rule(api: Api) -> None:
    """A reader outside the server app (CLI, MCP) opens the store, is governed by the same rule,
    and sees a rule edit made by the server after refresh()."""
    from server.governance import visibility
    from server.memory import search
    from server.store.db import Store

    await seed(api)
    other = await Store.open(api.store.path)
    try:
        owner = await visibility.govern(other)
        hosts = {r["source_host"] for r in (await search.search(other, WORD, 20))["results"]}
        assert hosts == {OFF_HOST, f"www.{OFF_HOST}"}
        await ok(api, "PUT", "/api/site-mode", json={"host": OFF_HOST, "mode": "off"})
        await owner.refresh()
        assert (await search.search(other, WORD, 20))["results"] == []
        await ok(api, "PUT", "/api/site-mode", json={"host": OFF_HOST, "mode": "suggest"})
        await owner.refresh()
        assert len((await search.search(other, WORD, 20))["results"]) == 5  # 2 notes, 2 turns, 1 document
    finally:
        await other.close()
