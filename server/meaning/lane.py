"""The meaning lane: the items nearest to a text by meaning, through the one visibility rule.

Candidates come from the in-memory index (server.meaning.index, by sign bits, in the partitions
nearest the query once there are partitions); they are reranked by cosine over their int8
vectors, and their items are read best first through `visible()` until `limit` are found: the
whole lookup on one of the store's readers, in one thread hop (server.store.reader). The
window is taken after visibility: when hidden items (forgotten, or of an `off` host) are half or
more of the candidates looked at, the window and the share of the vectors scanned grow until
`limit` visible items are found or every vector was a candidate, so hidden items never crowd
visible ones out. Scores are cosines in [-1, 1].
"""

from __future__ import annotations

import functools
import sqlite3
from collections.abc import Sequence
from concurrent.futures import Future
from typing import Any

import numpy as np
import numpy.typing as npt

from server import ages
from server.governance.visibility import visible
from server.meaning import deep, third
from server.meaning import model as model_mod
from server.meaning.deep_scan import DeepScan
from server.meaning.embedder import Embedder
from server.meaning.index import CHUNK, FACT, BitIndex, Ids
from server.meaning.items import COLUMN, ITEMS, json_ids
from server.memory.facts import ANSWER_COLUMNS
from server.store.db import Store
from server.textcaps import cap

FIRST_WINDOW = 200
FIRST_REACH = 0.04  # the share of the vectors a first look scans, once they are partitioned
# the static model alone (the related tier, and search without the second model) reads the
# vectors of READ candidates: the best by their sign estimate of POOL times as many nearest by
# Hamming distance. At 1M items the related tier found 0.708 of an exhaustive scan's top 10 so,
# against 0.703 reading the 200 nearest by Hamming distance, and page-match p50 went ~4.2 -> ~4.0 ms
READ = 80
POOL = 12
HIT_CHARS = 600
DeepQuery = model_mod.Vectors | Future[model_mod.Vectors | None]
Dists = npt.NDArray[np.int32]

# the candidates' vectors, to rank them: no item is answered from this read (the items are read
# next, best first, through the visibility rule); reading the 200 candidates' items here cost
# twice as much as their vectors at 1M items (random rows of the widest table)
_VECTORS_SQL = """
SELECT v.id, v.vec, v.fact_id, v.chunk_id FROM vectors v WHERE v.id IN (SELECT value FROM json_each(:ids))
"""
# the static vectors of the second model's own candidates (server.meaning.deep_scan), by item, in
# the shape of _VECTORS_SQL's rows: no item is answered from this read either
_ITEM_VECTORS_SQL = {
    FACT: "SELECT id, vec, fact_id, chunk_id FROM vectors WHERE fact_id IN (SELECT value FROM json_each(?))",
    CHUNK: "SELECT id, vec, fact_id, chunk_id FROM vectors WHERE chunk_id IN (SELECT value FROM json_each(?))",
}
# a kind's name where items are named ("fact", "chunk"), and its column in the vectors tables
_ITEM = {FACT: ITEMS[0], CHUNK: ITEMS[1]}
_COLUMN = {kind: COLUMN[item] for kind, item in _ITEM.items()}
_FACT_ROWS_SQL = f"""
SELECT {ANSWER_COLUMNS}
FROM facts f WHERE f.id IN (SELECT value FROM json_each(:ids)) AND {visible("facts", "f")}
  AND (:host IS NULL OR f.source_host != :host)
"""  # noqa: S608 - built by visible()
_CHUNK_ROWS_SQL = f"""
SELECT c.id, c.document_id, c.seq, c.text, c.source_url, c.source_host, c.source_ref, d.title, d.updated_at
FROM document_chunks c JOIN documents d ON d.id = c.document_id
WHERE c.id IN (SELECT value FROM json_each(:ids)) AND {visible("document_chunks", "c")}
  AND {visible("documents", "d")}
"""  # noqa: S608 - built by visible()


def start_deep_query(embedder: Embedder, text: str) -> DeepQuery | None:
    """The query's vector of the second model, computed beside the scan (server.meaning.deep);
    None when the model is off or does not read the query."""
    return deep.start_query(text) if embedder.deep.on else None


def start_third_query(embedder: Embedder, text: str) -> third.Ask | None:
    """The third voice's part in a search the second model reads (server.meaning.third), its
    query vector being computed beside the second model's; None when it has nothing to say."""
    return third.ask(embedder.third, text, embedder.scale.scale)


def _embed_one(text: str) -> model_mod.Vectors:
    vectors: model_mod.Vectors = model_mod.model().embed([text])
    return vectors.reshape(-1)


