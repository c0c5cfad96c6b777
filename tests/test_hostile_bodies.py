"""Hostile bodies on the write routes and huge queries: oversized, deeply nested, invalid UTF-8,
NUL and lone surrogates, ten-thousand-term searches. Each refused with the right status (or
answered fast), never a 500, nothing stored.
"""

from __future__ import annotations

import io
import json
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest

from tests.conftest import Api
from tests.hostile_support import ROUTES, WRITES, as_json, assert_nothing_stored, bearer, counts, raw


@pytest.mark.parametrize("route", ROUTES)
async def test_oversized_body_is_413(api: Api, route: str) -> None:
    from server.memory.routes import FACT_MAX_BODY

    limits = {
        "/api/notes": FACT_MAX_BODY,
        "/api/clips": FACT_MAX_BODY,
        "/api/captures": 8 * 1024 * 1024,
        "/api/library/add_text": 24 * 1024 * 1024,
    }
    body = dict(WRITES[route])
    filler = "x" * (limits[route] + 1024)
    if route == "/api/captures":
        body["turns"] = [{"role": "user", "text": filler}]
    else:
        body["text"] = filler
    status, answer = await raw(
        api,
        "POST",
        route,
        data=io.BytesIO(json.dumps(body).encode()),
        headers={**bearer(api), "Content-Type": "application/json"},
    )
    assert status == 413 and answer["error"]["code"] == "payload_too_large"
    await assert_nothing_stored(api)


@pytest.mark.parametrize("route", ["/api/notes", "/api/captures"])
async def test_oversized_chunked_body_without_length_is_413(api: Api, route: str) -> None:
    """No Content-Length to refuse up front: the server stops reading at the limit."""

    async def body() -> AsyncIterator[bytes]:
        yield b'{"url": "https://example.com/a", "text": "'
        for _ in range(10 * 1024):  # 10 MiB
            yield b"y" * 1024
        yield b'"}'

    status, answer = await raw(
        api, "POST", route, data=body(), headers={**bearer(api), "Content-Type": "application/json"}
    )
    assert status == 413
    await assert_nothing_stored(api)


