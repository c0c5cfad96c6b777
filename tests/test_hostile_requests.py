"""Hostile requests against the running server: each refused with the right status, and
nothing stored (every table read back).

tests/test_channel_security.py covers the channel on GET /api/policy and PUT /api/site-mode;
this file covers the write routes that carry a page (notes, clips, captures, add_text), the
browser's cross-site "simple" POSTs, hostile bodies on those routes, huge search queries, and
add_url to loopback, private, link-local and metadata addresses, directly and by redirect.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp import web

from server.library import fetch
from server.settings import Settings
from tests.conftest import Api, free_port, local_site, running_api

TABLES = (
    "facts",
    "conversations",
    "documents",
    "document_chunks",
    "activity",
    "idempotency",
    "site_rules",
    "forget_batches",
)

WRITES: dict[str, dict[str, Any]] = {
    "/api/notes": {"url": "https://example.com/a", "title": "A page", "text": "a note about the page"},
    "/api/clips": {"url": "https://example.com/a", "title": "A page", "text": "a selected sentence"},
    "/api/captures": {
        "url": "https://chatgpt.com/c/hostile",
        "title": "Chat",
        "site": "chatgpt",
        "turns": [{"role": "user", "text": "hello"}, {"role": "assistant", "text": "hi there"}],
    },
    "/api/library/add_text": {
        "url": "https://example.com/doc",
        "title": "A document",
        "text": "A paragraph of readable text that is long enough to keep. " * 5,
    },
}
ROUTES = list(WRITES)


async def counts(api: Api) -> dict[str, int]:
    out = {}
    for table in TABLES:
        row = await api.store.fetchone(f"SELECT count(*) AS n FROM {table}")  # noqa: S608 - fixed names
        out[table] = int(row["n"]) if row else 0
    return out


async def assert_nothing_stored(api: Api, before: dict[str, int] | None = None) -> None:
    now = await counts(api)
    if before is None:
        assert not any(now[t] for t in TABLES if t != "site_rules"), now
    else:
        assert now == before


async def raw(
    api: Api,
    method: str,
    path: str,
    *,
    data: Any = None,
    headers: dict[str, str] | None = None,
    params: dict[str, str] | None = None,
) -> tuple[int, Any]:
    """A request with exactly these headers (no Authorization unless given)."""
    async with api.session.request(method, api.base + path, data=data, headers=headers or {}, params=params) as r:
        text = await r.text()
        try:
            return r.status, json.loads(text) if text else None
        except ValueError:
            return r.status, text


def bearer(api: Api) -> dict[str, str]:
    return {"Authorization": f"Bearer {api.token}"}


def as_json(route: str) -> str:
    return json.dumps(WRITES[route])


# ---------------------------------------------------------------- controls


@pytest.mark.parametrize("route", ROUTES)
async def test_control_the_same_write_with_the_right_headers_is_stored(api: Api, route: str) -> None:
    """Proves the bodies below are valid, so each refusal is about the attack, not the body."""
    status, body = await api.post(route, WRITES[route])
    assert status in (200, 201), body
    assert (await counts(api))["activity"] >= 1


# ---------------------------------------------------------------- the channel, on write routes


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize(
    ("case", "auth"),
    [
        ("no token", None),
        ("wrong token", "Bearer " + "A" * 43),
        ("not bearer", "Basic {token}"),
        ("token without scheme", "{token}"),
        ("lower-case scheme", "bearer {token}"),
    ],
)
async def test_write_without_a_valid_bearer_is_401(api: Api, route: str, case: str, auth: str | None) -> None:
    headers = {"Content-Type": "application/json"}
    if auth is not None:
        headers["Authorization"] = auth.format(token=api.token)
    status, body = await raw(api, "POST", route, data=as_json(route), headers=headers)
    assert status == 401 and body["error"]["code"] == "unauthorized"
    await assert_nothing_stored(api)


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize("param", ["token", "access_token", "Authorization", "auth"])
async def test_write_with_token_in_the_query_string_is_401(api: Api, route: str, param: str) -> None:
    value = api.token if param != "Authorization" else f"Bearer {api.token}"
    status, body = await raw(
        api, "POST", route, data=as_json(route), params={param: value}, headers={"Content-Type": "application/json"}
    )
    assert status == 401 and body["error"]["code"] == "unauthorized"
    await assert_nothing_stored(api)


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize(
    "origin",
    [
        "https://evil.example",
        "null",
        "http://127.0.0.1",
        "chrome-extension://aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
        "moz-extension://gidncpejkfcnakpojbbbhocinihfkjmj",
    ],
)
async def test_write_from_a_web_origin_with_a_valid_token_is_403(api: Api, route: str, origin: str) -> None:
    status, body = await raw(
        api,
        "POST",
        route,
        data=as_json(route),
        headers={**bearer(api), "Content-Type": "application/json", "Origin": origin},
    )
    assert status == 403 and body["error"]["code"] == "bad_origin"
    await assert_nothing_stored(api)


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize(
    "host",
    ["evil.example:{port}", "attacker.test", "127.0.0.1", "localhost:1", "127.0.0.1.nip.io:{port}", "[::1]:{port}0"],
)
async def test_write_with_a_rebinding_host_is_403(api: Api, route: str, host: str) -> None:
    port = api.base.rsplit(":", 1)[1]
    status, body = await raw(
        api,
        "POST",
        route,
        data=as_json(route),
        headers={**bearer(api), "Content-Type": "application/json", "Host": host.format(port=port)},
    )
    assert status == 403 and body["error"]["code"] == "bad_host"
    await assert_nothing_stored(api)


# A page on another site can make the browser POST without a preflight only with these three
# content types (and no custom header, so never with Authorization): the classic CSRF form.
SIMPLE_TYPES = ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"]


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize("ctype", SIMPLE_TYPES)
async def test_cross_site_simple_post_is_refused(api: Api, route: str, ctype: str) -> None:
    data = as_json(route)  # a form can smuggle a JSON-looking text/plain body
    # as a browser sends it: web Origin, no Authorization
    status, body = await raw(
        api, "POST", route, data=data, headers={"Content-Type": ctype, "Origin": "https://evil.example"}
    )
    assert status == 403 and body["error"]["code"] == "bad_origin"
    # no Origin (a privacy mode or an old browser), no token
    status, body = await raw(api, "POST", route, data=data, headers={"Content-Type": ctype})
    assert status == 401
    # even with the token (an attacker who learnt it), a non-JSON body is refused
    status, body = await raw(api, "POST", route, data=data, headers={**bearer(api), "Content-Type": ctype})
    assert status == 415 and body["error"]["code"] == "unsupported_media_type"
    # and with the token and the web Origin
    status, body = await raw(
        api, "POST", route, data=data, headers={**bearer(api), "Content-Type": ctype, "Origin": "https://evil.example"}
    )
    assert status == 403
    await assert_nothing_stored(api)


@pytest.mark.parametrize("route", ROUTES)
async def test_preflight_gets_no_cors(api: Api, route: str) -> None:
    async with api.session.options(
        api.base + route,
        headers={
            "Origin": "https://evil.example",
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "authorization,content-type",
        },
    ) as r:
        assert r.status in (401, 403)
        assert not any(h.lower().startswith("access-control-") for h in r.headers)
    await assert_nothing_stored(api)


# ---------------------------------------------------------------- hostile bodies, on write routes


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


# ---------------------------------------------------------------- add_url to places it must never fetch

PRIVATE_TARGETS = [
    "http://127.0.0.1/",
    "http://127.0.0.1:8080/admin",
    "http://localhost/",
    "http://LOCALHOST:37711/api/health",
    "http://169.254.169.254/latest/meta-data/",
    "http://10.0.0.1/",
    "http://192.168.1.1/",
    "http://172.16.0.1/",
    "http://[::1]/",
    "http://[::ffff:127.0.0.1]/",
    "http://[::ffff:169.254.169.254]/",
    "http://0.0.0.0/",
    "http://[fe80::1]/",
    "http://[fd00::1]/",
    "http://100.64.0.1/",
]


def _host_of(url: str) -> str:
    from urllib.parse import urlsplit

    netloc = urlsplit(url).netloc
    return netloc.rsplit(":", 1)[0] if not netloc.endswith("]") else netloc


@pytest.mark.parametrize("target", PRIVATE_TARGETS)
async def test_add_url_to_a_private_address_is_refused(api: Api, target: str) -> None:
    before = await counts(api)
    started = time.monotonic()
    status, body = await api.post("/api/library/add_url", {"url": target})
    # local addresses resolve to `off` (a sensitive default) -> 403 before anything is fetched;
    # a public-but-not-global range (100.64/10) is collect, and the fetch guard answers 400
    assert (status, body["error"]["code"]) in ((403, "site_mode"), (400, "destination_refused")), body
    assert time.monotonic() - started < 5
    assert await counts(api) == before


@pytest.mark.parametrize("target", PRIVATE_TARGETS)
async def test_add_url_to_a_private_address_is_refused_even_when_the_person_set_collect(api: Api, target: str) -> None:
    """A user rule opening the host must not open the fetcher: the fetch guard refuses (400)."""
    host = _host_of(target)
    status, body = await api.put("/api/site-mode", {"host": host, "mode": "collect"})
    assert status == 200, body
    status, body = await api.get("/api/site-mode", params={"host": host})
    assert body["mode"] == "collect"
    before = await counts(api)
    status, body = await api.post("/api/library/add_url", {"url": target})
    assert status == 400 and body["error"]["code"] == "destination_refused", body
    assert await counts(api) == before


@pytest.mark.parametrize(
    "target",
    [
        "file:///etc/passwd",
        "ftp://example.com/x",
        "gopher://127.0.0.1:25/",
        "http://user:pass@example.com/",
        "javascript:alert(1)",
        "http://[::1",
    ],
)
async def test_add_url_other_schemes_and_user_info_are_400(api: Api, target: str) -> None:
    status, body = await api.post("/api/library/add_url", {"url": target})
    assert status == 400, body
    await assert_nothing_stored(api)


@pytest.fixture
async def api_private(settings: Settings) -> AsyncIterator[Api]:
    """A server whose fetcher may reach loopback (tests only), so a local site can redirect."""
    async with running_api(dataclasses.replace(settings, allow_private_fetch=True)) as client:
        yield client


@pytest.fixture
async def redirector() -> AsyncIterator[str]:
    """A local site: /page is a real page; /to/<n> redirects to the n-th hostile target."""
    port = free_port()
    hops = {
        "metadata": "http://169.254.169.254/latest/meta-data/iam/security-credentials/",
        "mapped-metadata": "http://[::ffff:169.254.169.254]/latest/meta-data/",
        "zero": f"http://0.0.0.0:{port}/page",
        "link-local-v6": "http://[fe80::1]/",
        "file": "file:///etc/passwd",
        "userinfo": f"http://user:pw@127.0.0.1:{port}/page",
        "ok": f"http://127.0.0.1:{port}/page",
    }

    async def page(request: web.Request) -> web.Response:
        return web.Response(
            text="<html><head><title>Local page</title></head><body><article><p>"
            + "Readable words of a local test page. " * 20
            + "</p></article></body></html>",
            content_type="text/html",
        )

    async def to(request: web.Request) -> web.Response:
        raise web.HTTPFound(hops[request.match_info["name"]])

    async def loop(request: web.Request) -> web.Response:
        raise web.HTTPFound(f"/loop/{int(request.match_info['n']) + 1}")

    app = web.Application()
    app.add_routes([web.get("/page", page), web.get("/to/{name}", to), web.get("/loop/{n}", loop)])
    async with local_site(app, port=port) as base:
        yield base


async def _open_local(api: Api) -> None:
    status, _ = await api.put("/api/site-mode", {"host": "127.0.0.1", "mode": "collect"})
    assert status == 200


async def test_redirect_control_a_local_page_is_saved(api_private: Api, redirector: str) -> None:
    await _open_local(api_private)
    status, body = await api_private.post("/api/library/add_url", {"url": redirector + "/to/ok"})
    assert status == 201, body


@pytest.mark.parametrize("name", ["metadata", "mapped-metadata", "zero", "link-local-v6", "file", "userinfo"])
async def test_redirect_to_a_forbidden_destination_is_refused(api_private: Api, redirector: str, name: str) -> None:
    await _open_local(api_private)
    before = await counts(api_private)
    started = time.monotonic()
    status, body = await api_private.post("/api/library/add_url", {"url": f"{redirector}/to/{name}"})
    assert status == 400 and body["error"]["code"] == "destination_refused", body
    assert "redirect" in body["error"]
    assert time.monotonic() - started < 5
    assert await counts(api_private) == before


async def test_endless_redirects_are_bounded(api_private: Api, redirector: str) -> None:
    await _open_local(api_private)
    before = await counts(api_private)
    status, body = await api_private.post("/api/library/add_url", {"url": f"{redirector}/loop/0"})
    assert status == 502, body
    assert await counts(api_private) == before


async def test_with_private_fetch_off_a_local_site_is_never_reached(api: Api, redirector: str) -> None:
    """The first hop is refused, so the redirect is never seen (and nothing is fetched)."""
    await _open_local(api)
    status, body = await api.post("/api/library/add_url", {"url": f"{redirector}/to/metadata"})
    assert status == 400 and body["error"]["code"] == "destination_refused"
    assert "redirect" not in body["error"]
    await assert_nothing_stored(api, await counts(api))


@pytest.mark.parametrize(
    "target",
    [
        *PRIVATE_TARGETS,
        "http://[::ffff:7f00:1]/",
        "http://[64:ff9b::a9fe:a9fe]/",
        "http://[2002:a9fe:a9fe::]/",
        "http://[::127.0.0.1]/",
    ],
)
def test_each_redirect_hop_is_checked_like_the_first(target: str) -> None:
    """fetch.check_url is what vets every hop (fetch_page calls it on each Location)."""
    if target.startswith(("http://localhost", "http://LOCALHOST")):
        return  # a name: refused by the resolver (next test), not by check_url
    with pytest.raises(fetch.DestinationRefused):
        fetch.check_url(target)


@pytest.mark.parametrize("name", ["localhost", "LOCALHOST", "ip6-localhost"])
async def test_names_that_resolve_to_loopback_are_refused_by_the_resolver(name: str) -> None:
    import socket

    try:
        socket.getaddrinfo(name, 80)
    except OSError:
        pytest.skip(f"{name} does not resolve on this machine")
    with pytest.raises(OSError, match="loopback|private|unspecified"):
        await fetch.VettedResolver(allow_private=False).resolve(name, 80)


# ---------------------------------------------------------------- the host as the connection reads it (WHATWG)

LOOPBACK_SPELLINGS = [
    "127。0。0。1",  # ideographic full stops
    "127．0．0．1",  # fullwidth full stops
    "１２７.0.0.1",  # fullwidth digits
    "127%E3%80%820%E3%80%820%E3%80%821",  # percent-encoded ideographic full stops
    "2130706433",
    "0x7f000001",
    "0177.0.0.1",
    "127.1",
    "0x7f.1",
    "127.0.0.1.",
    "[::ffff:127.0.0.1]",
    "[::ffff:7f00:1]",
    "[0:0:0:0:0:ffff:127.0.0.1]",
]


@pytest.fixture
async def listener() -> AsyncIterator[tuple[int, list[str]]]:
    """A loopback site that records every request it sees (the wire, not our code)."""
    seen: list[str] = []

    async def page(request: web.Request) -> web.Response:
        seen.append(request.path_qs)
        return web.Response(
            text="<html><head><title>Secret</title></head><body><article><p>"
            + "The secret admin page of a local service. " * 20
            + "</p></article></body></html>",
            content_type="text/html",
        )

    app = web.Application()
    app.router.add_get("/{tail:.*}", page)
    port = free_port()
    async with local_site(app, port=port):
        yield port, seen


async def test_control_the_listener_sees_a_direct_request(api: Api, listener: tuple[int, list[str]]) -> None:
    port, seen = listener
    async with api.session.get(f"http://127.0.0.1:{port}/secret") as r:
        assert r.status == 200
    assert seen == ["/secret"]


@pytest.mark.parametrize("spelling", LOOPBACK_SPELLINGS)
async def test_loopback_spelled_otherwise_is_refused_and_never_requested(
    api: Api,
    listener: tuple[int, list[str]],
    spelling: str,
) -> None:
    """A rule opens 127.0.0.1 (so the site mode does not refuse): the fetcher must still refuse
    every spelling of it, and the listener must see no request at all."""
    port, seen = listener
    for host in ("127.0.0.1", "[::ffff:7f00:1]"):
        status, _ = await api.put("/api/site-mode", {"host": host, "mode": "collect"})
        assert status == 200
    before = await counts(api)
    status, body = await api.post("/api/library/add_url", {"url": f"http://{spelling}:{port}/secret"})
    assert status == 400 and body["error"]["code"] == "destination_refused", body
    assert seen == []
    assert await counts(api) == before


@pytest.mark.parametrize("spelling", ["127。0。0。1", "１２７.0.0.1", "0x7f000001"])
async def test_control_with_the_test_flag_the_same_spelling_reaches_the_listener(
    api_private: Api,
    listener: tuple[int, list[str]],
    spelling: str,
) -> None:
    """Positive control: the listener WOULD see these requests if the fetcher let them through."""
    port, seen = listener
    await _open_local(api_private)
    status, body = await api_private.post("/api/library/add_url", {"url": f"http://{spelling}:{port}/secret"})
    assert status == 201, body
    assert seen == ["/secret"]
    assert body["document"]["source_url"] == f"http://127.0.0.1:{port}/secret"


@pytest.fixture
def public_stand_ins(monkeypatch: pytest.MonkeyPatch) -> None:
    """127.0.0.2 and 127.0.0.3 play public sites (the one thing we cannot run here); every
    other address is judged by the real rule, 127.0.0.1 included."""
    import ipaddress

    real = fetch.address_refusal
    public = {ipaddress.ip_address("127.0.0.2"), ipaddress.ip_address("127.0.0.3")}

    def refusal(ip: fetch.IpAddress, *, allow_private: bool = False) -> str | None:
        return None if ip in public else real(ip, allow_private=allow_private)

    monkeypatch.setattr(fetch, "address_refusal", refusal)


@contextlib.asynccontextmanager
async def raw_redirector(location: bytes) -> AsyncIterator[tuple[str, list[bytes]]]:
    """A 'public' site on 127.0.0.2 answering every request with a 302 to `location`, sent as
    raw bytes (a Location in UTF-8, as a hostile server may send it)."""
    import asyncio

    seen: list[bytes] = []

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        seen.append(head.split(b"\r\n", 1)[0])
        writer.write(
            b"HTTP/1.1 302 Found\r\nLocation: " + location + b"\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        )
        await writer.drain()
        writer.close()

    port = free_port()
    server = await asyncio.start_server(serve, "127.0.0.2", port)
    try:
        yield f"http://127.0.0.2:{port}/", seen
    finally:
        server.close()
        await server.wait_closed()


@pytest.mark.usefixtures("public_stand_ins")
@pytest.mark.parametrize(
    "spelling",
    ["127。0。0。1", "１２７.0.0.1", "127%E3%80%820%E3%80%820%E3%80%821", "2130706433", "[::ffff:127.0.0.1]"],
)
@pytest.mark.parametrize("rule", ["none", "collect"])
async def test_a_public_page_redirecting_to_loopback_spelled_otherwise_is_refused(
    api: Api,
    listener: tuple[int, list[str]],
    spelling: str,
    rule: str,
) -> None:
    """With or without a rule opening 127.0.0.1, the fetcher refuses the hop (400) as soon as it
    reads the Location; the loopback listener sees no request at all."""
    port, seen = listener
    await api.put("/api/site-mode", {"host": "127.0.0.2", "mode": "collect"})
    if rule == "collect":
        for host in ("127.0.0.1", "[::ffff:7f00:1]"):
            await api.put("/api/site-mode", {"host": host, "mode": "collect"})
    async with raw_redirector(f"http://{spelling}:{port}/secret".encode()) as (start, hops):
        before = await counts(api)
        status, body = await api.post("/api/library/add_url", {"url": start})
        assert len(hops) == 1, "the public first hop was requested"
    assert (status, body["error"]["code"]) == (400, "destination_refused"), body
    assert seen == []
    assert await counts(api) == before


@pytest.mark.usefixtures("public_stand_ins")
async def test_control_a_public_page_redirecting_to_a_public_page_is_followed(api: Api) -> None:
    seen: list[str] = []

    async def page(request: web.Request) -> web.Response:
        seen.append(request.path)
        return web.Response(
            text="<html><body><article><p>" + "Words of the target page. " * 20 + "</p></article></body></html>",
            content_type="text/html",
        )

    app = web.Application()
    app.router.add_get("/{tail:.*}", page)
    port = free_port()
    async with local_site(app, host="127.0.0.3", port=port):
        for host in ("127.0.0.2", "127.0.0.3"):
            await api.put("/api/site-mode", {"host": host, "mode": "collect"})
        async with raw_redirector(f"http://127。0。0。3:{port}/target".encode()) as (start, _):
            status, body = await api.post("/api/library/add_url", {"url": start})
    assert status == 201, body
    assert seen == ["/target"]


@pytest.mark.usefixtures("public_stand_ins")
@pytest.mark.parametrize("mode", ["off", "suggest", "collect"])
async def test_a_redirect_to_a_host_that_is_not_collect_is_refused_before_it_is_requested(api: Api, mode: str) -> None:
    """Redirects are governed per hop: each hop's site mode is checked BEFORE the GET (collect is the control)."""
    seen: list[str] = []

    async def page(request: web.Request) -> web.Response:
        seen.append(request.path)
        return web.Response(
            text="<html><body><article><p>" + "Words of the off site. " * 20 + "</p></article></body></html>",
            content_type="text/html",
        )

    app = web.Application()
    app.router.add_get("/{tail:.*}", page)
    port = free_port()
    async with local_site(app, host="127.0.0.3", port=port):
        await api.put("/api/site-mode", {"host": "127.0.0.2", "mode": "collect"})
        await api.put("/api/site-mode", {"host": "127.0.0.3", "mode": mode})
        async with raw_redirector(f"http://127.0.0.3:{port}/private".encode()) as (start, hops):
            before = await counts(api)
            status, body = await api.post("/api/library/add_url", {"url": start})
            assert len(hops) == 1
    if mode == "collect":
        assert status == 201, body
        assert seen == ["/private"]
    else:
        assert status == 403 and body["error"]["code"] == "site_mode", body
        assert seen == []
        assert await counts(api) == before


