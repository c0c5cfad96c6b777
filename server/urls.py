"""URL normalisation and hosts: the one decider of "the same page".

Parsing is the WHATWG URL standard (ada-url, the parser Node's `URL` is built on), so the
server reads a URL exactly as Chrome and the HTTP client will: `127。0。0。1`, `１２７.0.0.1`,
`2130706433`, `0x7f000001`, `0177.0.0.1` and `127.1` are all `127.0.0.1`; `chase%2Ecom` is
`chase.com`; IDNs go through UTS #46 (non-transitional) to punycode.

normalise_url: http/https only; the WHATWG parse (scheme and host lowercased, host canonical,
dot segments resolved, default port dropped); user info and fragment dropped; trailing dots of
the host dropped; tracking parameters dropped (courlan's tracker list); remaining parameters
sorted; a trailing slash dropped except at the root. extension/shared/urls.js implements the
same rule on the platform `URL`; both run fixtures/url-cases.json.

A host the WHATWG parser refuses, or whose punycode labels do not decode to a name it accepts
(`xn--a`, `xn--zn7c.com`), cannot be cleaned: normalise_host refuses it and clean_host gives ''.
"""

from __future__ import annotations

import ipaddress
import re
from urllib.parse import parse_qsl, urlencode

import ada_url
from courlan.clean import TRACKERS_RE

from server.errors import BadRequest

MAX_URL_CHARS = 4096
DEFAULT_PORTS = {"http": 80, "https": 443}
_HOST_DELIMITERS = frozenset("/\\?#@")


class BadUrl(BadRequest):
    code = "bad_url"


def _parse(raw: str) -> ada_url.URL | None:
    try:
        return ada_url.URL(raw)
    except ValueError:
        return None


def _punycode_ok(host: str) -> bool:
    """Every `xn--` label decodes to a name that encodes back to itself (WHATWG's ToASCII
    verifies this; ada-url 4 skips it)."""
    for label in host.split("."):
        if not label.startswith("xn--"):
            continue
        try:
            uni = label[4:].encode("ascii").decode("punycode")
        except (UnicodeError, ValueError):
            return False
        if not uni or uni.isascii():
            return False
        again = _parse(f"http://{uni}/")
        if again is None or again.hostname != label:
            return False
    return True


# a code point the WHATWG host parser never leaves in a domain (extension/shared/urls.js checks
# the same: Chrome leaves some, e.g. a space as `%20`)
_FORBIDDEN_IN_DOMAIN = re.compile(r"[\x00-\x20#%/:<>?@\[\\\]^|\x7f]")


def _finish(hostname: str) -> str:
    """A parsed hostname in our form: trailing dots dropped, punycode verified; '' if invalid."""
    h = hostname if hostname.startswith("[") else hostname.rstrip(".")
    if not h or not h.isascii():
        return ""
    if not h.startswith("[") and (_FORBIDDEN_IN_DOMAIN.search(h) or not _punycode_ok(h)):
        return ""
    return h


def clean_host(host: str) -> str:
    """A host (with or without port, IPv6 with or without brackets) as the WHATWG URL parser
    reads it in an http URL, without trailing dots. '' when nothing valid is left."""
    h = (host or "").strip()
    if not h or any(c in _HOST_DELIMITERS for c in h):
        return ""
    if not h.startswith("[") and h.count(":") > 1:  # a bare IPv6 literal
        h = f"[{h}]"
    parsed = _parse(f"http://{h}/")
    if parsed is None:
        return ""
    return _finish(parsed.hostname)


def normalise_host(host: str) -> str:
    """clean_host, refusing (BadUrl) an empty host or one that cannot be cleaned."""
    if not (host or "").strip():
        raise BadUrl("URL has no host")
    h = clean_host(host)
    if not h:
        raise BadUrl("host is not a valid host name")
    return h


def to_ascii(host: str) -> str | None:
    """A host name as browsers send it (clean_host); None when it cannot be cleaned."""
    return clean_host(host) or None


def _parse_url(raw: object) -> ada_url.URL:
    if not isinstance(raw, str) or not raw.strip():
        raise BadUrl("url is required")
    if len(raw) > MAX_URL_CHARS:
        raise BadUrl(f"url longer than {MAX_URL_CHARS} characters")
    parsed = _parse(raw)
    if parsed is None:
        raise BadUrl("url cannot be parsed")
    return parsed


