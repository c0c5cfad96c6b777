"""Python steps of a migration: what SQL cannot compute, run in the migration's own transaction
(server.store.db applies them right after the migration's statements).

0007_lexical: runs of scripts written without spaces are indexed as character pairs
(server.searchtext.index_form). Facts and library chunks stored before hold each run as one
token, so their indexed forms are written again (the FTS triggers re-index each row). The rows
are found through the index itself: the terms that begin with such a character (a range seek
in an fts5vocab 'instance' table, so a store without them costs nothing). A row whose only such
run is glued to a Latin letter or digit before it ("2月") is not found; a row also holding any
other run is.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import aiosqlite

from server.searchtext import index_form, search_forms

# the unspaced scripts' code point ranges (searchtext.UNSPACED_CHARS), as [low, high) term bounds
_RANGES = (
    ("\u0e01", "\u0e80"),
    ("\u3005", "\u3008"),
    ("\u3040", "\u3100"),
    ("\u31f0", "\u3200"),
    ("\u3400", "\u4dc0"),
    ("\u4e00", "\ua000"),
    ("\uac00", "\ud7b0"),
    ("\uf900", "\ufb00"),
    ("\uff66", "\uffa0"),
    ("\U00020000", "\U0002fa20"),
)
BATCH = 500


async def _rows_with_unspaced_terms(conn: aiosqlite.Connection, fts: str) -> list[int]:
    await conn.execute(f"CREATE VIRTUAL TABLE temp.wf_upgrade_terms USING fts5vocab(main, {fts}, instance)")
    try:
        ids: set[int] = set()
        for lo, hi in _RANGES:
            rows = await conn.execute_fetchall(
                "SELECT DISTINCT doc FROM temp.wf_upgrade_terms WHERE term >= ? AND term < ?", (lo, hi)
            )
            ids.update(int(r[0]) for r in rows)
        return sorted(ids)
    finally:
        await conn.execute("DROP TABLE temp.wf_upgrade_terms")


async def reindex_unspaced(conn: aiosqlite.Connection) -> None:
    """Write the indexed forms again for every fact and chunk holding an unspaced script."""
    facts = await _rows_with_unspaced_terms(conn, "facts_fts")
    for i in range(0, len(facts), BATCH):
        batch = facts[i : i + BATCH]
        rows = await conn.execute_fetchall(
            f"SELECT id, title, text FROM facts WHERE id IN ({','.join('?' * len(batch))})",  # noqa: S608 - placeholders
            batch,
        )
        await conn.executemany(
            "UPDATE facts SET search_title = :search_title, search_text = :search_text WHERE id = :id",
            [{"id": r[0], **search_forms(r[1], r[2])} for r in rows],
        )
    chunks = await _rows_with_unspaced_terms(conn, "document_chunks_fts")
    for i in range(0, len(chunks), BATCH):
        batch = chunks[i : i + BATCH]
        rows = await conn.execute_fetchall(
            "SELECT c.id, d.title, c.text FROM document_chunks c JOIN documents d ON d.id = c.document_id "  # noqa: S608
            f"WHERE c.id IN ({','.join('?' * len(batch))})",
            batch,
        )
        await conn.executemany(
            "UPDATE document_chunks SET search_title = ?, search_text = ? WHERE id = ?",
            [(index_form(r[1]), index_form(r[2]), r[0]) for r in rows],
        )


AFTER: dict[str, tuple[Callable[[aiosqlite.Connection], Awaitable[None]], ...]] = {
    "0007_lexical": (reindex_unspaced,),
}
