"""Page match (four tiers) and the probe: what each tier holds, green, the cache and its
invalidation, and `off` answered without the store."""

from __future__ import annotations

import time
from typing import Any

import pytest

from server import ages, appkeys
from server.memory.facts import insert_fact
from server.memory.pagematch import strip_site_name
from server.provenance import stamp
from tests.conftest import Api
from tests.memory.test_memory_writes import set_mode

PAGE = "https://en.wikipedia.org/wiki/Walnut"
LONG_TEXT = "\n\n".join(
    f"Section {i}. The walnut tree grows slowly and its timber is prized by furniture makers. " * 6 for i in range(60)
)


async def note(api: Api, url: str, text: str, title: str = "") -> int:
    status, body = await api.post("/api/notes", {"url": url, "title": title, "text": text})
    assert status == 201, body
    return int(body["id"])


async def add_document(api: Api, url: str, title: str, text: str) -> dict[str, Any]:
    status, body = await api.post("/api/library/add_text", {"url": url, "title": title, "text": text})
    assert status in (200, 201), body
    return dict(body["document"])


async def match(api: Api, url: str, title: str = "") -> dict[str, Any]:
    status, body = await api.get("/api/page-match", params={"url": url, "title": title})
    assert status == 200, body
    return dict(body)


async def probe(api: Api, url: str) -> dict[str, Any]:
    status, body = await api.get("/api/page-probe", params={"url": url})
    assert status == 200, body
    return dict(body)


def texts(items: list[dict[str, Any]]) -> set[str]:
    return {i["text"] for i in items}


async def test_four_tiers(api: Api) -> None:
    await note(api, PAGE, "exact: walnuts are drupes")
    await note(api, PAGE + "?utm_campaign=z#History", "exact too, same page normalised")
    await note(api, "https://en.wikipedia.org/wiki/Hazel", "site: hazel is another nut")
    await note(api, "https://nuts.example/juglans", "related: juglans regia is the common walnut tree", title="Juglans")
    await note(api, "https://other.example/x", "unrelated: sourdough starter")
    await add_document(api, PAGE, "Walnut - Wikipedia", LONG_TEXT)
    body = await match(api, PAGE, "Walnut tree - Wikipedia")
    tiers = body["tiers"]
    assert body["mode"] == "collect" and body["green"] is True
    assert texts(tiers["exact"]) == {"exact: walnuts are drupes", "exact too, same page normalised"}
    assert texts(tiers["site"]) == {"site: hazel is another nut"}
    assert texts(tiers["related"]) == {"related: juglans regia is the common walnut tree"}
    assert len(tiers["documents"]) == 1 and tiers["documents"][0]["kind"] == "document"
    for tier in ("exact", "site", "related"):
        for fact in tiers[tier]:
            assert fact["kind"] in ("note", "clip", "turn")
            assert set(fact) >= {"source_url", "source_host", "source_ref", "kind", "age", "text"}
            assert set(fact["age"]) == {"label", "granularity", "at"}


async def test_a_long_document_appears_once_and_never_as_chunks_in_fact_tiers(api: Api) -> None:
    await note(api, PAGE, "my one clip")
    await add_document(api, PAGE, "Walnut - Wikipedia", LONG_TEXT)
    await add_document(api, PAGE + "#again", "Walnut - Wikipedia", LONG_TEXT)  # the same page saved twice
    await add_document(api, "https://en.wikipedia.org/wiki/Walnut_oil", "Walnut oil", LONG_TEXT)
    tiers = (await match(api, PAGE, "Walnut - Wikipedia"))["tiers"]
    assert texts(tiers["exact"]) == {"my one clip"}
    assert tiers["site"] == [] and tiers["related"] == []
    assert [d["source_url"] for d in tiers["documents"]] == [PAGE]
    for tier in ("exact", "site", "related"):
        assert all(f["kind"] != "document" and "Section" not in f["text"] for f in tiers[tier])


