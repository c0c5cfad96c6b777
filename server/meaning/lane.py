"""The meaning lane: the items nearest to a text by meaning, through the one visibility rule.

Candidates come from the in-memory index (server.meaning.index, by sign bits, in the partitions
nearest the query once there are partitions); they are read back joined to their items with
`visible()` and reranked by cosine over their int8 vectors. The window is taken after
visibility: when hidden items (forgotten, or of an `off` host) fill the candidates, the window
and the share of the vectors scanned grow until `limit` visible items are found or every vector
was a candidate, so hidden items never crowd visible ones out. Scores are cosines in [-1, 1].
"""

from __future__ import annotations

import asyncio
from typing import Any

import numpy as np

from server import ages
from server.governance.visibility import visible
from server.meaning import model as model_mod
from server.meaning.embedder import Embedder, json_ids
from server.meaning.index import CHUNK, FACT
from server.store.db import Store
from server.textcaps import cap

FIRST_WINDOW = 200
FIRST_REACH = 0.04  # the share of the vectors a first look scans, once they are partitioned
HIT_CHARS = 600

# candidates: a vector, its item and the item's document, for the visible items only (the rows
# themselves are read for the best `limit` only: 200 candidates' whole rows cost more than the scan)
_FACT_CANDIDATES_SQL = f"""
SELECT v.id AS vector_id, v.vec, f.id AS item
FROM vectors v JOIN facts f ON f.id = v.fact_id
WHERE v.id IN (SELECT value FROM json_each(:ids)) AND {visible("facts", "f")}
  AND (:host IS NULL OR f.source_host != :host)
"""  # noqa: S608 - built by visible()
_CHUNK_CANDIDATES_SQL = f"""
SELECT v.id AS vector_id, v.vec, c.document_id AS item, c.id AS chunk
FROM vectors v JOIN document_chunks c ON c.id = v.chunk_id JOIN documents d ON d.id = c.document_id
WHERE v.id IN (SELECT value FROM json_each(:ids)) AND {visible("document_chunks", "c")}
  AND {visible("documents", "d")}
"""  # noqa: S608 - built by visible()
_FACT_ROWS_SQL = f"""
SELECT f.id, f.kind, f.title, f.text, f.source_url, f.source_host, f.source_ref,
       f.valid_at, f.granularity, f.role, f.conversation_id, f.markdown
FROM facts f WHERE f.id IN (SELECT value FROM json_each(:ids)) AND {visible("facts", "f")}
"""  # noqa: S608 - built by visible()
_CHUNK_ROWS_SQL = f"""
SELECT c.id, c.document_id, c.seq, c.text, c.source_url, c.source_host, c.source_ref, d.title, d.updated_at
FROM document_chunks c JOIN documents d ON d.id = c.document_id
WHERE c.id IN (SELECT value FROM json_each(:ids)) AND {visible("document_chunks", "c")}
  AND {visible("documents", "d")}
"""  # noqa: S608 - built by visible()


async def embed_query(text: str) -> model_mod.Vectors:
    """The query's vector (off the event loop; a query is short: well under a millisecond)."""
    vectors: model_mod.Vectors = await asyncio.to_thread(_embed_one, text)
    return vectors


def _embed_one(text: str) -> model_mod.Vectors:
    vectors: model_mod.Vectors = model_mod.model().embed([text])
    return vectors.reshape(-1)


async def nearest(
    store: Store,
    embedder: Embedder,
    query: model_mod.Vectors,
    kind: int,
    limit: int,
    *,
    exclude_host: str | None = None,
) -> list[tuple[float, Any]]:
    """(cosine, row) of the `limit` visible items of `kind` (FACT: facts; CHUNK: the best chunk
    per document) nearest to `query`, best first. Empty while the index is loading."""
    if limit <= 0 or not embedder.ready or not np.any(query):
        return []
    qbits = model_mod.sign_bits(query[None, :])[0]
    window, reach = max(FIRST_WINDOW, 4 * limit), FIRST_REACH
    while True:
        ids, complete = await asyncio.to_thread(embedder.index.nearest, query, qbits, kind, window, reach)
        rows = await store.fetchall(
            _FACT_CANDIDATES_SQL if kind == FACT else _CHUNK_CANDIDATES_SQL,
            {"ids": json_ids(ids.tolist()), "host": exclude_host},
        )
        best: dict[int, tuple[float, int]] = {}  # item -> (cosine, the row to read: fact or chunk)
        if rows:
            scores = model_mod.from_int8([r["vec"] for r in rows]) @ query
            for score, r in zip(scores.tolist(), rows, strict=True):
                item = int(r["item"])
                if item not in best or score > best[item][0]:
                    best[item] = (float(score), item if kind == FACT else int(r["chunk"]))
        # fewer than half the candidates visible: hidden items took the scan (in the partitions
        # nearest the query, they may be all there is), so it grows
        if complete or (len(best) >= limit and 2 * len(rows) >= len(ids)):
            return await _rows(store, kind, sorted(best.values(), key=lambda t: -t[0])[:limit])
        window, reach = window * 4, reach * 4


async def _rows(store: Store, kind: int, chosen: list[tuple[float, int]]) -> list[tuple[float, Any]]:
    """(cosine, row) of the chosen facts or chunks, in their order (through the visibility rule
    again: one forgotten in between is left out)."""
    if not chosen:
        return []
    sql = _FACT_ROWS_SQL if kind == FACT else _CHUNK_ROWS_SQL
    rows = {int(r["id"]): r for r in await store.fetchall(sql, {"ids": json_ids([i for _s, i in chosen])})}
    return [(score, rows[i]) for score, i in chosen if i in rows]


def chunk_hit(row: Any) -> dict[str, Any]:
    """A document found by one of its chunks, in the shape of a lexical document hit."""
    return {
        "id": row["document_id"],
        "chunk": row["seq"],
        "text": cap(row["text"], HIT_CHARS, ellipsis=True),
        "source_url": row["source_url"],
        "source_host": row["source_host"],
        "source_ref": row["source_ref"],
        "title": row["title"],
        "kind": "document",
        "age": ages.age(row["updated_at"], ages.INSTANT),
    }


__all__ = ["CHUNK", "FACT", "chunk_hit", "embed_query", "nearest"]
