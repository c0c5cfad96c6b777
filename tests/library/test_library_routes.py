"""The library over HTTP: both lanes, one pipeline, one shape; de-duplication; the read and
delete routes; refusals that write nothing. add_url fetches from a local test site, which needs
`allow_private_fetch` (tests only); tests/library/test_library_fetch.py proves the refusals without it."""

from __future__ import annotations

from unittest.mock import ANY

import pytest

from server import appkeys
from server.library import queries
from server.library.chunking import chunk_text
from tests.conftest import Api
from tests.library.routes_support import (
    ARTICLE_TEXT,
    FALLBACK_PAGE,
    PARAS,
    Site,
    article,
    chunk_rows,
    post_big,
    table_counts,
)
from tests.library.routes_support import settings as settings  # noqa: F401  (the fixture: add_url may reach the local site)

# --- both lanes --------------------------------------------------------------------------


async def test_both_lanes_store_the_same_shape(api: Api, site: Site) -> None:
    url = site.page("/walnut", article())
    s1, a1 = await api.post("/api/library/add_url", {"url": url})
    assert s1 == 201, a1
    s2, a2 = await api.post(
        "/api/library/add_text", {"url": site.base + "/walnut-tab", "title": "Walnut lantern", "html": article()}
    )
    assert s2 == 201, a2
    d1, d2 = a1["document"], a2["document"]
    assert set(d1) == set(d2)
    assert a1["outcome"] == a2["outcome"] == "saved"
    for d in (d1, d2):
        assert d["kind"] == "document" and d["title"] == "Walnut lantern"
        assert d["author"] == "Ada Lovelace" and d["language"] == "en" and d["extractor"] == "trafilatura"
        assert d["age"] == {"label": "just now", "granularity": "instant", "at": ANY}
        assert d["chunks"] >= 2 and d["source_host"] == "127.0.0.1"
    assert (d1["lane"], d2["lane"]) == ("url", "text")
    full1 = (await api.get(f"/api/library/{d1['id']}"))[1]["document"]["text"]
    full2 = (await api.get(f"/api/library/{d2['id']}"))[1]["document"]["text"]
    assert full1 == full2
    assert "Home" not in full1 and "Copyright footer" not in full1
    assert "Paragraph 0 of the walnut lantern" in full1 and "Paragraph 11" in full1


async def test_add_text_with_plain_text_skips_extraction(api: Api) -> None:
    status, answer = await api.post(
        "/api/library/add_text", {"url": "https://example.org/notes", "title": "Plain", "text": ARTICLE_TEXT}
    )
    assert status == 201, answer
    doc = answer["document"]
    assert doc["extractor"] == "text" and doc["chunks"] == len(chunk_text(ARTICLE_TEXT))
    full = (await api.get(f"/api/library/{doc['id']}"))[1]["document"]
    assert full["text"] == ARTICLE_TEXT


async def test_every_chunk_carries_the_documents_stamp(api: Api) -> None:
    messy = "HTTPS://Example.ORG:443/guide/?utm_source=news&b=2&a=1#part"
    status, answer = await api.post(
        "/api/library/add_text", {"url": messy, "title": "  The guide ", "text": ARTICLE_TEXT}
    )
    assert status == 201
    doc = answer["document"]
    assert doc["source_url"] == "https://example.org/guide?a=1&b=2"
    assert doc["source_host"] == "example.org" and doc["source_ref"] == "The guide"
    assert doc["given_url"] == messy
    rows = await chunk_rows(api, doc["id"])
    assert len(rows) == doc["chunks"] >= 3
    for r in rows:
        assert (r["source_url"], r["source_host"], r["source_ref"]) == (doc["source_url"], "example.org", "The guide")
    assert [r["text"] for r in rows] == chunk_text(ARTICLE_TEXT)


async def test_canonical_url_is_kept_beside_the_given_url(api: Api, site: Site) -> None:
    url = site.page("/amp/walnut", article(canonical="/walnut"))
    status, answer = await api.post("/api/library/add_url", {"url": url})
    assert status == 201, answer
    doc = answer["document"]
    assert doc["source_url"] == url and doc["canonical_url"] == site.base + "/walnut"
    # the canonical URL does not become a second identity: saving it is another document
    assert await queries.documents_for_page(api.store, site.base + "/walnut") == []


async def test_fallback_when_trafilatura_finds_nothing(api: Api) -> None:
    import trafilatura

    assert not trafilatura.extract(FALLBACK_PAGE)  # the premise of this test
    status, answer = await api.post(
        "/api/library/add_text", {"url": "https://example.net/quince", "title": "Quinces", "html": FALLBACK_PAGE}
    )
    assert status == 201, answer
    doc = answer["document"]
    assert doc["extractor"] == "fallback" and doc["title"] == "Quinces"
    full = (await api.get(f"/api/library/{doc['id']}"))[1]["document"]["text"]
    assert full == "Quince orchards\nQuince orchards grow in the valley.\nThey flower in May."


