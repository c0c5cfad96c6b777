"""The library over HTTP: both lanes, one pipeline, one shape; de-duplication; the read and
delete routes; refusals that write nothing. add_url fetches from a local test site, which needs
`allow_private_fetch` (tests only); tests/library/test_library_fetch.py proves the refusals without it."""

from __future__ import annotations

import io
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from unittest.mock import ANY

import pytest
from aiohttp import web

from server import appkeys
from server.library import queries
from server.library.chunking import chunk_text
from server.settings import Settings
from tests.conftest import Api, free_port, local_site

PARAS = [
    f"Paragraph {i} of the walnut lantern article explains provenance, the axis memory systems forget. "
    + " ".join(["Each stored chunk knows where it came from, and the panel shows each document once."] * 3)
    for i in range(12)
]
ARTICLE_TEXT = "\n".join(PARAS)


def article(title: str = "Walnut lantern", canonical: str | None = None, paras: list[str] | None = None) -> str:
    link = f'<link rel="canonical" href="{canonical}">' if canonical else ""
    body = "".join(f"<p>{p}</p>" for p in (paras or PARAS))
    return (
        f'<!doctype html><html lang="en"><head><title>{title}</title>{link}'
        '<meta name="author" content="Ada Lovelace"></head><body>'
        '<nav><a href="/">Home</a> <a href="/about">About us</a></nav>'
        f"<main><article><h1>{title}</h1>{body}</article></main>"
        "<footer>Copyright footer text that is not content</footer></body></html>"
    )


# A page trafilatura returns nothing for: the kind of fragment an extension may post (a
# page's app root without <html>/<head>); trafilatura's loader rejects a one-child fragment
# as "not valid HTML", the BeautifulSoup fallback reads its <main> without the navigation.
FALLBACK_PAGE = (
    '<div id="app"><main><nav>Menu Home About</nav><h1>Quince orchards</h1>'
    "<p>Quince orchards grow in the valley.</p><p>They flower in May.</p></main></div>"
)


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(data_dir=tmp_path / "data", port=free_port(), allow_private_fetch=True)


class Site:
    """A local web site whose pages tests change between requests."""

    def __init__(self) -> None:
        self.pages: dict[str, tuple[int, str, bytes, dict[str, str]]] = {}
        self.base = ""
        self.hits: dict[str, int] = {}

    def page(
        self,
        path: str,
        body: str | bytes,
        *,
        status: int = 200,
        ctype: str = "text/html; charset=utf-8",
        headers: dict[str, str] | None = None,
    ) -> str:
        raw = body.encode("utf-8") if isinstance(body, str) else body
        self.pages[path] = (status, ctype, raw, headers or {})
        return self.base + path

    async def handle(self, request: web.Request) -> web.StreamResponse:
        self.hits[request.path] = self.hits.get(request.path, 0) + 1
        if request.path not in self.pages:
            return web.Response(status=404, text="not found")
        status, ctype, raw, headers = self.pages[request.path]
        resp = web.Response(status=status, body=raw, headers=headers)
        if ctype:
            resp.headers["Content-Type"] = ctype
        return resp


@pytest.fixture
async def site(api: Api) -> AsyncIterator[Site]:
    # 127.0.0.1 is 'off' by the sensitive defaults; the person opens it for this test site
    status, _ = await api.put("/api/site-mode", {"host": "127.0.0.1", "mode": "collect"})
    assert status == 200
    s = Site()
    app = web.Application()
    app.router.add_route("GET", "/{tail:.*}", s.handle)
    async with local_site(app) as base:
        s.base = base
        yield s


async def table_counts(api: Api) -> dict[str, int]:
    out = {}
    for table in ("documents", "document_chunks", "document_chunks_fts"):
        out[table] = (await api.store.fetchall(f"SELECT COUNT(*) FROM {table}"))[0][0]  # noqa: S608
    out["activity"] = (
        await api.store.fetchall("SELECT COUNT(*) FROM activity WHERE kind IN ('document', 'document_removed')")
    )[0][0]
    return out


