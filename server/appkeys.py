"""Typed application keys, declared in one place: every piece of in-memory server state has
one key here (no attribute on the Store, no untyped bag)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from aiohttp import web

if TYPE_CHECKING:
    from server.api import Api
    from server.governance.policy import PolicyOwner
    from server.idempotency import KeyLocks
    from server.meaning.embedder import Embedder
    from server.memory.forget import Confirmations
    from server.probe_cache import ProbeCache
    from server.quiet import Quiet
    from server.settings import Settings
    from server.store.db import Store
    from server.store.fts_merge import FtsMerger

SETTINGS: web.AppKey[Settings] = web.AppKey("settings")
STORE: web.AppKey[Store] = web.AppKey("store")
TOKEN: web.AppKey[str] = web.AppKey("token")
STARTED_AT: web.AppKey[float] = web.AppKey("started_at")
# the owner of the current policy snapshot (site rules + sensitive defaults); set with the store
POLICY: web.AppKey[PolicyOwner] = web.AppKey("policy")
# the background embedder and the in-memory vector index it keeps (server.meaning)
EMBEDDER: web.AppKey[Embedder] = web.AppKey("embedder")
FTS_MERGER: web.AppKey[FtsMerger] = web.AppKey("fts_merger")
# whether anyone is asking: the second model's build takes both cores only while no one is
QUIET: web.AppKey[Quiet] = web.AppKey("quiet")
# page-probe answers per normalised page (30 s)
PROBE_CACHE: web.AppKey[ProbeCache] = web.AppKey("probe_cache")
# outstanding forget dry-run confirmations (8 s)
FORGET_CONFIRMATIONS: web.AppKey[Confirmations] = web.AppKey("forget_confirmations")
# one lock per Idempotency-Key while any request holds or waits on it
IDEMPOTENCY_LOCKS: web.AppKey[KeyLocks] = web.AppKey("idempotency_locks")

# the route declarations the app was built from (the OpenAPI document reads them)
ROUTE_APIS: web.AppKey[list[Api]] = web.AppKey("route_apis")

# per-request: whether the bearer token was valid
AUTHED: web.RequestKey[bool] = web.RequestKey("authed", bool)
# per-request: the JSON body as received (for the opt-in ledger)
RAW_BODY: web.RequestKey[bytes] = web.RequestKey("raw_body", bytes)