@pytest.mark.parametrize("allow", [False, True])
async def test_an_ip_literal_is_vetted_at_connect_time_too(
    monkeypatch: pytest.MonkeyPatch,
    listener: tuple[int, list[str]],
    allow: bool,
) -> None:
    """Even if the URL check were bypassed, the socket factory refuses a loopback IP literal
    (aiohttp never hands an IP literal to the resolver). allow=True is the control."""
    port, seen = listener
    monkeypatch.setattr(fetch, "check_url", lambda url, **_: url)
    url = f"http://127.0.0.1:{port}/secret"
    if allow:
        fetched = await fetch.fetch_page(url, allow_private=True)
        assert fetched.url == url and seen == ["/secret"]
    else:
        with pytest.raises(fetch.DestinationRefused, match="loopback"):
            await fetch.fetch_page(url)
        assert seen == []


# ---------------------------------------------------------------- raw bytes on the wire


async def wire(api: Api, request: bytes) -> tuple[int, str, bytes]:
    """Send exactly these bytes; return (status, content type, body) of the answer."""
    import asyncio

    port = int(api.base.rsplit(":", 1)[1])
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(request)
    await writer.drain()
    answer = b""
    while b"\r\n\r\n" not in answer:
        more = await asyncio.wait_for(reader.read(1 << 16), 10)
        assert more, answer
        answer += more
    head, _, body = answer.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    length = next(int(ln.split(b":", 1)[1]) for ln in lines[1:] if ln.lower().startswith(b"content-length:"))
    while len(body) < length:
        more = await asyncio.wait_for(reader.read(1 << 16), 10)
        assert more, body
        body += more
    writer.close()
    status = int(lines[0].split(b" ")[1])
    ctype = next(
        (
            ln.split(b":", 1)[1].split(b";")[0].strip().decode()
            for ln in lines[1:]
            if ln.lower().startswith(b"content-type:")
        ),
        "",
    )
    return status, ctype, body