async def nearest(
    store: Store,
    embedder: Embedder,
    query: model_mod.Vectors | str,
    kind: int,
    limit: int,
    *,
    exclude_host: str | None = None,
    deep_query: DeepQuery | None = None,
    third_ask: third.Ask | None = None,
) -> list[tuple[float, Any, float | None]]:
    """(cosine, row, judged) of the `limit` visible items of `kind` (FACT: facts; CHUNK: the best
    chunk per document) nearest to `query` (a vector, or a text to embed), best first. Empty while
    the index is loading. With `deep_query` (the query's vector of the second model, or its
    computation), the candidates are rescored by both models (server.meaning.deep), and with
    `third_ask` by the third voice too (server.meaning.third); `judged`: the cosine that says
    whether it is a close match (deep.judged), None where only the static model read it. The whole
    lookup (the text's vector, the scan, the candidates' vectors, their items) runs on one of the
    store's readers, in one thread hop."""
    if limit <= 0 or not embedder.ready:
        return []
    index, scan = embedder.index, embedder.deep.scan
    return await store.read_with(
        lambda con: _nearest(con, index, query, kind, limit, exclude_host, deep_query, scan, third_ask)
    )


def nearest_in(
    con: sqlite3.Connection,
    index: BitIndex,
    query: model_mod.Vectors | str,
    kind: int,
    limit: int,
    *,
    exclude_host: str | None = None,
) -> list[tuple[float, Any]]:
    """`nearest` by the static model alone, on a connection the caller's own hop holds (a store
    reader's, inside Store.read_with: page-match reads its other tiers in the same hop). The
    caller checks that the embedder is ready and passes its index."""
    found = _nearest(con, index, query, kind, limit, exclude_host) if limit > 0 else []
    return [(score, row) for score, row, _judged in found]


def _nearest(
    con: sqlite3.Connection,
    index: BitIndex,
    query: model_mod.Vectors | str,
    kind: int,
    limit: int,
    exclude_host: str | None,
    deep_query: DeepQuery | None = None,
    scan: DeepScan | None = None,
    third_ask: third.Ask | None = None,
) -> list[tuple[float, Any, float | None]]:
    vector = _embed_one(query) if isinstance(query, str) else query
    if not np.any(vector):
        return []
    qbits = model_mod.sign_bits(vector[None, :])[0]
    exact, reach = max(FIRST_WINDOW if deep_query is not None else READ, 4 * limit), FIRST_REACH
    while True:
        if deep_query is None:
            read = exact
            ids, dist, complete = _by_sign_estimate(index, vector, qbits, kind, exact, reach)
        else:
            # with the second model, WIDEN times as many candidates: the static model's cosine
            # of the nearer half from their int8 vectors, of the rest estimated from their bits
            window = exact * deep.WIDEN
            read = window // 2
            ids, dist, complete = index.nearest(vector, qbits, kind, window, reach)
        rows = con.execute(_VECTORS_SQL, {"ids": json_ids(ids[:read].tolist())}).fetchall()
        cosines = _cosines(rows, vector)
        ranked = _ranked(rows, kind, cosines, _estimated(index, cosines, ids, dist, read))
        judged: dict[int, float] = {}
        if deep_query is not None:
            name, column = _ITEM[kind], _COLUMN[kind]
            read_items = {int(r[column]) for r in rows if r[column] is not None}
            its_own = None  # its own candidates, once the query's vector of it is there
            if scan is not None and scan.scans:
                its_own = functools.partial(scan.nearest, name)
            ranked, judged = deep.rescored(
                con,
                name,
                ranked,
                deep_query,
                functools.partial(_static_of, con, kind, query=vector),
                estimated={i for _s, i in ranked} - read_items,
                its_own=its_own,
                third=third_ask,
                static_query=vector,
            )
        found, looked, shown = _first_visible(con, kind, ranked, limit, exclude_host)
        # fewer than half the candidates looked at visible: hidden items took the scan (in the
        # partitions nearest the query, they may be all there is), so it grows
        if complete or (len(found) >= limit and 2 * shown >= looked):
            return [(score, row, judged.get(int(row["id"]))) for score, row in found]
        exact, reach = exact * 4, reach * 4


def _by_sign_estimate(
    index: BitIndex, vector: model_mod.Vectors, qbits: bytes, kind: int, read: int, reach: float
) -> tuple[Ids, Dists, bool]:
    """The `read` candidates whose vectors the static model alone reads: of the POOL * `read`
    nearest by Hamming distance, the best by their sign estimate (model.sign_estimates), best
    first; and whether those were all there are."""
    ids, dist, bits, complete = index.nearest_bits(vector, qbits, kind, POOL * read, reach)
    best = np.argsort(-model_mod.sign_estimates(bits, vector), kind="stable")[:read]
    return ids[best], dist[best], complete and len(ids) <= read