# --- the same page twice -----------------------------------------------------------------


@pytest.mark.parametrize(
    "variant",
    [
        "HTTPS://EXAMPLE.COM/Page",  # case of scheme and host
        "https://example.com:443/Page",  # default port
        "https://example.com/Page#section-2",  # fragment
        "https://example.com/Page?utm_source=x&fbclid=y",  # tracking parameters
        "https://example.com/Page/",  # trailing slash
    ],
)
async def test_same_page_twice_returns_the_existing_document(api: Api, variant: str) -> None:
    s1, a1 = await api.post(
        "/api/library/add_text", {"url": "https://example.com/Page", "title": "P", "text": ARTICLE_TEXT}
    )
    s2, a2 = await api.post("/api/library/add_text", {"url": variant, "title": "P", "text": ARTICLE_TEXT})
    assert (s1, s2) == (201, 200)
    assert a2["document"]["id"] == a1["document"]["id"] and a2["outcome"] == "unchanged"
    assert (await table_counts(api))["documents"] == 1
    assert (await table_counts(api))["activity"] == 1  # unchanged: nothing written


async def test_same_page_with_new_text_is_updated_in_place(api: Api) -> None:
    url = "https://example.com/changing"
    s1, a1 = await api.post("/api/library/add_text", {"url": url, "title": "v1", "text": ARTICLE_TEXT})
    new_text = "A rewritten page about quinces.\n" + ARTICLE_TEXT[:900]
    s2, a2 = await api.post("/api/library/add_text", {"url": url + "/", "title": "v2", "text": new_text})
    assert (s1, s2) == (201, 200) and a2["outcome"] == "updated"
    doc_id = a1["document"]["id"]
    assert a2["document"]["id"] == doc_id and a2["document"]["title"] == "v2"
    rows = await chunk_rows(api, doc_id)
    assert [r["text"] for r in rows] == chunk_text(new_text)
    assert all(r["source_ref"] == "v2" for r in rows)
    counts = await table_counts(api)
    assert counts["document_chunks"] == counts["document_chunks_fts"] == len(rows)
    hits = await queries.search_chunks(api.store, '"quince"', 10)
    assert [h["id"] for h in hits] == [doc_id]


async def test_a_failed_refetch_keeps_the_good_document(api: Api, site: Site) -> None:
    url = site.page("/stable", article())
    s1, a1 = await api.post("/api/library/add_url", {"url": url})
    assert s1 == 201
    before = await table_counts(api)
    site.page("/stable", "gone", status=500)
    s2, a2 = await api.post("/api/library/add_url", {"url": url})
    assert s2 == 502 and a2["error"]["code"] == "upstream" and "500" in a2["error"]["message"]
    site.page("/stable", "<html><body></body></html>")
    s3, a3 = await api.post("/api/library/add_url", {"url": url})
    assert s3 == 422 and a3["error"]["code"] == "no_text"
    assert await table_counts(api) == before
    s4, a4 = await api.get(f"/api/library/{a1['document']['id']}")
    assert s4 == 200 and "Paragraph 11" in a4["document"]["text"]


# --- readers ------------------------------------------------------------------------------


async def test_documents_for_page_returns_each_document_once(api: Api) -> None:
    long_text = "\n".join(PARAS * 8)
    status, answer = await api.post(
        "/api/library/add_text", {"url": "https://example.com/long", "title": "Long", "text": long_text}
    )
    assert status == 201 and answer["document"]["chunks"] >= 10
    docs = await queries.documents_for_page(api.store, "https://EXAMPLE.com/long/#top")
    assert len(docs) == 1
    d = docs[0]
    assert d["chunks"] == answer["document"]["chunks"] and d["kind"] == "document"
    assert len(d["text"]) <= queries.EXCERPT_CHARS
    assert {"id", "title", "text", "source_url", "source_host", "source_ref", "age", "chunks"} <= set(d)
    hits = await queries.search_chunks(api.store, '"walnut" "lantern"', 10)
    assert len(hits) == 1 and hits[0]["kind"] == "document" and hits[0]["source_url"] == "https://example.com/long"


async def test_count_for_host_covers_subdomains_on_whole_labels(api: Api) -> None:
    for url in ("https://example.com/a", "https://blog.example.com/b", "https://notexample.com/c"):
        status, _ = await api.post("/api/library/add_text", {"url": url, "title": "t", "text": ARTICLE_TEXT})
        assert status == 201
    assert await queries.count_for_host(api.store, "example.com") == 2
    assert await queries.count_for_host(api.store, "blog.example.com") == 1
    assert await queries.count_for_host(api.store, "notexample.com") == 1
    assert await queries.count_for_host(api.store, "ample.com") == 0