async def test_green_is_exact_or_documents_nothing_weaker(api: Api) -> None:
    await note(api, "https://en.wikipedia.org/wiki/Hazel", "same site only")
    await note(api, "https://nuts.example/w", "walnut walnut walnut")
    body = await match(api, PAGE, "Walnut")
    assert body["tiers"]["site"] and body["tiers"]["related"] and body["green"] is False
    assert (await probe(api, PAGE)) == {"mode": "collect", "green": False, "exact": 0, "documents": 0}
    await add_document(api, PAGE, "Walnut", LONG_TEXT)
    assert (await probe(api, PAGE))["green"] is True  # document saves invalidate (library's part)
    assert (await match(api, PAGE, "Walnut"))["green"] is True


async def test_suggest_reads_normally(api: Api) -> None:
    await note(api, PAGE, "kept before the rule")
    await set_mode(api, "wikipedia.org", "suggest")
    body = await match(api, PAGE, "")
    assert body["mode"] == "suggest" and body["green"] is True and len(body["tiers"]["exact"]) == 1
    assert (await probe(api, PAGE))["exact"] == 1


class _Unreadable:
    """Stands in for the database connection: every use raises."""

    def __getattr__(self, name: str) -> Any:
        raise RuntimeError(f"the store was touched ({name})")


async def test_off_host_is_answered_without_touching_the_store(api: Api) -> None:
    await note(api, PAGE, "a fact from before the rule")
    await note(api, "https://open.example/a", "a fact on an open host")
    await set_mode(api, "wikipedia.org", "off")
    assert (await api.get("/api/policy"))[0] == 200  # the policy snapshot is in memory now
    real, real_readers = api.store.conn, api.store.readers
    api.store.conn = _Unreadable()  # type: ignore[assignment]
    api.store.readers = [_Unreadable() for _ in real_readers]  # type: ignore[misc]
    try:
        for _ in range(2):  # the probe's cache must not be what answers either
            body = await match(api, PAGE, "Walnut")
            assert body == {
                "mode": "off",
                "green": False,
                "tiers": {"exact": [], "site": [], "related": [], "documents": []},
            }
            assert await probe(api, PAGE) == {"mode": "off", "green": False, "exact": 0, "documents": 0}
            assert (await probe(api, "https://www.wikipedia.org/"))["mode"] == "off"  # subdomain of the rule
        # control: a collect host needs the store, so with it unreadable it cannot answer
        status, _ = await api.get("/api/page-match", params={"url": "https://open.example/a", "title": ""})
        assert status == 500
        status, _ = await api.get("/api/page-probe", params={"url": "https://open.example/b"})
        assert status == 500
    finally:
        api.store.conn, api.store.readers = real, real_readers
    assert (await match(api, "https://open.example/a"))["green"] is True


async def test_off_after_a_cached_probe_answers_off_at_once(api: Api) -> None:
    await note(api, PAGE, "x")
    assert (await probe(api, PAGE))["green"] is True
    await set_mode(api, "en.wikipedia.org", "off")
    assert await probe(api, PAGE) == {"mode": "off", "green": False, "exact": 0, "documents": 0}


async def test_probe_is_cached_for_the_page(api: Api) -> None:
    assert (await probe(api, PAGE))["exact"] == 0
    # a write that bypasses the routes (so nothing invalidates): the cached answer stands
    async with api.store.transaction() as conn:
        await insert_fact(
            conn,
            stamp(PAGE, "t"),
            kind="note",
            title="t",
            text="sneaked in",
            valid_at=time.time(),
            granularity=ages.INSTANT,
            now=time.time(),
        )
    assert (await probe(api, PAGE))["exact"] == 0
    assert (await probe(api, PAGE + "#frag"))["exact"] == 0  # same normalised page, same entry
    api.app[appkeys.PROBE_CACHE].clear()
    assert (await probe(api, PAGE))["exact"] == 1


async def _prime(api: Api, url: str) -> dict[str, Any]:
    return await probe(api, url)