def _host(api: Api) -> bytes:
    return api.base.removeprefix("http://").encode()


async def test_a_non_utf8_byte_in_authorization_is_401(api: Api) -> None:
    note = json.dumps(WRITES["/api/notes"]).encode()
    for value in (b"Bearer \xff\xfe" + api.token.encode(), b"Bearer " + api.token.encode() + b"\x80", b"\xffBearer x"):
        status, ctype, body = await wire(
            api,
            b"POST /api/notes HTTP/1.1\r\nHost: "
            + _host(api)
            + b"\r\nAuthorization: "
            + value
            + b"\r\nContent-Type: application/json"
            + b"\r\nContent-Length: "
            + str(len(note)).encode()
            + b"\r\nConnection: close\r\n\r\n"
            + note,
        )
        assert (status, ctype) == (401, "application/json"), (value, body)
        assert json.loads(body)["error"]["code"] == "unauthorized"
    await assert_nothing_stored(api)
    # control: the same bytes with the right token are stored
    status, _, body = await wire(
        api,
        b"POST /api/notes HTTP/1.1\r\nHost: "
        + _host(api)
        + b"\r\nAuthorization: Bearer "
        + api.token.encode()
        + b"\r\nContent-Type: application/json\r\nContent-Length: "
        + str(len(note)).encode()
        + b"\r\nConnection: close\r\n\r\n"
        + note,
    )
    assert status == 201, body


