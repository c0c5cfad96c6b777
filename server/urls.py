"""URL normalisation and hosts: the one decider of "the same page".

normalise_url: http/https only; scheme and host lowercased; host in ASCII (punycode) without a
trailing dot; default port, user info and fragment dropped; tracking parameters dropped
(courlan's tracker list); remaining parameters sorted; a trailing slash dropped except at the
root. extension/shared/urls.js implements the same rule; both run fixtures/url-cases.json.
"""

from __future__ import annotations

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