async def test_list_get_delete(api: Api) -> None:
    ids = []
    for i in range(3):
        status, answer = await api.post(
            "/api/library/add_text", {"url": f"https://example.com/{i}", "title": f"Doc {i}", "text": ARTICLE_TEXT}
        )
        assert status == 201
        ids.append(answer["document"]["id"])
    status, listing = await api.get("/api/library", params={"limit": 2})
    assert status == 200 and [d["id"] for d in listing["documents"]] == ids[::-1][:2]
    assert all(len(d["text"]) <= queries.EXCERPT_CHARS for d in listing["documents"])
    assert (await api.get("/api/library/abc"))[0] == 400
    assert (await api.get("/api/library/999"))[0] == 404
    status, one = await api.get(f"/api/library/{ids[0]}")
    assert status == 200 and one["document"]["text"] == ARTICLE_TEXT
    # deleting removes the document, its chunks, their FTS rows, and drops the probe cache entry
    cache = api.app[appkeys.PROBE_CACHE]
    cache.put("https://example.com/0", "example.com", {"green": True})
    status, removed = await api.delete(f"/api/library/{ids[0]}")
    assert status == 200 and removed["removed"] is True
    assert cache.get("https://example.com/0") is None
    assert (await api.get(f"/api/library/{ids[0]}"))[0] == 404
    assert (await api.delete(f"/api/library/{ids[0]}"))[0] == 404
    n = len(chunk_text(ARTICLE_TEXT))
    counts = await table_counts(api)
    assert counts["documents"] == 2 and counts["document_chunks"] == counts["document_chunks_fts"] == 2 * n
    kinds = [r[0] for r in await api.store.fetchall("SELECT kind FROM activity ORDER BY id")]
    assert kinds.count("document") == 3 and kinds[-1] == "document_removed"


async def test_caps_count_characters_not_bytes(api: Api) -> None:
    # 1,000,000 two-byte characters: 2 MB of UTF-8, at the text cap, accepted
    text = ("é" * 99 + " ") * 10_000
    status, answer = await post_big(
        api, "/api/library/add_text", {"url": "https://example.com/e", "title": "é", "text": text}
    )
    assert status == 201, answer
    assert answer["document"]["chars"] == len(text.strip())


# --- everywhere else: page match, probe, search, forget -----------------------------------


async def test_a_saved_document_appears_once_in_page_match_probe_and_search(api: Api) -> None:
    url = "https://example.com/walnut"
    long_text = "\n".join(PARAS * 6)
    status, answer = await api.post("/api/library/add_text", {"url": url, "title": "Walnut", "text": long_text})
    assert status == 201 and answer["document"]["chunks"] > 5
    doc_id = answer["document"]["id"]
    assert (await api.get("/api/page-probe", params={"url": url}))[1]["documents"] == 1  # cached now
    status, match = await api.get("/api/page-match", params={"url": url + "#x", "title": "walnut lantern"})
    assert status == 200
    tiers = match["tiers"]
    assert [d["id"] for d in tiers["documents"]] == [doc_id]
    assert tiers["exact"] == [] and tiers["site"] == [] and tiers["related"] == []  # chunks are never facts
    status, found = await api.get("/api/search", params={"q": "walnut lantern provenance"})
    assert status == 200
    docs = [r for r in found["results"] if r["kind"] == "document"]
    assert len(docs) == 1 and docs[0]["source_url"] == url
    # forget counts the document and keeps it
    status, dry = await api.post("/api/forget", {"host": "example.com", "dry_run": True})
    assert status == 200 and dry["documents"] == 1
    # delete: the probe (cached above) turns at once
    assert (await api.delete(f"/api/library/{doc_id}"))[0] == 200
    status, probe = await api.get("/api/page-probe", params={"url": url})
    assert status == 200 and probe["documents"] == 0 and probe["green"] is False
    status, found = await api.get("/api/search", params={"q": "walnut lantern provenance"})
    assert [r for r in found["results"] if r["kind"] == "document"] == []


async def test_saving_turns_a_cached_probe_green(api: Api) -> None:
    url = "https://example.com/fresh"
    status, probe = await api.get("/api/page-probe", params={"url": url})
    assert status == 200 and probe["green"] is False
    assert (await api.post("/api/library/add_text", {"url": url, "title": "t", "text": ARTICLE_TEXT}))[0] == 201
    status, probe = await api.get("/api/page-probe", params={"url": url + "/"})
    assert probe["green"] is True and probe["documents"] == 1
