"""Python steps of a migration: what SQL cannot compute, run in the migration's own transaction
(server.store.db applies them right after the migration's statements).

0007_lexical: runs of scripts written without spaces are indexed as character pairs
(server.searchtext.index_form). Facts and library chunks stored before hold them as one token a
run, so their indexed forms are written again (the FTS triggers re-index each row). Only rows
holding such a character are read back into Python (a GLOB over the text, in C).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import aiosqlite

from server.searchtext import UNSPACED_CHARS, index_form, search_forms

# any character of the unspaced scripts, as a GLOB pattern (the same code point ranges)
_UNSPACED_GLOB = f"*[{UNSPACED_CHARS}]*"
BATCH = 500


async def reindex_unspaced(conn: aiosqlite.Connection) -> None:
    """Write the indexed forms again for every fact and chunk holding an unspaced script."""
    last = 0
    while True:
        rows = list(
            await conn.execute_fetchall(
                "SELECT id, title, text FROM facts WHERE id > ? AND (text GLOB ? OR title GLOB ?) ORDER BY id LIMIT ?",
                (last, _UNSPACED_GLOB, _UNSPACED_GLOB, BATCH),
            )
        )
        if not rows:
            break
        await conn.executemany(
            "UPDATE facts SET search_title = :search_title, search_text = :search_text WHERE id = :id",
            [{"id": r[0], **search_forms(r[1], r[2])} for r in rows],
        )
        last = int(rows[-1][0])
    last = 0
    while True:
        rows = list(
            await conn.execute_fetchall(
                "SELECT c.id, d.title, c.text FROM document_chunks c JOIN documents d ON d.id = c.document_id "
                "WHERE c.id > ? AND (c.text GLOB ? OR d.title GLOB ?) ORDER BY c.id LIMIT ?",
                (last, _UNSPACED_GLOB, _UNSPACED_GLOB, BATCH),
            )
        )
        if not rows:
            break
        await conn.executemany(
            "UPDATE document_chunks SET search_title = ?, search_text = ? WHERE id = ?",
            [(index_form(r[1]), index_form(r[2]), r[0]) for r in rows],
        )
        last = int(rows[-1][0])


AFTER: dict[str, tuple[Callable[[aiosqlite.Connection], Awaitable[None]], ...]] = {
    "0007_lexical": (reindex_unspaced,),
}
