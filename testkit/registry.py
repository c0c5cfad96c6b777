"""The chat-site registry (extension/sites/registry.json) as Python reads it: the site ids and
hosts the farm runs, Chrome match patterns, and which chat site a URL is.

The one Python match-pattern parser (`parse_match_pattern`); its JavaScript twin is
extension/shared/sites.js `parseMatchPattern`. Both run fixtures/match-pattern-cases.json
(tests/vectors/test_chat_site_cases.py, tests/js/sites.test.mjs), as both matchers run
fixtures/chat-site-cases.json.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
REGISTRY_PATH = ROOT / "extension" / "sites" / "registry.json"

_SCHEMES = ("*", "http", "https", "file", "ftp", "urn")
_HOST = re.compile(r"(\[[0-9a-f:.]+\]|[a-z0-9.-]+)(:\d+)?")


@functools.cache
def load() -> dict[str, Any]:
    """The registry, read once."""
    data: dict[str, Any] = json.loads(REGISTRY_PATH.read_text("utf-8"))
    return data


def site_ids() -> tuple[str, ...]:
    """Every chat site's id, in the registry's order (sorted by id)."""
    return tuple(str(s["id"]) for s in load()["sites"])


def site_hosts() -> dict[str, tuple[str, ...]]:
    """The hosts of each site (first = the main one)."""
    return {str(s["id"]): tuple(s["hosts"]) for s in load()["sites"]}


@dataclass(frozen=True)
class MatchPattern:
    scheme: str  # "*", "http", "https", ...; "<all_urls>" for that pattern
    host: str  # "", "*", "*.example.com" or "example.com[:port]"
    path: str  # starts with "/"; "" for <all_urls>

    @property
    def bare_host(self) -> str:
        """The host without its `*.` (empty for `*` and <all_urls>)."""
        return "" if self.host == "*" else self.host.removeprefix("*.")


def parse_match_pattern(pattern: str) -> MatchPattern | None:
    """A Chrome match pattern split into scheme, host and path, or None when Chrome would refuse it."""
    if pattern == "<all_urls>":
        return MatchPattern("<all_urls>", "", "")
    m = re.fullmatch(r"([^:/]+)://([^/]*)(/.*)", pattern, re.S)
    if not m or m[1] not in _SCHEMES:
        return None
    scheme, host, path = m[1], m[2], m[3]
    if scheme == "file":
        return MatchPattern(scheme, host, path) if host == "" else None
    if host == "*":
        return MatchPattern(scheme, host, path)
    bare = host.removeprefix("*.")
    if not bare or "*" in bare or not _HOST.fullmatch(bare):
        return None
    return MatchPattern(scheme, host, path)


def match_pattern_regex(pattern: str) -> re.Pattern[str] | None:
    """A web (http, https or *) match pattern as a regex over a whole href, or None."""
    mp = parse_match_pattern(pattern)
    if mp is None or mp.scheme not in ("*", "http", "https"):
        return None
    scheme = "https?" if mp.scheme == "*" else mp.scheme
    if mp.host == "*":
        host = "[^/]+"
    elif mp.host.startswith("*."):
        host = r"(?:[^/]+\.)?" + re.escape(mp.bare_host)
    else:
        host = re.escape(mp.host)
    path = ".*".join(re.escape(p) for p in mp.path.split("*"))
    return re.compile(f"{scheme}://{host}(?::\\d+)?{path}", re.S)


def site_for_url(url: str, registry: dict[str, Any] | None = None) -> str | None:
    """The registry id of the chat site whose match patterns cover `url` (fragment ignored)."""
    reg = registry if registry is not None else load()
    href = url.split("#", 1)[0]
    for site in reg.get("sites", []):
        for pattern in site.get("matches", []):
            rx = match_pattern_regex(pattern)
            if rx is not None and rx.fullmatch(href):
                return str(site["id"])
    return None


def pattern_host(pattern: str) -> str:
    """The host of a match pattern without its `*.`, or "" (host `*`, <all_urls>, not a pattern)."""
    mp = parse_match_pattern(pattern)
    return mp.bare_host if mp is not None else ""