@pytest.mark.parametrize("size", [200_000, 1_000_000, 2_000_000])
async def test_control_a_large_valid_body_under_the_limit_is_read_whole(api: Api, size: int) -> None:
    """The limits above refuse what is too large, and only that: a page of a few MB is saved
    (the body reader must read until the end, not just what the first read returns)."""
    body: dict[str, Any] = {"url": f"https://example.com/big{size}", "title": "Big"}
    if size <= 1_000_000:  # the text field's cap is 1,000,000 characters
        body["text"] = "word " * (size // 5 - 1)
    else:  # the html field's is 5,000,000
        # a page made large by an inline script (as many are): a big body, a quick extraction
        body["html"] = (
            "<html><head><script>var data = '"
            + "x" * size
            + "';</script></head><body><article>"
            + "<p>Words of a long page, one paragraph of readable text.</p>" * 20
            + "</article></body></html>"
        )
    status, answer = await raw(
        api,
        "POST",
        "/api/library/add_text",
        data=io.BytesIO(json.dumps(body).encode()),
        headers={**bearer(api), "Content-Type": "application/json"},
    )
    assert status == 201, answer


async def test_text_over_the_character_cap_is_413(api: Api) -> None:
    from server.memory.facts import MAX_TEXT_CHARS

    status, body = await api.post("/api/notes", {**WRITES["/api/notes"], "text": "é" * (MAX_TEXT_CHARS + 1)})
    assert status == 413
    await assert_nothing_stored(api)


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize("depth", [100, 50_000])
async def test_deeply_nested_json_is_400(api: Api, route: str, depth: int) -> None:
    field = "turns" if route == "/api/captures" else "text"
    data = json.dumps(WRITES[route])[:-1] + f', "{field}x": ' + "[" * depth + "]" * depth + "}"
    status, body = await raw(api, "POST", route, data=data, headers={**bearer(api), "Content-Type": "application/json"})
    assert status == 400 and body["error"]["code"] == "bad_json"
    await assert_nothing_stored(api)


@pytest.mark.parametrize("route", ROUTES)
async def test_invalid_utf8_is_400(api: Api, route: str) -> None:
    data = as_json(route).encode().replace(b"https://", b"https://\xff\xfe", 1)
    status, body = await raw(api, "POST", route, data=data, headers={**bearer(api), "Content-Type": "application/json"})
    assert status == 400 and body["error"]["code"] == "bad_json"
    data = as_json(route).encode()[:-5] + b"\xc3" + b'"}'  # a truncated two-byte sequence
    status, body = await raw(api, "POST", route, data=data, headers={**bearer(api), "Content-Type": "application/json"})
    assert status == 400
    await assert_nothing_stored(api)


def _with(route: str, field: str, value: str) -> dict[str, Any]:
    body = json.loads(json.dumps(WRITES[route]))
    if route == "/api/captures" and field == "text":
        body["turns"][0]["text"] = value
    else:
        body[field] = value
    return body


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize("field", ["url", "title", "text"])
async def test_nul_in_a_string_is_400(api: Api, route: str, field: str) -> None:
    value = {"url": "https://example.com/a\x00b", "title": "a\x00b", "text": "before\x00after"}[field]
    status, body = await api.post(route, _with(route, field, value))
    assert status == 400 and body["error"]["code"] in ("bad_value", "bad_url"), body
    # a raw NUL byte inside a JSON string is not JSON at all
    data = json.dumps(_with(route, field, "PLACEHOLDER")).replace("PLACEHOLDER", "a\x00b")
    status, body = await raw(
        api, "POST", route, data=data.encode(), headers={**bearer(api), "Content-Type": "application/json"}
    )
    assert status == 400
    await assert_nothing_stored(api)


@pytest.mark.parametrize("route", ROUTES)
async def test_lone_surrogate_is_refused_or_stored_safely_never_500(api: Api, route: str) -> None:
    """JSON may spell a lone surrogate (\\ud800); Python decodes it into a str SQLite cannot encode."""
    data = json.dumps(_with(route, "text", "PLACEHOLDER")).replace("PLACEHOLDER", "a\\ud800b")
    status, body = await raw(api, "POST", route, data=data, headers={**bearer(api), "Content-Type": "application/json"})
    assert status < 500, body
    if status >= 400:
        await assert_nothing_stored(api)


@pytest.mark.parametrize("path", ["/api/page-match", "/api/page-probe", "/api/conversations"])
async def test_nul_in_a_query_is_400_and_reads_nothing(api: Api, path: str) -> None:
    status, body = await api.get(path, params={"url": "https://example.com/a\x00"})
    assert status == 400


# ---------------------------------------------------------------- 10,000-term search


def _terms(n: int) -> str:
    words = ["alpha", "beta", "NEAR", "AND", "OR", "NOT", '"', "*", "(x", "dog's", "col:umn", "^a", "-b", "é"]
    return " ".join(f"{words[i % len(words)]}{i}" if i % 3 else words[i % len(words)] for i in range(n))


async def test_ten_thousand_term_search_over_http_is_never_5xx_and_fast(api: Api) -> None:
    await api.post("/api/notes", {**WRITES["/api/notes"], "text": "alpha beta gamma dog's name is Rex"})
    before = await counts(api)
    q = _terms(10_000)  # ~70 kB: over the route's 4,000-character limit -> its JSON 413
    started = time.monotonic()
    status, body = await api.get("/api/search", params={"q": q})
    assert status == 413 and body["error"]["field"] == "query.q", (status, body)
    assert time.monotonic() - started < 5
    # as many terms as the limit allows reach the FTS query builder
    q = " ".join(f"w{i}" for i in range(800))
    assert len(q) <= 4000
    started = time.monotonic()
    status, body = await api.get("/api/search", params={"q": q})
    assert status == 200, (status, body)
    assert time.monotonic() - started < 5
    assert await counts(api) == before


async def test_ten_thousand_term_query_through_the_search_function_is_fast(api: Api) -> None:
    """The search itself, past the HTTP line limit: 10,000 terms, FTS operators among them."""
    from server.memory import search as search_mod

    await api.post("/api/notes", {**WRITES["/api/notes"], "text": "alpha beta gamma dog's name is Rex"})
    started = time.monotonic()
    result = await search_mod.search(api.store, _terms(10_000), 20)
    assert isinstance(result, dict) and "results" in result
    assert time.monotonic() - started < 5
