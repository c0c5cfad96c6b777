"""What is embedded for an item, and how its text is read: one place for every model's
background build (server.meaning.embedder, server.meaning.voice)."""

from __future__ import annotations

from typing import Any

import aiosqlite

from server.store.db import Store

ITEMS = ("fact", "chunk")
COLUMN = {"fact": "fact_id", "chunk": "chunk_id"}  # an item's column where vectors name it
# the builds read every queued item, hidden ones too (vectors are filtered where their items are
# read, and a forget can be undone); the text is what they embed
TEXT_SQL = {
    "fact": "SELECT f.id, f.title, f.text FROM facts f WHERE f.id IN (SELECT value FROM json_each(?))",
    "chunk": "SELECT c.id, d.title, c.text FROM document_chunks c JOIN documents d ON d.id = c.document_id "
    "WHERE c.id IN (SELECT value FROM json_each(?))",
}


def item_text(title: str, text: str) -> str:
    """What is embedded for an item: its title (when it has one), then its text."""
    title = (title or "").strip()
    return f"{title}\n{text}" if title else text


def json_ids(ids: list[int]) -> str:
    """Ids as the JSON array the statements read with json_each."""
    return "[" + ",".join(str(int(i)) for i in ids) + "]"


async def item_texts(store: Store, wanted: dict[str, list[int]]) -> dict[tuple[str, int], str]:
    """(item, id) -> the text to embed, for the wanted items that still exist."""
    out: dict[tuple[str, int], str] = {}
    for item in ITEMS:
        if wanted.get(item):
            for r in await store.fetchall(TEXT_SQL[item], (json_ids(wanted[item]),)):
                out[(item, int(r[0]))] = item_text(r[1], r[2])
    return out


Key = tuple[str, int]  # (item, id)


async def take(store: Store, queue_sql: str, batch: int) -> dict[str, list[int]]:
    """Up to `batch` queued ids, facts first, then chunks (`queue_sql`: a queue's ids of one
    item, oldest first, by its primary key)."""
    wanted: dict[str, list[int]] = {}
    for item in ITEMS:
        room = batch - sum(map(len, wanted.values()))
        wanted[item] = [r[0] for r in await store.fetchall(queue_sql, (item, room))] if room else []
    return wanted


async def dequeue(
    conn: aiosqlite.Connection,
    dequeue_sql: str,
    wanted: dict[str, list[int]],
    now: dict[Key, str],
    fresh: list[tuple[Key, Any]],
) -> int:
    """Remove from a queue (inside the writer's transaction) the items embedded (`fresh`) and
    those gone since they were read (not in `now`); a changed item stays queued (its trigger
    re-queued it). How many rows that was."""
    done = [k for k, _v in fresh] + [(item, i) for item, ids in wanted.items() for i in ids if (item, i) not in now]
    for item in ITEMS:
        await conn.execute(dequeue_sql, (item, json_ids([i for kind, i in done if kind == item])))
    return len(done)
