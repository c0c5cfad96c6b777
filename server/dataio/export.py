"""The export's readers: every stored item that may leave, in the shape of schema.EXPORT.

Every read here passes the one visibility rule (server.governance.visibility.visible: not
forgotten, host not `off` now). `--include-off` is the rule's one deliberate, narrow variant,
`visible(table, alias, include_off=scope.include_off)`: it lifts the site-mode half only —
forgotten items never leave. `left_out` counts, per host, what the rule kept back, so the person
is told.

Paging: each call answers one page of one kind (conversations, facts, documents) after a
cursor (the last id), so a large store is read in bounded memory.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from typing import Any

from server.errors import BadRequest
from server.governance.policy import rule_host
from server.governance.visibility import FUNCTION, visible
from server.store.db import Store
from server.urls import host_clause

KINDS = ("conversations", "facts", "documents")
PAGE = {"conversations": 200, "facts": 2000, "documents": 50}


@dataclasses.dataclass
class Scope:
    site: str | None = None  # a host; covers its subdomains (whole labels)
    since: float | None = None  # epoch seconds (local midnight of --since DAY)
    include_off: bool = False  # the deliberate bypass of the site-mode half (never of forget)


def _host_clause(alias: str, scope: Scope, conversations: bool = False) -> str:
    """--site: a host (the one host-or-subdomain rule, server.urls.host_clause, on :site) or a
    chat site's id as every other place shows it (`chatgpt`): its conversations, and the items
    on the hosts its visible conversations are on."""
    if scope.site is None:
        return "1"
    hosts = host_clause(f"{alias}.source_host", "site")
    if conversations:
        return f"({hosts} OR {alias}.site = :site)"
    return (
        f"({hosts} OR {alias}.source_host IN (SELECT s.source_host FROM conversations s "  # noqa: S608 - constant
        f"WHERE s.site = :site AND {visible('conversations', 's')}))"
    )


def _params(scope: Scope, **extra: Any) -> dict[str, Any]:
    return {"site": scope.site or "", "since": scope.since or 0, **extra}


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
    return Scope(
        site=rule_host(site) if site else None,
        since=since_epoch(query.get("since")),
        include_off=bool(query.get("include_off", False)),
    )


async def export_page(store: Store, kind: str, scope: Scope, after: int, limit: int | None = None) -> dict[str, Any]:
    """GET /api/export: one page of `kind` after id `after`: {items, next, left_out (first page)}."""
    limit = limit or PAGE[kind]
    reader = {"conversations": _conversations, "facts": _facts, "documents": _documents}[kind]
    items, last = await reader(store, scope, after, limit)
    first = after == 0
    left_out = await _left_out(store, kind, scope) if first and not scope.include_off else {}
    total = await _total(store, kind, scope) if first else None
    return {"kind": kind, "items": items, "next": last, "left_out": left_out, "total": total}


async def _total(store: Store, kind: str, scope: Scope) -> int:
    """How many items of `kind` the pages will hold (for the progress bar), by the same rule."""
    host_sql, off = _host_clause("x", scope, kind == "conversations"), scope.include_off
    sql = {
        "conversations": "SELECT COUNT(*) FROM conversations x WHERE "  # noqa: S608 - constant clauses
        f"{visible('conversations', 'x', include_off=off)} AND {host_sql} AND EXISTS (SELECT 1 FROM facts s "
        f"WHERE s.conversation_id = x.id AND {visible('facts', 's', include_off=off)} AND s.valid_at >= :since)",
        "facts": "SELECT COUNT(*) FROM facts x WHERE x.kind IN ('note', 'clip') AND "  # noqa: S608 - constant clauses
        f"{visible('facts', 'x', include_off=off)} AND {host_sql} AND x.valid_at >= :since",
        "documents": "SELECT COUNT(*) FROM documents x WHERE "  # noqa: S608 - constant clauses
        f"{visible('documents', 'x', include_off=off)} AND {host_sql} AND x.updated_at >= :since",
    }[kind]
    row = await store.fetchone(sql, _params(scope))
    return int(row[0]) if row else 0


async def _left_out(store: Store, kind: str, scope: Scope) -> dict[str, int]:
    """Per host, the live items of `kind` the site-mode half of the rule keeps back."""
    host_sql = _host_clause("x", scope, kind == "conversations")
    hidden = f"NOT {FUNCTION}(x.source_host) AND {host_sql} GROUP BY x.source_host"
    sql = {
        "conversations": f"SELECT x.source_host, COUNT(*) AS n FROM conversations x WHERE {hidden}",  # noqa: S608
        "facts": "SELECT x.source_host, COUNT(*) AS n FROM facts x WHERE x.invalid_at IS NULL "  # noqa: S608 - constants
        f"AND x.kind IN ('note', 'clip') AND {hidden}",
        "documents": f"SELECT x.source_host, COUNT(*) AS n FROM documents x WHERE {hidden}",  # noqa: S608
    }[kind]
    rows = await store.fetchall(sql, _params(scope))
    return {r["source_host"]: r["n"] for r in rows}


async def _conversations(store: Store, scope: Scope, after: int, limit: int) -> tuple[list[dict[str, Any]], int | None]:
    host_sql = _host_clause("c", scope, conversations=True)
    since_sql = "1"
    if scope.since is not None:
        since_sql = (
            "EXISTS (SELECT 1 FROM facts s WHERE s.conversation_id = c.id AND "  # noqa: S608 - constant
            f"{visible('facts', 's', include_off=scope.include_off)} AND s.valid_at >= :since)"
        )
    rows = await store.fetchall(
        "SELECT c.id, c.site, c.source_url, c.source_host, c.source_ref, c.created_at FROM conversations c "  # noqa: S608 - constant clauses
        f"WHERE c.id > :after AND {visible('conversations', 'c', include_off=scope.include_off)} AND {host_sql} "
        f"AND {since_sql} "
        "ORDER BY c.id LIMIT :limit",
        _params(scope, after=after, limit=limit),
    )
    last = rows[-1]["id"] if len(rows) == limit else None
    if not rows:
        return [], last
    by_conv: dict[int, list[dict[str, Any]]] = {r["id"]: [] for r in rows}
    ids = {f"c{n}": cid for n, cid in enumerate(by_conv)}
    marks = ",".join(f":{k}" for k in ids)
    turns = await store.fetchall(
        "SELECT f.conversation_id, f.role, f.text, f.markdown, f.native_id, f.valid_at, f.granularity, "  # noqa: S608 - placeholders only
        f"f.position, f.shown FROM facts f WHERE f.conversation_id IN ({marks}) "
        f"AND {visible('facts', 'f', include_off=scope.include_off)} "
        "ORDER BY f.conversation_id, f.position, f.valid_at, f.id",
        _params(scope, **ids),
    )
    for t in turns:
        by_conv[t["conversation_id"]].append(
            {
                "role": t["role"],
                "text": t["text"],
                "markdown": t["markdown"],
                "native_id": t["native_id"],
                "valid_at": t["valid_at"],
                "granularity": t["granularity"],
                "position": t["position"],
                "shown": bool(t["shown"]),
            }
        )
    items = [
        {
            "url": r["source_url"],
            "site": r["site"],
            "title": r["source_ref"],
            "created_at": r["created_at"],
            "native_id": None,
            "turns": by_conv[r["id"]],
        }
        for r in rows
        if by_conv[r["id"]]
    ]
    return items, last


async def _facts(store: Store, scope: Scope, after: int, limit: int) -> tuple[list[dict[str, Any]], int | None]:
    host_sql = _host_clause("f", scope)
    rows = await store.fetchall(
        "SELECT f.id, f.kind, f.source_url, f.source_host, f.title, f.text, f.valid_at, f.granularity, "  # noqa: S608
        "f.via FROM facts f "  # constant clauses
        "WHERE f.id > :after AND f.kind IN ('note', 'clip') "
        f"AND {visible('facts', 'f', include_off=scope.include_off)} AND {host_sql} AND f.valid_at >= :since "
        "ORDER BY f.id LIMIT :limit",
        _params(scope, after=after, limit=limit),
    )
    last = rows[-1]["id"] if len(rows) == limit else None
    items = [
        {
            "kind": r["kind"],
            "url": r["source_url"],
            "title": r["title"],
            "text": r["text"],
            "valid_at": r["valid_at"],
            "granularity": r["granularity"],
            **({"via": r["via"]} if r["via"] else {}),
        }
        for r in rows
    ]
    return items, last


async def _documents(store: Store, scope: Scope, after: int, limit: int) -> tuple[list[dict[str, Any]], int | None]:
    host_sql = _host_clause("d", scope)
    rows = await store.fetchall(
        "SELECT d.id, d.source_url, d.source_host, d.given_url, d.canonical_url, d.title, d.author, d.published, "  # noqa: S608 - constant clauses
        "d.sitename, d.language, d.text, d.lane, d.extractor, d.created_at, d.updated_at FROM documents d "
        f"WHERE d.id > :after AND {visible('documents', 'd', include_off=scope.include_off)} AND {host_sql} "
        "AND d.updated_at >= :since "
        "ORDER BY d.id LIMIT :limit",
        _params(scope, after=after, limit=limit),
    )
    last = rows[-1]["id"] if len(rows) == limit else None
    items = [
        {
            "url": r["source_url"],
            "given_url": r["given_url"],
            "canonical_url": r["canonical_url"],
            "title": r["title"],
            "author": r["author"],
            "published": r["published"],
            "sitename": r["sitename"],
            "language": r["language"],
            "text": r["text"],
            "lane": r["lane"],
            "extractor": r["extractor"],
            "created_at": r["created_at"],
            "updated_at": r["updated_at"],
        }
        for r in rows
    ]
    return items, last
