"""The add_url fetcher: only public http(s) destinations, bounded in size, time and redirects.

Refused (DestinationRefused, 400), before any byte is sent:
- a scheme other than http/https, user info in the URL;
- a destination address that is loopback, private (RFC 1918, unique-local), link-local
  (169.254/16 and fe80::/10: cloud metadata lives there), multicast, reserved, unspecified,
  shared (100.64/10) or otherwise not globally routable; IPv4 embedded in IPv6 (mapped
  ::ffff:a.b.c.d, compatible, 6to4, NAT64 64:ff9b::/96: server.urls.embedded_ipv4, the rule the
  site-mode resolver uses too) is judged as that IPv4; Teredo as itself (not global).
Every hop's URL is read by the WHATWG URL parser (server.urls, the parser Chrome's rule
follows), and the request is made to that canonical URL: the host that is checked is the host
that is connected to (`127。0。0。1`, `１２７.0.0.1`, `2130706433`, `0x7f000001` are all
127.0.0.1 before any check). A URL the parser refuses is refused.
A host name is resolved by the connector's own resolver (`VettedResolver`), which checks
every address the name resolves to and hands aiohttp only those checked addresses: aiohttp
connects to what was checked, so a DNS answer that changes between check and connect
(rebinding) has nothing to change. IP literals never reach a resolver: they are checked in
`check_url` and again at connect time by the socket factory (`VettedSockets`), which vets
every address a socket is opened to, whatever path led there.
Redirects are followed by hand, at most MAX_REDIRECTS; each hop is checked again, and the
caller's `gate` (the site-mode check) runs on each hop's URL BEFORE it is requested.

`allow_private_fetch` (tests only) relaxes loopback and private addresses and nothing else:
link-local, metadata, multicast, reserved and unspecified addresses stay refused.

Other failures: non-HTML content -> 422 (UnprocessableContent), a page larger than
MAX_BYTES -> 422, upstream errors, HTTP errors, timeouts -> 502 (UpstreamError).
"""

from __future__ import annotations

import asyncio
import dataclasses
import ipaddress
import socket
from collections.abc import Awaitable, Callable
from typing import Any

import ada_url
import aiohttp
from aiohttp.abc import AbstractResolver, ResolveResult

from server.errors import BadRequest, UnprocessableContent, UpstreamError
from server.urls import MAX_URL_CHARS, clean_host, embedded_ipv4

Gate = Callable[[str], Awaitable[object]]

MAX_BYTES = 5 * 1024 * 1024
TOTAL_TIMEOUT = 20.0
MAX_REDIRECTS = 5
USER_AGENT = "Wherefrom/0.1 (local library; +https://github.com/wherefrom)"
HTML_TYPES = ("text/html", "application/xhtml+xml")
TEXT_TYPES = ("text/plain",)
REDIRECTS = (301, 302, 303, 307, 308)
IpAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

_RELAXABLE = ("loopback", "private")


class DestinationRefused(BadRequest):
    code = "destination_refused"


class _RefusedAddress(OSError):
    """Raised inside the resolver; aiohttp wraps OSErrors, we unwrap this one."""

    def __init__(self, host: str, address: str, reason: str, message: str | None = None) -> None:
        super().__init__(message or f"{host} resolves to {address} ({reason})")
        self.host, self.address, self.reason = host, address, reason


@dataclasses.dataclass(frozen=True)
class Fetched:
    url: str  # the final URL after redirects
    content_type: str  # 'text/html', 'text/plain', ...
    text: str
    redirects: int


def address_refusal(ip: IpAddress, *, allow_private: bool = False) -> str | None:
    """Why `ip` may not be fetched, or None when it is a public address."""
    if isinstance(ip, ipaddress.IPv6Address):
        embedded = embedded_ipv4(ip)
        if embedded is not None:
            reason = address_refusal(embedded, allow_private=allow_private)
            return f"{reason}, embedded in IPv6" if reason else None
    reason = None
    if ip.is_unspecified:
        reason = "unspecified"
    elif ip.is_loopback:
        reason = "loopback"
    elif ip.is_link_local:
        reason = "link-local"
    elif ip.is_multicast:
        reason = "multicast"
    elif ip.is_reserved:
        reason = "reserved"
    elif ip.is_private:
        reason = "private"
    elif not ip.is_global:
        reason = "not globally routable"
    if reason in _RELAXABLE and allow_private:
        return None
    return reason


