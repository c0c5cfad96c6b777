"""add_url to loopback, private, link-local and metadata addresses, directly and by redirect:
refused before anything is fetched (a local site is reached only when private fetch is on).
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator

import pytest
from aiohttp import web

from server.library import fetch
from tests.conftest import Api, free_port, local_site
from tests.hostile_support import assert_nothing_stored, counts, open_local

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


async def test_redirect_control_a_local_page_is_saved(api_private: Api, redirector: str) -> None:
    await open_local(api_private)
    status, body = await api_private.post("/api/library/add_url", {"url": redirector + "/to/ok"})
    assert status == 201, body


@pytest.mark.parametrize("name", ["metadata", "mapped-metadata", "zero", "link-local-v6", "file", "userinfo"])
async def test_redirect_to_a_forbidden_destination_is_refused(api_private: Api, redirector: str, name: str) -> None:
    await open_local(api_private)
    before = await counts(api_private)
    started = time.monotonic()
    status, body = await api_private.post("/api/library/add_url", {"url": f"{redirector}/to/{name}"})
    assert status == 400 and body["error"]["code"] == "destination_refused", body
    assert "redirect" in body["error"]
    assert time.monotonic() - started < 5
    assert await counts(api_private) == before


async def test_endless_redirects_are_bounded(api_private: Api, redirector: str) -> None:
    await open_local(api_private)
    before = await counts(api_private)
    status, body = await api_private.post("/api/library/add_url", {"url": f"{redirector}/loop/0"})
    assert status == 502, body
    assert await counts(api_private) == before


async def test_with_private_fetch_off_a_local_site_is_never_reached(api: Api, redirector: str) -> None:
    """The first hop is refused, so the redirect is never seen (and nothing is fetched)."""
    await open_local(api)
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