async def chunk_rows(api: Api, doc_id: int) -> list[Any]:
    return await api.store.fetchall(
        "SELECT seq, text, source_url, source_host, source_ref FROM document_chunks WHERE document_id = ? ORDER BY seq",
        (doc_id,),
    )


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


async def post_big(api: Api, route: str, body: dict[str, Any]) -> tuple[int, Any]:
    """POST raw UTF-8 JSON from a stream (a large body as bytes makes aiohttp warn)."""
    raw = json.dumps(body, ensure_ascii=False).encode("utf-8")
    return await api.call("POST", route, data=io.BytesIO(raw), headers={"Content-Type": "application/json"})  # type: ignore[arg-type]


async def test_caps_count_characters_not_bytes(api: Api) -> None:
    # 1,000,000 two-byte characters: 2 MB of UTF-8, at the text cap, accepted
    text = ("é" * 99 + " ") * 10_000
    status, answer = await post_big(
        api, "/api/library/add_text", {"url": "https://example.com/e", "title": "é", "text": text}
    )
    assert status == 201, answer
    assert answer["document"]["chars"] == len(text.strip())


# --- refusals write nothing ---------------------------------------------------------------


async def test_refusals_write_nothing(api: Api, site: Site) -> None:
    url = site.page("/doc.pdf", b"%PDF-1.7 ...", ctype="application/pdf")
    img = site.page("/pic.png", b"\x89PNG....", ctype="image/png")
    assert (await api.put("/api/site-mode", {"host": "quiet.example", "mode": "suggest"}))[0] == 200
    assert (await api.put("/api/site-mode", {"host": "closed.example", "mode": "off"}))[0] == 200
    before = await table_counts(api)
    cases: list[tuple[str, dict[str, Any], int, str]] = [
        ("/api/library/add_text", {"url": "https://quiet.example/a", "title": "t", "text": "x" * 50}, 403, "site_mode"),
        ("/api/library/add_text", {"url": "https://www.closed.example/a", "title": "t", "text": "x"}, 403, "site_mode"),
        ("/api/library/add_url", {"url": "https://quiet.example/a"}, 403, "site_mode"),
        ("/api/library/add_text", {"url": "ftp://example.com/a", "title": "t", "text": "x"}, 400, "bad_url"),
        ("/api/library/add_text", {"url": "not a url", "title": "t", "text": "x"}, 400, "bad_url"),
        ("/api/library/add_url", {"url": "javascript:alert(1)"}, 400, "bad_url"),
        ("/api/library/add_url", {"url": "file:///etc/passwd"}, 400, "bad_url"),
        ("/api/library/add_text", {"url": "https://example.com/a", "title": "t"}, 400, "missing_field"),
        ("/api/library/add_text", {"url": "https://example.com/a", "title": "t", "text": "  "}, 400, "missing_field"),
        (
            "/api/library/add_text",
            {"url": "https://example.com/a", "title": "t", "text": "x", "extra": 1},
            400,
            "unknown_field",
        ),
        ("/api/library/add_url", {"url": url}, 422, "not_html"),
        ("/api/library/add_url", {"url": img}, 422, "not_html"),
    ]
    for route, body, status, code in cases:
        got, answer = await post_big(api, route, body)
        assert (got, answer["error"]["code"]) == (status, code), (
            route,
            body if len(str(body)) < 200 else "big",
            answer,
        )
    assert await table_counts(api) == before


