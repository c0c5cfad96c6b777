"""What is embedded for an item, and how its text is read: one place for both models'
background builds (server.meaning.embedder, server.meaning.deep)."""

from __future__ import annotations

from server.store.db import Store

ITEMS = ("fact", "chunk")
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
