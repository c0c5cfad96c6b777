"""Typed application keys, declared in one place."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from aiohttp import web

if TYPE_CHECKING:
    from server.settings import Settings
    from server.store.db import Store

SETTINGS: web.AppKey[Settings] = web.AppKey("settings")
STORE: web.AppKey[Store] = web.AppKey("store")
TOKEN: web.AppKey[str] = web.AppKey("token")
STARTED_AT: web.AppKey[float] = web.AppKey("started_at")
# per-feature state (probe cache, forget confirmations, ...) lives under its own key
STATE: web.AppKey[dict[str, Any]] = web.AppKey("state")

# per-request: whether the bearer token was valid
AUTHED: web.RequestKey[bool] = web.RequestKey("authed", bool)
# per-request: the JSON body as received (for the opt-in ledger)
RAW_BODY: web.RequestKey[bytes] = web.RequestKey("raw_body", bytes)

if TYPE_CHECKING:
    from server.probe_cache import ProbeCache
PROBE_CACHE: web.AppKey[ProbeCache] = web.AppKey("probe_cache")