async def test_oversized_fields_are_413_and_write_nothing(api: Api) -> None:
    before = await table_counts(api)
    for field, value in (
        ("html", "<p>" + "é" * 5_000_000),
        ("html", "<p>" + "a" * 5_000_000),
        ("text", "x" * 1_000_001),
    ):
        got, answer = await post_big(
            api, "/api/library/add_text", {"url": "https://example.com/a", "title": "t", field: value}
        )
        assert (got, answer["error"]["code"]) == (413, "payload_too_large"), answer
        assert answer["error"]["field"] == f"body.{field}"
    # a body past the route's byte limit is refused before it is parsed
    got, answer = await post_big(
        api, "/api/library/add_text", {"url": "https://example.com/a", "title": "t", "text": "x" * (25 * 1024 * 1024)}
    )
    assert (got, answer["error"]["code"]) == (413, "payload_too_large")
    assert await table_counts(api) == before


async def test_non_html_error_names_the_type(api: Api, site: Site) -> None:
    url = site.page("/paper", b"%PDF-1.7", ctype="application/pdf")
    status, answer = await api.post("/api/library/add_url", {"url": url})
    assert status == 422 and "application/pdf" in answer["error"]["message"]
    assert answer["error"]["content_type"] == "application/pdf"


async def test_add_url_follows_redirects_and_keeps_the_given_url(api: Api, site: Site) -> None:
    site.page("/final", article(title="Moved"))
    site.page("/hop2", "", status=302, headers={"Location": "/final"})
    start = site.page("/hop1", "", status=301, headers={"Location": site.base + "/hop2"})
    status, answer = await api.post("/api/library/add_url", {"url": start})
    assert status == 201, answer
    assert answer["document"]["source_url"] == start and answer["document"]["title"] == "Moved"


@pytest.mark.parametrize(
    "target",
    [
        "http://169.254.169.254/latest/meta-data/",
        "http://[::ffff:169.254.169.254]/",
        "http://[fe80::1]/",
        "http://0.0.0.0/",
        "file:///etc/passwd",
    ],
)
async def test_a_redirect_to_metadata_is_refused_even_with_the_test_flag(api: Api, site: Site, target: str) -> None:
    url = site.page("/jump", "", status=302, headers={"Location": target})
    status, answer = await api.post("/api/library/add_url", {"url": url})
    assert status == 400 and answer["error"]["code"] == "destination_refused", answer
    assert answer["error"]["redirect"] == target and "redirect refused" in answer["error"]["message"]
    assert (await table_counts(api))["documents"] == 0


async def test_a_redirect_into_an_off_site_is_refused(api: Api, site: Site) -> None:
    # the page would come from localhost (its own site, 'off' by the sensitive defaults)
    port = site.base.rsplit(":", 1)[1]
    site.page("/inside", article())
    url = site.page("/short", "", status=302, headers={"Location": f"http://localhost:{port}/inside"})
    status, answer = await api.post("/api/library/add_url", {"url": url})
    assert status == 403 and answer["error"]["code"] == "site_mode", answer
    assert (await table_counts(api))["documents"] == 0


async def test_add_url_gives_up_after_five_redirects(api: Api, site: Site) -> None:
    for i in range(7):
        site.page(f"/r{i}", "", status=302, headers={"Location": f"/r{i + 1}"})
    site.page("/r7", article())
    status, answer = await api.post("/api/library/add_url", {"url": site.base + "/r0"})
    assert status == 502 and "redirects" in answer["error"]["message"]
    assert site.hits.get("/r6") is None  # five redirects followed: /r0../r5 fetched, no more
    assert (await table_counts(api))["documents"] == 0


async def test_add_url_refuses_an_oversized_page(api: Api, site: Site) -> None:
    from server.library import fetch

    big = "<html><body>" + "<p>word </p>" * (fetch.MAX_BYTES // 10) + "</body></html>"
    url = site.page("/big", big)
    status, answer = await api.post("/api/library/add_url", {"url": url})
    assert status == 422 and answer["error"]["code"] == "too_large"
    assert (await table_counts(api))["documents"] == 0


async def test_upstream_404_is_a_clear_502(api: Api, site: Site) -> None:
    status, answer = await api.post("/api/library/add_url", {"url": site.base + "/missing"})
    assert status == 502 and "HTTP 404" in answer["error"]["message"]


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
