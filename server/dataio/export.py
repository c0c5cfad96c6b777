"""The export's readers: every stored item that may leave, in the shape of schema.EXPORT.

All reads of the item tables for an export are in this module, and every one of them passes
`_visible()`. Forgotten items (`invalid_at`) never leave. Items of a host that is `off` now are
left out (and counted) unless the person asked for them with `--include-off`: that is the one
deliberate, narrow bypass (`Scope.include_off`), which lifts the site-mode half of the rule
only — never the forgotten half.

TODO(visibility): when server/governance/visibility.py lands (branch wt/rules), `_visible()`
returns its `visible(table, alias)` clause and the per-host check in `Scope.keep` goes.

Paging: each call answers one page of one kind (conversations, facts, documents) after a
cursor (the last id), so a large store is read in bounded memory.
"""

from __future__ import annotations

import collections
import dataclasses
import datetime as dt
from typing import Any

from server.errors import BadRequest
from server.governance.policy import mode_for, rule_host
from server.store.db import Store

KINDS = ("conversations", "facts", "documents")
PAGE = {"conversations": 200, "facts": 2000, "documents": 50}


@dataclasses.dataclass
class Scope:
    site: str | None = None        # a host; covers its subdomains (whole labels)
    since: float | None = None     # epoch seconds (local midnight of --since DAY)
    include_off: bool = False      # the deliberate bypass of the site-mode half (never of forget)
    left_out: collections.Counter[str] = dataclasses.field(default_factory=collections.Counter)
    _modes: dict[str, str] = dataclasses.field(default_factory=dict)

    async def keep(self, store: Store, host: str) -> bool:
        """The site-mode half of the visibility rule (TODO(visibility): in SQL)."""
        if self.include_off:
            return True
        if host not in self._modes:
            self._modes[host] = (await mode_for(store, host)).mode
        if self._modes[host] == "off":
            self.left_out[host] += 1
            return False
        return True


def _visible(table: str, alias: str) -> str:
    """The forgotten half of the visibility rule, for every export reader (see module doc)."""
    return f"{alias}.invalid_at IS NULL" if table == "facts" else "1"


def _host_clause(alias: str, scope: Scope) -> tuple[str, list[Any]]:
    if scope.site is None:
        return "1", []
    h = scope.site
    return (f"({alias}.source_host = ? OR (length({alias}.source_host) > length(?) + 1 "
            f"AND substr({alias}.source_host, -length(?) - 1) = '.' || ?))", [h, h, h, h])


def since_epoch(day: str | None) -> float | None:
    if day is None:
        return None
    try:
        d = dt.date.fromisoformat(day)
    except ValueError:
        raise BadRequest("since must be a day YYYY-MM-DD", code="bad_value", field="query.since") from None
    return dt.datetime(d.year, d.month, d.day).astimezone().timestamp()


def scope_from_query(query: dict[str, Any]) -> Scope:
    site = query.get("site")
    return Scope(site=rule_host(site) if site else None, since=since_epoch(query.get("since")),
                 include_off=bool(query.get("include_off", False)))


async def export_page(store: Store, kind: str, scope: Scope, after: int, limit: int | None = None) -> dict[str, Any]:
    """GET /api/export: one page of `kind` after id `after`: {items, next, left_out}."""
    limit = limit or PAGE[kind]
    reader = {"conversations": _conversations, "facts": _facts, "documents": _documents}[kind]
    items, last = await reader(store, scope, after, limit)
    return {"kind": kind, "items": items, "next": last, "left_out": dict(scope.left_out)}


