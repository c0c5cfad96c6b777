"""The page-probe cache: answers per normalised page for 30 s, dropped by any write or forget
that touches the page (by URL) or the site (by host, subdomains included)."""

from __future__ import annotations

import time
from typing import Any

from server.urls import host_or_subdomain

TTL_SECONDS = 30.0


class ProbeCache:
    def __init__(self, ttl: float = TTL_SECONDS, max_entries: int = 10_000) -> None:
        self.ttl = ttl
        self.max_entries = max_entries
        self._items: dict[str, tuple[float, str, dict[str, Any]]] = {}

    def get(self, url: str) -> dict[str, Any] | None:
        item = self._items.get(url)
        if item is None:
            return None
        expires, _host, value = item
        if expires < time.monotonic():
            del self._items[url]
            return None
        return value

    def put(self, url: str, host: str, value: dict[str, Any]) -> None:
        if len(self._items) >= self.max_entries:
            self._items.clear()
        self._items[url] = (time.monotonic() + self.ttl, host, value)

    def invalidate_url(self, url: str) -> None:
        self._items.pop(url, None)

    def invalidate_host(self, host: str) -> None:
        """Drop every page of `host` and of its subdomains."""
        for key, (_e, h, _v) in list(self._items.items()):
            if host_or_subdomain(h, host):
                del self._items[key]

    def clear(self) -> None:
        self._items.clear()