def normalise_url(raw: str) -> str:
    parsed = _parse_url(raw)
    scheme = parsed.protocol[:-1]
    if scheme not in DEFAULT_PORTS:
        raise BadUrl("only http and https pages can be stored", scheme=scheme)
    host = _finish(parsed.hostname)
    if not host:
        raise BadUrl("host is not a valid host name")
    netloc = f"{host}:{parsed.port}" if parsed.port else host  # WHATWG already drops a default port
    path = parsed.pathname or "/"
    if len(path) > 1 and path.endswith("/"):
        path = path.rstrip("/") or "/"
    query = [
        (k, v) for k, v in parse_qsl(parsed.search[1:], keep_blank_values=True) if not TRACKERS_RE.search(k.lower())
    ]
    query.sort(key=lambda kv: kv[0])
    encoded = urlencode(query)
    return f"{scheme}://{netloc}{path}{'?' + encoded if encoded else ''}"


def host_of(url: str) -> str:
    """The normalised host of an already normalised (or raw) URL."""
    parsed = _parse_url(url)
    host = _finish(parsed.hostname)
    if not host:
        raise BadUrl("URL has no valid host")
    return host


# ---------------------------------------------------------------- "this host or a subdomain of it"
# The one rule (extension/shared/urls.js hostOrSubdomain mirrors it; both, and host_clause in
# SQL, run fixtures/host-cases.json). Hosts are compared as clean_host gives them.


def is_ip_literal(host: str) -> bool:
    """An IPv6 literal in brackets or an IPv4/IPv6 address: it has no parents or subdomains."""
    if host.startswith("["):
        return True
    try:
        ipaddress.ip_address(host)
        return True
    except ValueError:
        return False


_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")


def embedded_ipv4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """THE rule for the IPv4 address an IPv6 address carries (the site-mode resolver and the
    fetcher's address check both judge such an address as that IPv4; extension/shared/urls.js
    embeddedIPv4 is the same rule): mapped ::ffff:a.b.c.d, 6to4 2002:AABB:CCDD::, NAT64
    64:ff9b::a.b.c.d, IPv4-compatible ::a.b.c.d (any address in ::/96 but :: and ::1, so ::2 is
    0.0.0.2: local, as 0.0.0.0/8 is); None otherwise. A Teredo address (2001:0::/32) is judged as
    itself: inside 2001::/23, not global, so local to both (its client's IPv4 would let one
    through whenever that client is public)."""
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip in _NAT64:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    if int(ip) >> 32 == 0 and int(ip) > 1:
        return ipaddress.IPv4Address(int(ip))
    return None


def mapped_ipv4_spelling(host: str) -> str | None:
    """The IPv4 literal an IPv4-mapped IPv6 host spells (`[::ffff:102:304]` -> `1.2.3.4`), so a
    rule on an IPv4 address also covers it; None for any other host."""
    if not host.startswith("["):
        return None
    try:
        ip = ipaddress.IPv6Address(host[1:-1])
    except ValueError:
        return None
    return str(ip.ipv4_mapped) if ip.ipv4_mapped is not None else None


def host_parents(host: str) -> list[str]:
    """host itself, then each parent by whole labels: a.b.c -> [a.b.c, b.c, c]; an IP literal
    or '' only itself (or nothing)."""
    if not host:
        return []
    if is_ip_literal(host):
        return [host]
    labels = host.split(".")
    return [".".join(labels[i:]) for i in range(len(labels))]


def host_or_subdomain(host: str, parent: str) -> bool:
    """Is `host` the host `parent` or a subdomain of it, on whole labels? (`example.com` covers
    `a.example.com`, never `notexample.com`; an IP literal covers only itself.)"""
    if not host or not parent:
        return False
    return host == parent or (not is_ip_literal(host) and host.endswith("." + parent))


def host_clause(column: str, param: str) -> str:
    """SQL for host_or_subdomain(<column>, :<param>), with `param` a named parameter holding a
    cleaned host. It agrees with host_or_subdomain on clean hosts (no clean IP literal ends in
    '.' + another clean host), which tests/vectors/test_host_rule.py checks on the shared vectors."""
    if not (column.replace(".", "").replace("_", "").isalnum() and param.replace("_", "").isalnum()):
        raise ValueError("host_clause takes a column name and a parameter name")
    p = f":{param}"
    return (
        f"({p} != '' AND ({column} = {p} OR (length({column}) > length({p}) + 1 "
        f"AND substr({column}, -length({p}) - 1) = '.' || {p})))"
    )
