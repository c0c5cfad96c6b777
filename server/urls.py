"""URL normalisation and hosts: the one decider of "the same page".

normalise_url: http/https only; scheme and host lowercased; host in ASCII (punycode) without a
trailing dot; default port, user info and fragment dropped; tracking parameters dropped
(courlan's tracker list); remaining parameters sorted; a trailing slash dropped except at the
root. extension/shared/urls.js implements the same rule; both run fixtures/url-cases.json.
"""

from __future__ import annotations

import ipaddress
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import idna
from courlan.clean import TRACKERS_RE

from server.errors import BadRequest

MAX_URL_CHARS = 4096
DEFAULT_PORTS = {"http": 80, "https": 443}


class BadUrl(BadRequest):
    code = "bad_url"


def clean_host(host: str) -> str:
    """Lowercase, strip a port and trailing dots; IDN to punycode. '' when nothing is left."""
    h = (host or "").strip().lower()
    if h.startswith("["):
        end = h.find("]")
        return h[: end + 1] if end > 0 else ""
    if h.count(":") == 1:
        h = h.split(":", 1)[0]
    elif h.count(":") > 1:  # a bare IPv6 literal
        return f"[{h}]"
    h = h.rstrip(".")
    if not h:
        return ""
    return to_ascii(h) or h.lower()


def normalise_host(host: str) -> str:
    """clean_host, refusing (BadUrl) an empty host or an invalid internationalised name."""
    h = clean_host(host)
    if not h:
        raise BadUrl("URL has no host")
    if not h.isascii():
        raise BadUrl("host is not a valid internationalised name")
    return h


def to_ascii(host: str) -> str | None:
    """A host name as browsers send it: ASCII, IDNs by UTS #46 non-transitional processing (the
    WHATWG URL rule, so `faß.de` is `xn--fa-hia.de`, as in Chrome's address bar); None when an
    internationalised name is invalid. An ASCII name is only lowercased."""
    if host.isascii():
        return host.lower()
    try:
        mapped = idna.uts46_remap(host, std3_rules=False, transitional=False)
        labels = mapped.split(".")
        if any(not label for label in labels):
            return None
        return ".".join(
            label if label.isascii() else "xn--" + label.encode("punycode").decode("ascii") for label in labels
        ).lower()
    except (idna.IDNAError, UnicodeError):
        return None


def normalise_url(raw: str) -> str:
    if not isinstance(raw, str) or not raw.strip():
        raise BadUrl("url is required")
    if len(raw) > MAX_URL_CHARS:
        raise BadUrl(f"url longer than {MAX_URL_CHARS} characters")
    try:
        parts = urlsplit(raw.strip())
        port = parts.port
    except ValueError:
        raise BadUrl("url cannot be parsed") from None
    scheme = parts.scheme.lower()
    if scheme not in DEFAULT_PORTS:
        raise BadUrl("only http and https pages can be stored", scheme=scheme or "")
    host = normalise_host(parts.hostname or "")
    netloc = host if port in (None, DEFAULT_PORTS[scheme]) else f"{host}:{port}"
    path = parts.path or "/"
    if len(path) > 1 and path.endswith("/"):
        path = path.rstrip("/") or "/"
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if not TRACKERS_RE.search(k.lower())]
    query.sort(key=lambda kv: kv[0])
    return urlunsplit((scheme, netloc, path, urlencode(query), ""))


def host_of(url: str) -> str:
    """The normalised host of an already normalised (or raw) URL."""
    try:
        parts = urlsplit(url)
        return normalise_host(parts.hostname or "")
    except ValueError:
        raise BadUrl("url cannot be parsed") from None


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
    '.' + another clean host), which tests/test_host_rule.py checks on the shared vectors."""
    if not (column.replace(".", "").replace("_", "").isalnum() and param.replace("_", "").isalnum()):
        raise ValueError("host_clause takes a column name and a parameter name")
    p = f":{param}"
    return (
        f"({p} != '' AND ({column} = {p} OR (length({column}) > length({p}) + 1 "
        f"AND substr({column}, -length({p}) - 1) = '.' || {p})))"
    )