def _static_of(
    con: sqlite3.Connection, kind: int, items: list[int], *, query: model_mod.Vectors
) -> list[tuple[float, int]]:
    """(static cosine, item) of these facts or chunks, read from their vectors (their best
    window's), best first."""
    rows = con.execute(_ITEM_VECTORS_SQL[kind], (json_ids(items),)).fetchall()
    return _ranked(rows, kind, _cosines(rows, query))


def _cosines(rows: list[Any], query: model_mod.Vectors) -> dict[int, float]:
    """Each read vector's cosine to the query, by vector id."""
    if not rows:
        return {}
    scores = model_mod.from_int8([r["vec"] for r in rows]) @ query
    return {int(r["id"]): float(c) for r, c in zip(rows, scores.tolist(), strict=True)}


def _estimated(
    index: BitIndex, cosines: dict[int, float], ids: Ids, dist: Dists, exact: int
) -> list[tuple[float, int]]:
    """(estimated cosine, item id) of the candidates past the first `exact`, from their Hamming
    distance: the line fitted through the first ones' (distance, cosine: `cosines`, by vector id),
    never above the lowest of those. Reading half of 600 candidates' vectors so, paraphrase
    recall@1/10 stayed 0.50/0.76 (bench_search_quality's store) and search p95 at 1M items went
    25.1 -> 23.0 ms (bench_memory)."""
    if len(ids) <= exact or not cosines:
        return []
    read_ids = [int(i) for i in ids[:exact].tolist()]
    seen = [(d, cosines[i]) for i, d in zip(read_ids, dist[:exact].tolist(), strict=True) if i in cosines]
    x = np.array([d for d, _c in seen], np.float64)
    y = np.array([c for _d, c in seen], np.float64)
    floor = float(y.min())
    slope, at0 = np.polyfit(x, y, 1) if len(np.unique(x)) > 1 else (0.0, floor)
    items = index.items_of(ids[exact:])
    guess = np.minimum(at0 + slope * dist[exact:].astype(np.float64), floor)
    return [(float(g), int(i)) for g, i in zip(guess.tolist(), items.tolist(), strict=True) if i]


def _ranked(
    rows: list[Any], kind: int, cosines: dict[int, float], estimated: Sequence[tuple[float, int]] = ()
) -> list[tuple[float, int]]:
    """(cosine, fact or chunk id) of the candidates, best first, each fact or chunk once (by
    its nearest vector: a long one has several; `cosines`: the read vectors', by vector id;
    `estimated`: more candidates' items with their cosine's estimate)."""
    column = _COLUMN[kind]
    best: dict[int, float] = {}
    for r in rows:
        if r[column] is not None:
            item = int(r[column])
            best[item] = max(best.get(item, -2.0), cosines[int(r["id"])])
    for score, item in estimated:
        best[item] = max(best.get(item, -2.0), score)
    return sorted(((s, i) for i, s in best.items()), key=lambda t: -t[0])


def _first_visible(
    con: sqlite3.Connection, kind: int, ranked: list[tuple[float, int]], limit: int, exclude_host: str | None
) -> tuple[list[tuple[float, Any]], int, int]:
    """(cosine, row) of the first `limit` visible items of `ranked` (for chunks: one per
    document, its best), how many of `ranked` were looked at and how many of those were visible.
    Their rows are read in growing batches (`limit`, then twice as many each time), through
    the visibility rule."""
    sql = _FACT_ROWS_SQL if kind == FACT else _CHUNK_ROWS_SQL
    found: list[tuple[float, Any]] = []
    documents: set[int] = set()
    looked = shown = 0
    batch = limit
    while looked < len(ranked) and len(found) < limit:
        part = ranked[looked : looked + batch]
        params = {"ids": json_ids([i for _s, i in part]), "host": exclude_host}
        rows = {int(r["id"]): r for r in con.execute(sql, params).fetchall()}
        looked, shown, batch = looked + len(part), shown + len(rows), 2 * batch
        for score, i in part:
            row = rows.get(i)
            if row is None or len(found) >= limit:
                continue
            if kind == CHUNK:
                if row["document_id"] in documents:
                    continue
                documents.add(row["document_id"])
            found.append((score, row))
    return found, looked, shown


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


__all__ = ["CHUNK", "FACT", "chunk_hit", "nearest", "nearest_in"]