MALFORMED = {
    "NUL in the request line": b"GET /ECHOME\x00 HTTP/1.1\r\nHost: {host}\r\n\r\n",
    "bad method": b"G<ECHOME> / HTTP/1.1\r\nHost: {host}\r\n\r\n",
    "bad version": b"GET / HTTP/ECHOME\r\nHost: {host}\r\n\r\n",
    "header without a colon": b"GET /api/health HTTP/1.1\r\nHost: {host}\r\nECHOME header\r\n\r\n",
    "bad header name": b"GET /api/health HTTP/1.1\r\nHost: {host}\r\nECH\x01OME: x\r\n\r\n",
    "header line too long": b"GET /api/health HTTP/1.1\r\nHost: {host}\r\nX-Echo: ECHOME" + b"a" * 20000 + b"\r\n\r\n",
    "request line too long": b"GET /ECHOME" + b"a" * 140000 + b" HTTP/1.1\r\nHost: {host}\r\n\r\n",
    "bad chunk size": b"POST /api/notes HTTP/1.1\r\nHost: {host}\r\nTransfer-Encoding: chunked\r\n\r\nECHOME\r\n",
    "bad content length": b"POST /api/notes HTTP/1.1\r\nHost: {host}\r\nContent-Length: ECHOME\r\n\r\n",
    "two content lengths": b"POST /api/notes HTTP/1.1\r\nHost: {host}\r\n"
    b"Content-Length: 1\r\nContent-Length: 2\r\n\r\nab",
}


@pytest.mark.parametrize("case", list(MALFORMED))
async def test_aiohttps_own_400_answers_are_our_json_shape_and_echo_nothing(api: Api, case: str) -> None:
    status, ctype, body = await wire(api, MALFORMED[case].replace(b"{host}", _host(api)))
    assert 400 <= status < 500, (status, body)
    assert ctype == "application/json", body
    error = json.loads(body)["error"]
    assert set(error) == {"code", "message"} and error["code"], error
    assert b"ECHOME" not in body
    await assert_nothing_stored(api)


async def test_control_a_well_formed_raw_request_is_answered(api: Api) -> None:
    status, ctype, body = await wire(
        api, b"GET /api/health HTTP/1.1\r\nHost: " + _host(api) + b"\r\nConnection: close\r\n\r\n"
    )
    assert (status, ctype) == (200, "application/json"), body