async def _conversations(store: Store, scope: Scope, after: int, limit: int) -> tuple[list[dict[str, Any]], int | None]:
    host_sql, host_args = _host_clause("c", scope)
    since_sql = "1"
    since_args: list[Any] = []
    if scope.since is not None:
        since_sql = ("EXISTS (SELECT 1 FROM facts s WHERE s.conversation_id = c.id AND "  # noqa: S608 - constant
                     f"{_visible('facts', 's')} AND s.valid_at >= ?)")
        since_args = [scope.since]
    rows = await store.fetchall(
        f"SELECT c.id, c.site, c.source_url, c.source_host, c.source_ref, c.created_at FROM conversations c "  # noqa: S608 - constant clauses
        f"WHERE c.id > ? AND {_visible('conversations', 'c')} AND {host_sql} AND {since_sql} ORDER BY c.id LIMIT ?",
        [after, *host_args, *since_args, limit],
    )
    last = rows[-1]["id"] if len(rows) == limit else None
    kept = [r for r in rows if await scope.keep(store, r["source_host"])]
    if not kept:
        return [], last
    by_conv: dict[int, list[dict[str, Any]]] = {r["id"]: [] for r in kept}
    marks = ",".join("?" * len(by_conv))
    turns = await store.fetchall(
        f"SELECT f.conversation_id, f.role, f.text, f.native_id, f.valid_at, f.granularity FROM facts f "  # noqa: S608 - placeholders only
        f"WHERE f.conversation_id IN ({marks}) AND {_visible('facts', 'f')} ORDER BY f.conversation_id, f.position",
        list(by_conv),
    )
    for t in turns:
        by_conv[t["conversation_id"]].append({
            "role": t["role"], "text": t["text"], "native_id": t["native_id"], "valid_at": t["valid_at"],
            "granularity": t["granularity"],
        })
    items = [
        {"url": r["source_url"], "site": r["site"], "title": r["source_ref"], "created_at": r["created_at"],
         "native_id": None, "turns": by_conv[r["id"]]}
        for r in kept if by_conv[r["id"]]
    ]
    return items, last


async def _facts(store: Store, scope: Scope, after: int, limit: int) -> tuple[list[dict[str, Any]], int | None]:
    host_sql, host_args = _host_clause("f", scope)
    rows = await store.fetchall(
        f"SELECT f.id, f.kind, f.source_url, f.source_host, f.title, f.text, f.valid_at, f.granularity FROM facts f "  # noqa: S608 - constant clauses
        f"WHERE f.id > ? AND f.kind IN ('note', 'clip') AND {_visible('facts', 'f')} AND {host_sql} "
        "AND f.valid_at >= ? ORDER BY f.id LIMIT ?",
        [after, *host_args, scope.since or 0, limit],
    )
    last = rows[-1]["id"] if len(rows) == limit else None
    items = [
        {"kind": r["kind"], "url": r["source_url"], "title": r["title"], "text": r["text"], "valid_at": r["valid_at"],
         "granularity": r["granularity"]}
        for r in rows if await scope.keep(store, r["source_host"])
    ]
    return items, last


async def _documents(store: Store, scope: Scope, after: int, limit: int) -> tuple[list[dict[str, Any]], int | None]:
    host_sql, host_args = _host_clause("d", scope)
    rows = await store.fetchall(
        "SELECT d.id, d.source_url, d.source_host, d.given_url, d.canonical_url, d.title, d.author, d.published, "  # noqa: S608 - constant clauses
        "d.sitename, d.language, d.text, d.lane, d.extractor, d.created_at, d.updated_at FROM documents d "
        f"WHERE d.id > ? AND {_visible('documents', 'd')} AND {host_sql} AND d.updated_at >= ? ORDER BY d.id LIMIT ?",
        [after, *host_args, scope.since or 0, limit],
    )
    last = rows[-1]["id"] if len(rows) == limit else None
    items = [
        {"url": r["source_url"], "given_url": r["given_url"], "canonical_url": r["canonical_url"], "title": r["title"],
         "author": r["author"], "published": r["published"], "sitename": r["sitename"], "language": r["language"],
         "text": r["text"], "lane": r["lane"], "extractor": r["extractor"], "created_at": r["created_at"],
         "updated_at": r["updated_at"]}
        for r in rows if await scope.keep(store, r["source_host"])
    ]
    return items, last
