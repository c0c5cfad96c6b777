"""Forget a site: soft, whole-label subdomains, two steps, undoable.

1. {host, dry_run: true} -> counts of live facts of the host and its subdomains, the library
   documents from them (counted, never removed) and a confirmation token valid 8 seconds,
   bound to that host and those counts.
2. {host, confirm} -> sets invalid_at (and the batch id) on those facts; an unknown, expired,
   reused or other-host token, or counts that changed since the dry run, is 409.
   The activity rows of those facts (note, clip, capture: their text and page) are hidden with
   them, in the same batch.
undo {batch} -> clears invalid_at on exactly the facts and activity rows of that batch.
"""

from __future__ import annotations

import dataclasses
import secrets
import time
from typing import Any

from server import activity, limits
from server.errors import Conflict, NotFound
from server.governance.policy import covers_subdomains, rule_host, scope_words
from server.library import queries as library
from server.probe_cache import ProbeCache
from server.store.db import Store
from server.urls import host_clause

CONFIRM_SECONDS = limits.FORGET_CONFIRM_SECONDS

# the host and (unless :exact, policy.covers_subdomains) its subdomains, whole labels
# (server.urls.host_clause: never notexample.com)
SCOPE = f"(source_host = :host OR (NOT :exact AND {host_clause('source_host', 'host')}))"
COUNT_LIVE = f"SELECT COUNT(*) FROM facts WHERE invalid_at IS NULL AND {SCOPE}"  # noqa: S608
HIDE_LIVE = (
    "UPDATE facts SET invalid_at = :now, forget_batch = :batch "  # noqa: S608 - built by host_clause
    f"WHERE invalid_at IS NULL AND {SCOPE}"
)
# the activity rows that carry a fact's text and page (a note, a clip, a capture) go with the facts;
# documents are kept by forget, and so are their rows; rule / forget / undo rows carry no page
HIDE_ACTIVITY = (
    "UPDATE activity SET invalid_at = :now, forget_batch = :batch "  # noqa: S608 - built by host_clause
    "WHERE invalid_at IS NULL AND kind IN ('note', 'clip', 'capture') AND source_url IS NOT NULL "
    f"AND {SCOPE}"
)


@dataclasses.dataclass(frozen=True)
class Pending:
    host: str
    expires: float
    facts: int
    documents: int


class Confirmations:
    """Outstanding dry-run tokens (in memory: a restart forgets them, as it should)."""

    def __init__(self) -> None:
        self._items: dict[str, Pending] = {}

    def issue(self, host: str, facts: int, documents: int) -> str:
        now = time.monotonic()
        self._items = {k: p for k, p in self._items.items() if p.expires > now}
        token = secrets.token_urlsafe(18)
        self._items[token] = Pending(host, now + CONFIRM_SECONDS, facts, documents)
        return token

    def take(self, token: str, host: str) -> Pending:
        pending = self._items.get(token)
        if pending is None or pending.expires < time.monotonic():
            self._items.pop(token, None)
            raise Conflict("the confirmation is unknown or expired; ask again with dry_run", code="confirm_expired")
        if pending.host != host:  # a call for another host does not use up this confirmation
            raise Conflict("the confirmation was given for another host", code="confirm_mismatch")
        return self._items.pop(token)


def _scope(host: str) -> dict[str, Any]:
    return {"host": host, "exact": int(not covers_subdomains(host))}


async def counts(store: Store, host: str) -> tuple[int, int]:
    row = await store.fetchone(COUNT_LIVE, _scope(host))
    facts = int(row[0]) if row else 0
    return facts, await library.count_for_host(store, host, subdomains=covers_subdomains(host))


async def dry_run(store: Store, confirmations: Confirmations, raw_host: str) -> dict[str, Any]:
    host = rule_host(raw_host)
    facts, documents = await counts(store, host)
    return {
        "host": host,
        "facts": facts,
        "documents": documents,
        "subdomains": covers_subdomains(host),
        "confirm": confirmations.issue(host, facts, documents),
        "expires_in": CONFIRM_SECONDS,
    }


async def apply(
    store: Store, cache: ProbeCache, confirmations: Confirmations, raw_host: str, token: str
) -> dict[str, Any]:
    host = rule_host(raw_host)
    pending = confirmations.take(token, host)
    batch = secrets.token_urlsafe(12)
    now = time.time()
    async with store.transaction() as conn:
        row = await (await conn.execute(COUNT_LIVE, _scope(host))).fetchone()
        facts = int(row[0]) if row else 0
        documents = await library.count_for_host(store, host, subdomains=covers_subdomains(host))
        if (facts, documents) != (pending.facts, pending.documents):
            raise Conflict(
                "what is stored from this site changed since the dry run; ask again",
                code="confirm_stale",
                facts=facts,
                documents=documents,
            )
        await conn.execute(HIDE_LIVE, {"now": now, "batch": batch, **_scope(host)})
        hidden_activity = (await conn.execute(HIDE_ACTIVITY, {"now": now, "batch": batch, **_scope(host)})).rowcount
        await conn.execute(
            "INSERT INTO forget_batches(id, host, at, facts, documents) VALUES (?, ?, ?, ?, ?)",
            (batch, host, now, facts, documents),
        )
        await activity.record(
            conn,
            "forget",
            f"Forgot {scope_words(host)}: {facts} facts hidden ({documents} library documents kept)",
            source_host=host,
            detail={"batch": batch, "facts": facts, "documents": documents, "activity": hidden_activity},
        )
    cache.invalidate_host(host)
    return {"host": host, "facts": facts, "documents": documents, "activity": hidden_activity, "batch": batch}


async def undo(store: Store, cache: ProbeCache, batch: str) -> dict[str, Any]:
    async with store.transaction() as conn:
        row = await (await conn.execute("SELECT host, undone_at FROM forget_batches WHERE id = ?", (batch,))).fetchone()
        if row is None:
            raise NotFound("no such forget batch", code="unknown_batch")
        host: str = row["host"]
        if row["undone_at"] is not None:
            return {"batch": batch, "host": host, "restored": 0}
        cur = await conn.execute(
            "UPDATE facts SET invalid_at = NULL, forget_batch = NULL WHERE forget_batch = ?", (batch,)
        )
        restored = cur.rowcount
        await conn.execute(
            "UPDATE activity SET invalid_at = NULL, forget_batch = NULL WHERE forget_batch = ?", (batch,)
        )
        await conn.execute("UPDATE forget_batches SET undone_at = ? WHERE id = ?", (time.time(), batch))
        await activity.record(
            conn,
            "undo",
            f"Restored {restored} facts of {host}",
            source_host=host,
            detail={"batch": batch, "restored": restored},
        )
    cache.invalidate_host(host)
    return {"batch": batch, "host": host, "restored": restored}
