"""add_url's fetcher refuses loopback, private, link-local, multicast, reserved and unspecified
destinations — the URL given, every address its name resolves to, and every redirect hop —
without `allow_private_fetch`; with it (tests only) loopback and private open, and nothing else."""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp import web

from server.library import fetch
from server.library.fetch import DestinationRefused, VettedResolver, address_refusal, check_url
from tests.conftest import Api, free_port
from tests.conftest import local_site as serve_app


async def library_rows(api: Api) -> tuple[int, int]:
    docs = (await api.store.fetchall("SELECT COUNT(*) FROM documents"))[0][0]
    chunks = (await api.store.fetchall("SELECT COUNT(*) FROM document_chunks"))[0][0]
    return docs, chunks


@pytest.fixture
async def local_site() -> AsyncIterator[tuple[str, dict[str, int]]]:
    hits: dict[str, int] = {}

    async def page(request: web.Request) -> web.Response:
        hits[request.path] = hits.get(request.path, 0) + 1
        return web.Response(text="<html><body><p>secret admin page</p></body></html>", content_type="text/html")

    app = web.Application()
    app.router.add_get("/{tail:.*}", page)
    async with serve_app(app) as base:
        yield base.removeprefix("http://"), hits


@pytest.fixture
async def open_local(api: Api) -> None:
    # 127.0.0.1 is 'off' by the sensitive defaults: open it, so that only the fetcher can refuse
    for host in (
        "127.0.0.1",
        "localhost",
        "[::1]",
        "[::ffff:127.0.0.1]",
        "10.0.0.1",
        "192.168.1.1",
        "169.254.169.254",
        "[fe80::1]",
        "0.0.0.0",
        "224.0.0.1",
        "100.64.0.1",
    ):  # noqa: S104
        status, answer = await api.put("/api/site-mode", {"host": host, "mode": "collect"})
        assert status == 200, (host, answer)


@pytest.mark.usefixtures("open_local")
async def test_private_destinations_are_refused_without_the_flag(
    api: Api, local_site: tuple[str, dict[str, int]]
) -> None:
    hostport, hits = local_site
    port = hostport.split(":")[1]
    for url in (
        f"http://{hostport}/admin",
        f"http://localhost:{port}/admin",  # a name that resolves to loopback
        f"http://[::1]:{port}/admin",
        f"http://[::ffff:127.0.0.1]:{port}/admin",  # IPv4-mapped IPv6
        "http://10.0.0.1/",
        "http://192.168.1.1/router",
        "http://169.254.169.254/latest/meta-data/",
        "http://[fe80::1]/",
        "http://0.0.0.0/",
        "http://224.0.0.1/",
        "http://100.64.0.1/",
    ):
        status, answer = await api.post("/api/library/add_url", {"url": url})
        assert status == 400 and answer["error"]["code"] == "destination_refused", (url, answer)
    assert hits == {}  # nothing was ever sent to the local site
    assert await library_rows(api) == (0, 0)


@pytest.mark.usefixtures("open_local")
async def test_legacy_numeric_hosts_are_refused(api: Api, local_site: tuple[str, dict[str, int]]) -> None:
    hostport, hits = local_site
    port = hostport.split(":")[1]
    for url in (f"http://2130706433:{port}/", f"http://127.1:{port}/", f"http://0x7f.0.0.1:{port}/"):
        status, answer = await api.post("/api/library/add_url", {"url": url})
        assert status == 400, (url, answer)
    assert hits == {}
    assert await library_rows(api) == (0, 0)


@pytest.mark.parametrize(
    "addr,reason",
    [
        ("127.0.0.1", "loopback"),
        ("127.255.0.9", "loopback"),
        ("::1", "loopback"),
        ("10.1.2.3", "private"),
        ("172.16.0.1", "private"),
        ("192.168.0.10", "private"),
        ("fd00::1", "private"),
        ("169.254.169.254", "link-local"),
        ("fe80::1", "link-local"),
        ("224.0.0.251", "multicast"),
        ("ff02::1", "multicast"),
        ("0.0.0.0", "unspecified"),
        ("::", "unspecified"),  # noqa: S104
        ("240.0.0.1", "reserved"),
        ("100.64.0.1", "not globally routable"),
        ("::ffff:127.0.0.1", "loopback, embedded in IPv6"),
        ("::ffff:169.254.169.254", "link-local, embedded in IPv6"),
        ("64:ff9b::a9fe:a9fe", "link-local, embedded in IPv6"),
        ("2002:7f00:1::", "loopback, embedded in IPv6"),
        ("::127.0.0.1", "loopback, embedded in IPv6"),
    ],
)
def test_address_refusal(addr: str, reason: str) -> None:
    assert address_refusal(ipaddress.ip_address(addr)) == reason


@pytest.mark.parametrize("addr", ["93.184.215.14", "1.1.1.1", "2606:4700:4700::1111", "::ffff:8.8.8.8"])
def test_public_addresses_pass(addr: str) -> None:
    assert address_refusal(ipaddress.ip_address(addr)) is None


@pytest.mark.parametrize(
    "addr",
    [
        "169.254.169.254",
        "fe80::1",
        "224.0.0.1",
        "0.0.0.0",
        "::",
        "240.0.0.1",  # noqa: S104
        "::ffff:169.254.169.254",
    ],
)
def test_the_test_flag_never_opens_metadata_or_special_addresses(addr: str) -> None:
    assert address_refusal(ipaddress.ip_address(addr), allow_private=True) is not None