def parse_ip(host: str) -> IpAddress | None:
    try:
        return ipaddress.ip_address(host.strip("[]").split("%")[0])
    except ValueError:
        return None


def check_url(url: str, *, allow_private: bool = False, base: str | None = None) -> str:
    """Validate one hop's URL (scheme, host, IP literal) as the WHATWG parser reads it (relative
    to `base` for a redirect's Location); return its canonical form without the fragment."""
    if len(url) > MAX_URL_CHARS:
        raise DestinationRefused(f"the URL is longer than {MAX_URL_CHARS} characters")
    try:
        parsed = ada_url.URL(url, base=base)
    except ValueError:
        raise DestinationRefused("the URL cannot be parsed", url=url) from None
    if parsed.protocol not in ("http:", "https:"):
        raise DestinationRefused("only http and https pages can be fetched", url=url)
    host = parsed.hostname
    if not host:
        raise DestinationRefused("the URL has no host", url=url)
    if parsed.username or parsed.password:
        raise DestinationRefused("URLs with a user name or password are not fetched", url=url)
    ip = parse_ip(host)
    if ip is not None:
        reason = address_refusal(ip, allow_private=allow_private)
        if reason:
            raise DestinationRefused(f"{host} is a {reason} address; it is not fetched", url=url, reason=reason)
    elif not clean_host(host):  # the one host rule: unverifiable punycode, forbidden code points
        raise DestinationRefused("the URL's host cannot be read", url=url)
    parsed.hash = ""
    return str(parsed.href)


class VettedSockets:
    """aiohttp's socket factory: every socket is opened only to a checked address, so an IP
    literal (which aiohttp never hands to the resolver) is vetted at connect time too."""

    def __init__(self, *, allow_private: bool = False) -> None:
        self.allow_private = allow_private
        self.refused: _RefusedAddress | None = None

    def __call__(self, addr_info: tuple[Any, ...]) -> socket.socket:
        family, type_, proto, _canon, sockaddr = addr_info
        address = str(sockaddr[0])
        ip = parse_ip(address)
        reason = "unparsable address" if ip is None else address_refusal(ip, allow_private=self.allow_private)
        if reason:
            self.refused = _RefusedAddress(address, address, reason, f"{address} is a {reason} address")
            raise self.refused
        return socket.socket(family=family, type=type_, proto=proto)


class VettedResolver(AbstractResolver):
    """Resolves a name, checks every address, and returns only checked addresses."""

    def __init__(self, *, allow_private: bool = False) -> None:
        self.allow_private = allow_private

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        loop = asyncio.get_running_loop()
        infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM, family=family)
        results: list[ResolveResult] = []
        for fam, _type, proto, _canon, sockaddr in infos:
            address = str(sockaddr[0])
            ip = parse_ip(address)
            if ip is None:
                raise _RefusedAddress(host, address, "unparsable address")
            reason = address_refusal(ip, allow_private=self.allow_private)
            if reason:
                # one bad address refuses the name: a mixed answer is how rebinding is staged
                raise _RefusedAddress(host, address, reason)
            results.append(
                ResolveResult(
                    hostname=host,
                    host=address,
                    port=int(sockaddr[1]),
                    family=fam,
                    proto=proto,
                    flags=socket.AI_NUMERICHOST | socket.AI_NUMERICSERV,
                )
            )
        if not results:
            raise OSError(f"{host} has no address")
        return results

    async def close(self) -> None:
        return None