async def test_note_and_clip_invalidate_the_probe(api: Api) -> None:
    assert (await _prime(api, PAGE))["exact"] == 0
    await note(api, PAGE, "one")
    assert (await probe(api, PAGE))["exact"] == 1
    status, _ = await api.post("/api/clips", {"url": PAGE, "title": "t", "text": "two"})
    assert status == 201
    assert (await probe(api, PAGE))["exact"] == 2


async def test_capture_invalidates_the_probe(api: Api) -> None:
    chat = "https://claude.ai/chat/1"
    assert (await _prime(api, chat))["exact"] == 0
    await api.post(
        "/api/captures", {"url": chat, "title": "t", "site": "claude", "turns": [{"role": "user", "text": "hi"}]}
    )
    assert (await probe(api, chat)) == {"mode": "collect", "green": True, "exact": 1, "documents": 0}


async def test_forget_and_undo_invalidate_the_probe_for_the_host_and_subdomains(api: Api) -> None:
    sub = "https://de.wikipedia.org/wiki/Walnuss"
    await note(api, PAGE, "one")
    await note(api, sub, "eins")
    assert (await probe(api, PAGE))["exact"] == 1 and (await probe(api, sub))["exact"] == 1
    _, dry = await api.post("/api/forget", {"host": "wikipedia.org", "dry_run": True})
    _, done = await api.post("/api/forget", {"host": "wikipedia.org", "confirm": dry["confirm"]})
    assert (await probe(api, PAGE))["exact"] == 0 and (await probe(api, sub))["exact"] == 0
    await api.post("/api/forget/undo", {"batch": done["batch"]})
    assert (await probe(api, PAGE))["exact"] == 1 and (await probe(api, sub))["exact"] == 1


async def test_page_match_honours_forget_in_every_tier(api: Api) -> None:
    await note(api, PAGE, "exact walnut")
    await note(api, "https://en.wikipedia.org/wiki/Hazel", "site hazel")
    await note(api, "https://nuts.example/j", "related walnut")
    for host in ("wikipedia.org", "nuts.example"):
        _, dry = await api.post("/api/forget", {"host": host, "dry_run": True})
        await api.post("/api/forget", {"host": host, "confirm": dry["confirm"]})
    tiers = (await match(api, PAGE, "Walnut"))["tiers"]
    assert tiers == {"exact": [], "site": [], "related": [], "documents": []}


@pytest.mark.parametrize("path", ["/api/page-match", "/api/page-probe"])
@pytest.mark.parametrize("url", ["javascript:alert(1)", "file:///x", "chrome://newtab", "nonsense"])
async def test_non_web_pages_are_400(api: Api, path: str, url: str) -> None:
    status, body = await api.get(path, params={"url": url})
    assert status == 400 and body["error"]["code"] == "bad_url"


@pytest.mark.parametrize("path", ["/api/page-match", "/api/page-probe"])
async def test_url_is_required(api: Api, path: str) -> None:
    status, body = await api.get(path)
    assert status == 400 and body["error"]["code"] == "missing_field"


async def test_site_tier_is_newest_first_and_capped(api: Api) -> None:
    for i in range(25):
        await note(api, f"https://en.wikipedia.org/wiki/P{i}", f"fact {i}")
    site = (await match(api, PAGE))["tiers"]["site"]
    assert [f["text"] for f in site] == [f"fact {i}" for i in range(24, 4, -1)]


@pytest.mark.parametrize(
    "title,expected",
    [
        ("Walnut - Wikipedia", "Walnut"),
        ("Issues · owner/repo · GitHub", "Issues · owner/repo"),
        ("python - How do I x? - Stack Overflow", "python - How do I x?"),
        ("Plain title", "Plain title"),
        (" - Wikipedia", "- Wikipedia"),
        ("", ""),
    ],
)
def test_the_site_name_is_not_what_a_page_is_about(title: str, expected: str) -> None:
    assert strip_site_name(title) == expected
