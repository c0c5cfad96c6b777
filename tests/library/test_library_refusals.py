"""Library refusals over HTTP write nothing: bad and oversized input, non-HTML pages, redirects
to metadata or into an off site, too many redirects, oversized pages, upstream errors. add_url
fetches from a local test site, which needs `allow_private_fetch` (tests only)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import Api
from tests.library.routes_support import (
    Site,
    article,
    post_big,
    table_counts,
)
from tests.library.routes_support import settings as settings  # noqa: F401  (the fixture: add_url may reach the local site)

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