async def fetch_page(
    url: str,
    *,
    allow_private: bool = False,
    max_bytes: int = MAX_BYTES,
    time_limit: float = TOTAL_TIMEOUT,
    gate: Gate | None = None,
) -> Fetched:
    """Fetch an HTML (or plain-text) page under the rules in the module docstring. `gate(url)`
    runs before each hop is requested and refuses it by raising."""
    current = check_url(url, allow_private=allow_private)
    sockets = VettedSockets(allow_private=allow_private)
    connector = aiohttp.TCPConnector(
        resolver=VettedResolver(allow_private=allow_private),
        use_dns_cache=False,
        limit=4,
        force_close=True,
        socket_factory=sockets,
    )
    headers = {"User-Agent": USER_AGENT, "Accept": "text/html,application/xhtml+xml;q=0.9,text/plain;q=0.5"}
    try:
        async with (
            asyncio.timeout(time_limit),
            aiohttp.ClientSession(
                connector=connector,
                timeout=aiohttp.ClientTimeout(total=time_limit),
                headers=headers,
                cookie_jar=aiohttp.DummyCookieJar(),
                trust_env=False,
            ) as session,
        ):
            for hop in range(MAX_REDIRECTS + 1):
                if gate is not None:
                    await gate(current)
                async with session.get(current, allow_redirects=False) as resp:
                    if resp.status in REDIRECTS:
                        location = resp.headers.get("Location")
                        if not location:
                            raise UpstreamError(f"HTTP {resp.status} redirect without a Location", url=current)
                        if hop == MAX_REDIRECTS:
                            raise UpstreamError(f"more than {MAX_REDIRECTS} redirects", url=url)
                        target = location
                        try:
                            current = check_url(location, allow_private=allow_private, base=current)
                        except DestinationRefused as err:
                            raise DestinationRefused(
                                f"redirect refused: {err.message}", url=url, redirect=target, **_reason(err)
                            ) from None
                        continue
                    if resp.status >= 400:
                        raise UpstreamError(
                            f"the page answered HTTP {resp.status}", url=current, upstream_status=resp.status
                        )
                    if resp.status != 200:
                        raise UpstreamError(
                            f"the page answered HTTP {resp.status}, not a page",
                            url=current,
                            upstream_status=resp.status,
                        )
                    return await _read(resp, current, hop, max_bytes)
    except _RefusedAddress as err:
        raise DestinationRefused(str(err), url=url, reason=err.reason) from None
    except aiohttp.ClientConnectorError as err:
        if isinstance(err.os_error, _RefusedAddress) or sockets.refused is not None:
            refused = err.os_error if isinstance(err.os_error, _RefusedAddress) else sockets.refused
            assert refused is not None
            raise DestinationRefused(f"{refused}; it is not fetched", url=url, reason=refused.reason) from None
        if isinstance(err, aiohttp.ClientConnectorDNSError):
            raise UpstreamError(f"cannot resolve {err.host}", url=url) from None
        raise UpstreamError(f"cannot connect to {err.host}:{err.port}", url=url) from None
    except (TimeoutError, aiohttp.ServerTimeoutError):
        raise UpstreamError(f"the page did not answer within {time_limit:g} s", url=url) from None
    except aiohttp.InvalidURL:
        raise DestinationRefused("the URL is not a fetchable address", url=url) from None
    except aiohttp.ClientError as err:
        raise UpstreamError(f"fetching the page failed: {type(err).__name__}", url=url) from None
    raise UpstreamError("no answer", url=url)  # pragma: no cover - the loop always returns or raises


def _reason(err: DestinationRefused) -> dict[str, Any]:
    return {"reason": err.extra["reason"]} if "reason" in err.extra else {}


async def _read(resp: aiohttp.ClientResponse, url: str, redirects: int, max_bytes: int) -> Fetched:
    ctype = (resp.content_type or "").lower()
    if ctype not in HTML_TYPES + TEXT_TYPES and ctype != "application/octet-stream":
        raise UnprocessableContent(
            f"the page is {ctype or 'of no declared type'}, not HTML; only web pages can be added",
            code="not_html",
            content_type=ctype,
        )
    declared = resp.content_length
    if declared is not None and declared > max_bytes:
        raise UnprocessableContent(
            f"the page is larger than {max_bytes // (1024 * 1024)} MB", code="too_large", limit=max_bytes
        )
    buf = bytearray()
    async for block in resp.content.iter_chunked(64 * 1024):
        buf += block
        if len(buf) > max_bytes:
            raise UnprocessableContent(
                f"the page is larger than {max_bytes // (1024 * 1024)} MB", code="too_large", limit=max_bytes
            )
    raw = bytes(buf)
    if ctype == "application/octet-stream":
        head = raw[:1024].lstrip().lower()
        if not (head.startswith((b"<!doctype html", b"<html")) or b"<html" in head):
            raise UnprocessableContent(
                "the page is not HTML; only web pages can be added", code="not_html", content_type=ctype
            )
        ctype = "text/html"
    text = await asyncio.get_running_loop().run_in_executor(None, _decode, raw, resp.charset)
    return Fetched(url=url, content_type=ctype, text=text, redirects=redirects)


def _decode(raw: bytes, charset: str | None) -> str:
    if charset:
        try:
            return raw.decode(charset, errors="replace")
        except LookupError:
            pass
    from trafilatura.utils import decode_file

    text = decode_file(raw)
    return text if isinstance(text, str) else raw.decode("utf-8", errors="replace")
