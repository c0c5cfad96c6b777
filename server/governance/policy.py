"""Site rules in the store, the sensitive defaults, and the snapshot the extension resolves from."""

from __future__ import annotations

import asyncio
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


def covers_subdomains(host: str) -> bool:
    """Does a rule (or a forget) on `host` also cover its subdomains? Yes, except on an IP
    literal (it has none) and on a public suffix (`com`, `co.uk`, `github.io`, and single-label
    names that are also top-level domains: `wiki`, `dev`, `app`): a page can be stored from the
    host itself (an intranet's `http://wiki/`), so the host is governable, but a rule on it never
    reaches the sites under it. The snapshot marks such a rule `exact`; both resolvers obey it."""
    return not is_ip_literal(host) and (host == "localhost" or not _psl().is_public(host))


def rule_host(raw: str) -> str:
    """Validate a host a person wants a rule for (or to forget). Any host a page can be stored
    from is accepted; see covers_subdomains for what a rule on a public suffix covers."""
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
    return host


def scope_words(host: str) -> str:
    """How an activity line names what a rule or a forget on `host` covers."""
    return f"{host} and its subdomains" if covers_subdomains(host) else f"{host} (this host only)"


class PolicyOwner:
    """The one owner of the current policy snapshot (app state under appkeys.POLICY).

    Site rules are read from the store once and kept until a rule change replaces them
    (`put_rule` / `delete_rule` reload before they answer), so deciding a mode never queries the
    store. `current` is what the SQL visibility function (server.governance.visibility) reads: it
    is loaded at start (`load`) and swapped whole, never mutated in place.
    """

    def __init__(self, store: Store) -> None:
        self.store = store
        self._current: dict[str, Any] | None = None
        self._mark: tuple[int, float] | None = None
        # loads run one at a time, each reading the rules as they are when it starts: a load that
        # read the rules before a rule change can never finish after the change's own load and
        # put the older snapshot back
        self._loading = asyncio.Lock()

    @property
    def current(self) -> dict[str, Any]:
        if self._current is None:
            raise RuntimeError("the policy is read before it was loaded (PolicyOwner.load)")
        return self._current

    async def load(self) -> dict[str, Any]:
        """Read the rules and build the snapshot the extension and the server resolve from."""
        async with self._loading:
            return await self._load()

    async def _load(self) -> dict[str, Any]:
        row = await self.store.fetchone("SELECT COUNT(*), COALESCE(MAX(updated_at), 0) FROM site_rules")
        self._mark = (int(row[0]), float(row[1])) if row else (0, 0.0)
        rows = await self.store.fetchall("SELECT host, mode FROM site_rules ORDER BY host")
        rules: list[dict[str, Any]] = [
            {"host": r["host"], "mode": r["mode"], **({} if covers_subdomains(r["host"]) else {"exact": True})}
            for r in rows
        ]
        sens = sensitive_defaults()
        body = {
            "global_default": GLOBAL_DEFAULT,
            "rules": rules,
            "sensitive": {k: sens.get(k, {}) for k in ("domains", "suffixes", "labels", "exact")},
        }
        version = hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()[:16]
        self._current = {"version": version, **body, "limits": limits.as_dict()}
        return self._current

    async def refresh(self) -> dict[str, Any]:
        """Reload when the stored rules changed since the last load (another process edited them)."""
        row = await self.store.fetchone("SELECT COUNT(*), COALESCE(MAX(updated_at), 0) FROM site_rules")
        mark = (int(row[0]), float(row[1])) if row else (0, 0.0)
        if self._current is None or mark != self._mark:
            await self.load()
        return self.current

    async def snapshot(self) -> dict[str, Any]:
        return self._current if self._current is not None else await self.load()

    async def mode_for(self, host: str) -> Resolution:
        return resolve(host, await self.snapshot())

    async def require_collect(self, url_host: str) -> Resolution:
        """The gate of every write that carries a page: 403 unless the host is `collect`."""
        res = await self.mode_for(url_host)
        if res.mode != "collect":
            raise SiteModeRefused(
                f"{res.host} is '{res.mode}' ({res.reason}); nothing from it is stored",
                mode=res.mode,
                reason=res.reason,
            )
        return res

    async def put_rule(self, host: str, mode: str) -> dict[str, Any]:
        if mode not in MODES:
            raise BadRequest(f"mode must be one of {MODES}", code="bad_value")
        host = rule_host(host)
        async with self.store.transaction() as conn:
            await conn.execute(
                "INSERT INTO site_rules(host, mode, updated_at) VALUES (?, ?, ?) "
                "ON CONFLICT(host) DO UPDATE SET mode=excluded.mode, updated_at=excluded.updated_at",
                (host, mode, time.time()),
            )
            await activity.record(conn, "rule", f"{scope_words(host)}: {mode}", source_host=host, detail={"mode": mode})
        await self.load()
        return {"host": host, "mode": mode}

    async def delete_rule(self, host: str) -> bool:
        host = clean_host(host)
        async with self.store.transaction() as conn:
            cur = await conn.execute("DELETE FROM site_rules WHERE host = ?", (host,))
            removed = cur.rowcount > 0
            if removed:
                await activity.record(conn, "rule", f"{host}: rule removed", source_host=host, detail={"mode": None})
        await self.load()
        return removed
