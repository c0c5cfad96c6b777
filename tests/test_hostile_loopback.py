"""The host as the connection reads it (WHATWG): loopback spelled otherwise, directly, through
a public page's redirect and as an IP literal at connect time, is refused and never requested.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

import pytest
from aiohttp import web

from server.library import fetch
from tests.conftest import Api, free_port, local_site
from tests.hostile_support import counts, open_local

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
    await open_local(api_private)
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
