"""Site rules in the store, the sensitive defaults, and the snapshot the extension resolves from."""

from __future__ import annotations

import hashlib
import ipaddress
import json
import time
from functools import lru_cache
from importlib import resources
from typing import Any

from publicsuffixlist import PublicSuffixList

from server import activity, limits
from server.errors import BadRequest, SiteModeRefused
from server.governance.resolver import MODES, Resolution, clean_host, is_ip_literal, resolve
from server.store.db import Store

GLOBAL_DEFAULT = "collect"


@lru_cache(maxsize=1)
def sensitive_defaults() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((resources.files("server.governance") / "sensitive.json").read_text("utf-8"))
    return data


@lru_cache(maxsize=1)
def _psl() -> PublicSuffixList:
    # accept_unknown=False: a name under no listed suffix (an intranet's single-label host such
    # as `intranet` or `nas`) is a site, not a public suffix; `com`, `co.uk`, `github.io` still are
    return PublicSuffixList(accept_unknown=False)


def rule_host(raw: str) -> str:
    """Validate a host a person wants a rule for; refuse public suffixes (github.io, co.uk, com).
    A single-label intranet name (`intranet`, `nas`) is a host like any other."""
    raw = raw.strip()
    host = clean_host(raw)
    if not host or len(host) > 253 or any(c.isspace() or c in "/@?#\\" for c in raw):
        raise BadRequest("host must be a host name such as example.com", code="bad_host_name")
    if host.startswith("["):
        try:
            ipaddress.IPv6Address(host[1:-1])
        except ValueError:
            raise BadRequest("host must be a host name such as example.com", code="bad_host_name") from None
    elif not is_ip_literal(host):
        labels = host.split(".")
        if any(not label or len(label) > 63 for label in labels):
            raise BadRequest("host has an empty or over-long label", code="bad_host_name")
        if host != "localhost" and _psl().is_public(host):
            raise BadRequest(f"{host} is a public suffix; rules apply to a site under it", code="public_suffix")
    return host


async def snapshot(store: Store) -> dict[str, Any]:
    """The current policy; cached on the store and dropped by every rule change."""
    cached = store.policy_cache
    if cached is not None:
        return cached
    rows = await store.fetchall("SELECT host, mode FROM site_rules ORDER BY host")
    rules = [{"host": r["host"], "mode": r["mode"]} for r in rows]
    sens = sensitive_defaults()
    body = {
        "global_default": GLOBAL_DEFAULT,
        "rules": rules,
        "sensitive": {k: sens.get(k, {}) for k in ("domains", "suffixes", "labels", "exact")},
    }
    version = hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()[:16]
    result = {"version": version, **body, "limits": limits.as_dict()}
    store.policy_cache = result
    return result


async def require_collect(store: Store, url_host: str) -> Resolution:
    """The gate of every write that carries a page: 403 unless the host is `collect`."""
    res = await mode_for(store, url_host)
    if res.mode != "collect":
        raise SiteModeRefused(
            f"{res.host} is '{res.mode}' ({res.reason}); nothing from it is stored", mode=res.mode, reason=res.reason
        )
    return res


async def mode_for(store: Store, host: str) -> Resolution:
    return resolve(host, await snapshot(store))


async def put_rule(store: Store, host: str, mode: str) -> dict[str, Any]:
    if mode not in MODES:
        raise BadRequest(f"mode must be one of {MODES}", code="bad_value")
    host = rule_host(host)
    async with store.transaction() as conn:
        await conn.execute(
            "INSERT INTO site_rules(host, mode, updated_at) VALUES (?, ?, ?) "
            "ON CONFLICT(host) DO UPDATE SET mode=excluded.mode, updated_at=excluded.updated_at",
            (host, mode, time.time()),
        )
        await activity.record(conn, "rule", f"{host} and its subdomains: {mode}", source_host=host, detail={"mode": mode})
    store.policy_cache = None
    return {"host": host, "mode": mode}


async def delete_rule(store: Store, host: str) -> bool:
    host = clean_host(host)
    async with store.transaction() as conn:
        cur = await conn.execute("DELETE FROM site_rules WHERE host = ?", (host,))
        removed = cur.rowcount > 0
        if removed:
            await activity.record(conn, "rule", f"{host}: rule removed", source_host=host, detail={"mode": None})
    store.policy_cache = None
    return removed