def test_the_test_flag_opens_loopback_and_private_only() -> None:
    for addr in ("127.0.0.1", "::1", "10.0.0.1", "192.168.1.1"):
        assert address_refusal(ipaddress.ip_address(addr), allow_private=True) is None


@pytest.mark.parametrize(
    "url",
    [
        "ftp://example.com/",
        "file:///etc/passwd",
        "javascript:alert(1)",
        "http://",
        "https://user:pw@example.com/",
        "http://127.0.0.1/",
        "http://[::1]/",
        "http://169.254.169.254/",
        "http://example.com:99999/",
    ],
)
def test_check_url_refuses(url: str) -> None:
    with pytest.raises(DestinationRefused):
        check_url(url)


def test_check_url_drops_the_fragment() -> None:
    assert check_url("HTTPS://example.com/a?b=1#frag") == "https://example.com/a?b=1"


async def test_resolver_checks_every_address_and_returns_only_checked_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    """A name with one public and one private address is refused whole (rebinding is staged so);
    the addresses handed to aiohttp are exactly the ones checked."""
    import asyncio

    answers: dict[str, list[str]] = {
        "mixed.test": ["93.184.215.14", "127.0.0.1"],
        "public.test": ["93.184.215.14"],
        "meta.test": ["169.254.169.254"],
    }

    async def fake_getaddrinfo(self: Any, host: str, port: int, **kw: Any) -> list[Any]:
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (a, port)) for a in answers[host]]

    monkeypatch.setattr(asyncio.BaseEventLoop, "getaddrinfo", fake_getaddrinfo)
    resolver = VettedResolver()
    got = await resolver.resolve("public.test", 80)
    assert [r["host"] for r in got] == ["93.184.215.14"] and got[0]["port"] == 80
    for name in ("mixed.test", "meta.test"):
        with pytest.raises(OSError, match="resolves to"):
            await resolver.resolve(name, 80)
    with pytest.raises(OSError):
        await VettedResolver(allow_private=True).resolve("meta.test", 80)


async def test_a_name_resolving_to_metadata_is_refused_through_the_route(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    import asyncio

    real = asyncio.BaseEventLoop.getaddrinfo

    async def fake_getaddrinfo(self: Any, host: str, port: int, *args: Any, **kw: Any) -> list[Any]:
        if host == "metadata.rebind.test":
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("169.254.169.254", port))]
        return await real(self, host, port, *args, **kw)

    monkeypatch.setattr(asyncio.BaseEventLoop, "getaddrinfo", fake_getaddrinfo)
    status, answer = await api.post("/api/library/add_url", {"url": "http://metadata.rebind.test/latest/"})
    assert status == 400 and answer["error"]["code"] == "destination_refused"
    assert answer["error"]["reason"] == "link-local"
    assert await library_rows(api) == (0, 0)


async def test_fetch_page_redirect_to_loopback_is_refused(local_site: tuple[str, dict[str, int]]) -> None:
    """The validator on every hop: a public-looking first hop that redirects to loopback."""
    hostport, hits = local_site
    redirector = web.Application()

    async def hop(request: web.Request) -> web.Response:
        raise web.HTTPFound(f"http://{hostport}/admin")

    redirector.router.add_get("/", hop)
    runner = web.AppRunner(redirector, access_log=None)
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.2", port).start()
    try:
        # the first hop is reachable only with the test flag; the redirect to loopback is then
        # refused by the same check on a fetcher that does not have the flag for its second hop
        orig = fetch.check_url
        calls: list[str] = []

        def strict_after_first(url: str, *, allow_private: bool = False, base: str | None = None) -> str:
            calls.append(url)
            return orig(url, allow_private=allow_private and len(calls) == 1, base=base)

        fetch.check_url = strict_after_first  # type: ignore[assignment]
        try:
            with pytest.raises(DestinationRefused, match="redirect refused"):
                await fetch.fetch_page(f"http://127.0.0.2:{port}/", allow_private=True)
        finally:
            fetch.check_url = orig  # type: ignore[assignment]
    finally:
        await runner.cleanup()
    assert hits == {}
    assert calls == [f"http://127.0.0.2:{port}/", f"http://{hostport}/admin"]


@pytest.fixture
async def slow_site() -> AsyncIterator[str]:
    import asyncio

    async def slow(request: web.Request) -> web.Response:
        await asyncio.sleep(5)
        return web.Response(text="<html><body><p>late</p></body></html>", content_type="text/html")

    async def endless(request: web.Request) -> web.StreamResponse:
        resp = web.StreamResponse(headers={"Content-Type": "text/html"})
        resp.enable_chunked_encoding()  # no Content-Length: the cap must count what arrives
        await resp.prepare(request)
        for _ in range(200):
            await resp.write(b"<p>" + b"x" * 8192 + b"</p>")
        await resp.write_eof()
        return resp

    app = web.Application()
    app.router.add_get("/slow", slow)
    app.router.add_get("/endless", endless)
    async with serve_app(app) as base:
        yield base


async def test_the_total_time_is_bounded(slow_site: str) -> None:
    import time

    from server.errors import UpstreamError

    started = time.monotonic()
    with pytest.raises(UpstreamError, match="did not answer within"):
        await fetch.fetch_page(slow_site + "/slow", allow_private=True, time_limit=0.5)
    assert time.monotonic() - started < 3


async def test_a_streamed_body_is_cut_at_the_cap(slow_site: str) -> None:
    from server.errors import UnprocessableContent

    with pytest.raises(UnprocessableContent) as info:
        await fetch.fetch_page(slow_site + "/endless", allow_private=True, max_bytes=256 * 1024)
    assert info.value.code == "too_large"
