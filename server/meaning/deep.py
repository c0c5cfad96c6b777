"""The second look by meaning: all-MiniLM-L6-v2 (server.meaning.minilm) reranks the static model's
candidates.

The static model (server.meaning.model) embeds thousands of items a second and finds the
candidates; it misses most paraphrases ("getting a new pup used to its kennel" for a note on crate
training). The sentence transformer separates them far better but embeds ~100 items a second, so it
never scans: each item gets one vector of it per window of 128 tokens, up to four, in one blob
(`deep_fact_vectors`, `deep_chunk_vectors`: 0014; longer items re-read in windows: 0015), built
by the embedder's task after its own queue, in batches off the event loop, resumably
(`deep_queue`); a search embeds its query with it too (a few ms) and each candidate is scored by
the mean of its two cosines (`mixed`; the second model's is its nearest window's: a paraphrase of
a long turn's third paragraph is found by it), or by the static one alone while its item has no vector of
this model yet.

The meaning lane of page-match (the page's title: one lookup per page open, under a 5 ms budget)
keeps the static model alone. When the model's package is not installed the lane is `off` and the
meaning lane is the static model's, as before.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING

import numpy as np

from server.meaning import minilm
from server.meaning import model as model_mod
from server.meaning.items import json_ids
from server.meaning.voice import Voice, VoiceLane
from server.store.db import Store

if TYPE_CHECKING:
    from server.meaning.third import Ask

# how many times the static model's candidates it rescores (the lane's first window is 200; the
# static cosine of the nearer half is read, of the rest estimated: server.meaning.lane): paraphrase
# recall@10 0.71 with 200, 0.76 with 600, no higher with 1,200 or 2,400 (bench_search_quality.py)
WIDEN = 3
# the second model's cosine between unrelated texts (bench_search_quality's store, random pairs):
# median 0.04, p95 0.19, p99 0.27; its paraphrase targets' ranks are the same at 0.15 and 0.3
RELATED = 0.3
KNOWN_WORDS = 0.5  # the share of a query's words the second model must know to read it
# candidates whose static cosine was estimated (the far half of the window) that get it read when
# the second model puts them nearest, as many as the panel shows: with its own scan off (a store
# over deep_scan.MAX_ITEMS), paraphrase r@10 0.74-0.76 -> 0.76-0.79 on the tuned queries,
# 0.30-0.33 -> 0.35-0.38 held out (bench_search_quality's three stores); 10, 50 and 300 (all of
# them) gave the same, and 50 cost search at 1M ~1.5 ms at p50
REREAD = 20


def mixed(static: float, deep: float | None, third: float | None = None) -> float:
    """A candidate's cosine by meaning: the mean of the two models' (the static one alone
    while its item has no vector of the second model). The second model lifts a candidate only
    when it relates the two texts itself (a cosine of at least RELATED); below that it can only
    lower it, so unrelated text is not lifted over the noise floor by its baseline. An item the
    second model does not read but the third voice does (server.meaning.third: `third`, its cosine
    on the static model's scale) is scored by the mean of the third's and the second's (the third's
    alone while it has no vector of the second), the static one's left out."""
    if third is not None:
        return _voiced(deep, third)
    if deep is None:
        return static
    mean = (static + deep) / 2
    return mean if deep >= RELATED else min(static, mean)


def judged(deep: float | None, third: float | None = None) -> float | None:
    """The cosine that says whether a candidate is a close match (server.memory.ranking CLOSE):
    for an item the third voice holds, its score (`mixed`); else the second model's own cosine;
    None while neither has read it. The static model's cosine ranks candidates but does not judge
    them: it runs high on shared word pieces ("egg" and "eggplant") and between any two texts of
    a language it reads poorly (a Dutch question about cacti and a Dutch newsletter: 0.59), so
    questions about nothing stored were called close (bench/bench_absent.py)."""
    return _voiced(deep, third) if third is not None else deep


def _voiced(deep: float | None, third: float) -> float:
    """An item the third voice holds: the mean of its cosine and the second model's."""
    return third if deep is None else (third + deep) / 2


# the candidates' vectors of this model, to rescore them: no item is answered from these reads
_VECTORS_SQL = {
    "fact": "SELECT fact_id, vec FROM deep_fact_vectors WHERE fact_id IN (SELECT value FROM json_each(?))",
    "chunk": "SELECT chunk_id, vec FROM deep_chunk_vectors WHERE chunk_id IN (SELECT value FROM json_each(?))",
}
# every vector of this model, a page at a time: its own scan's bits (server.meaning.deep_scan)
_LOAD_SQL = {
    "fact": "SELECT fact_id, vec FROM deep_fact_vectors WHERE fact_id > ? ORDER BY fact_id LIMIT 5000",
    "chunk": "SELECT chunk_id, vec FROM deep_chunk_vectors WHERE chunk_id > ? ORDER BY chunk_id LIMIT 5000",
}
_COUNT_SQL = "SELECT (SELECT COUNT(*) FROM deep_fact_vectors) + (SELECT COUNT(*) FROM deep_chunk_vectors)"
# the second model's voice: a vector of every item (its windows')
SECOND = Voice(
    name=minilm.NAME,
    prefix="deep",
    available=minilm.available,
    load=minilm.model,
    embed=lambda texts: list(minilm.model().embed_windows(texts)),
    vectors_sql=_VECTORS_SQL,
    load_sql=_LOAD_SQL,
    count_sql=_COUNT_SQL,
)


def DeepLane(store: Store, *, enabled: bool = True) -> VoiceLane:  # noqa: N802 - what it makes
    """The second model's state and background build (driven by server.meaning.embedder)."""
    return VoiceLane(store, SECOND, enabled=enabled, off_reason="switched off (--no-second-model)")


def reads(text: str) -> bool:
    """Whether the second model reads this query or item (what it embeds of one: its first
    ITEM_CHARS): at least KNOWN_WORDS of its words are words of its vocabulary. A misspelled word,
    a name or a language it was not trained on is cut into word pieces, whose vector is noise next
    to what the static model and the words lane read; an item it does not read is the third
    voice's (server.meaning.third)."""
    return minilm.model().known_share(text[: minilm.ITEM_CHARS]) >= KNOWN_WORDS


def embed_query(text: str) -> model_mod.Vectors | None:
    """The query's vector of the second model (CPU-bound, a few ms: call it off the loop); None
    when it does not read the query (`reads`)."""
    return minilm.model().embed([text]).reshape(-1) if reads(text) else None


# a query's vector of the second model (and the third voice's) is computed here while the static
# model's scan and reads run on a store reader, which waits for it only when it rescores
queries = ThreadPoolExecutor(max_workers=2, thread_name_prefix="deep-query")


def start_query(text: str) -> Future[model_mod.Vectors | None] | None:
    """The query's vector of the second model, being computed (None when it does not read it)."""
    return queries.submit(embed_query, text) if reads(text) else None


def nearest_window(blobs: list[bytes], query: model_mod.Vectors) -> list[float]:
    """Each item's cosine to the query: its nearest window's (a blob holds an item's windows,
    DIMS int8 each). One pass over all the windows (600 items' ~1,500 windows: 0.45 ms, against
    2.8 ms through model.from_int8 a window at a time)."""
    windows = [len(b) // minilm.DIMS for b in blobs]
    matrix = np.frombuffer(b"".join(blobs), dtype=np.int8).reshape(-1, minilm.DIMS).astype(np.float32)
    norms = np.sqrt(np.einsum("ij,ij->i", matrix, matrix))
    cosines = (matrix @ query) / np.maximum(norms, 1e-12)
    best: list[float] = np.maximum.reduceat(cosines, np.cumsum([0, *windows[:-1]])).tolist()
    return best


def rescored(
    con: sqlite3.Connection,
    item: str,
    ranked: list[tuple[float, int]],
    query: model_mod.Vectors | Future[model_mod.Vectors | None],
    static_of: Callable[[list[int]], list[tuple[float, int]]],
    *,
    estimated: set[int],
    its_own: Callable[[model_mod.Vectors], list[int]] | None = None,
    third: Ask | None = None,
    static_query: model_mod.Vectors | None = None,
) -> tuple[list[tuple[float, int]], dict[int, float]]:
    """`ranked` ((static cosine, id), best first) rescored by `mixed`, best first. `query`: the
    second model's vector of the query, or its computation, waited for once the candidates'
    vectors are read. `estimated`: the ids of `ranked` whose static cosine is an estimate (from
    their Hamming distance, capped at the read ones' floor), `static_of`: reads the static cosine
    of ids. `its_own`: given that vector, its own nearest ids (server.meaning.deep_scan), added
    to the candidates. Its own nearest and the REREAD estimated candidates it puts nearest are
    scored by their read static cosine: an estimate had sunk its nearest item below 20 others
    (bench_search_quality, "is an earlier moment smaller when timestamps are textual": static
    cosine 0.38 read, under 0.22 estimated). `third`: the third voice's part (server.meaning.third):
    its own nearest join the candidates, and the items it holds are scored by it and the second
    model (`mixed`), its cosine put on the static model's scale for this query (`static_query`:
    the query's vector by the static model, third.Ask.static_noise). With each id's `judged`
    cosine, where one of the two has read it."""
    if not ranked:
        return ranked, {}
    rows = con.execute(_VECTORS_SQL[item], (json_ids([i for _s, i in ranked]),)).fetchall()
    vector = query.result() if isinstance(query, Future) else query  # computed meanwhile
    if vector is None:
        return ranked, {}
    have = {i for _s, i in ranked}
    own = [i for i in its_own(vector) if i not in have or i in estimated] if its_own is not None else []
    if own:
        rows += con.execute(_VECTORS_SQL[item], (json_ids([i for i in own if i not in have]),)).fetchall()
        ranked = _with_read(ranked, static_of(own))
    voiced: dict[int, float] = {}  # the third voice's cosines, of the items it holds
    if third is not None:
        ranked, voiced = third.scored(con, item, ranked, static_query)
        asked = have | set(own)  # whose vectors of this model were read above
        unread = [i for i in voiced if i not in asked]  # its own nearest: their vectors
        if unread:
            rows += con.execute(_VECTORS_SQL[item], (json_ids(unread),)).fetchall()
    deep: dict[int, float] = {}
    if rows:
        deep = dict(zip([int(r[0]) for r in rows], nearest_window([r[1] for r in rows], vector), strict=True))
    pending = estimated - set(own)
    nearest = sorted((i for _s, i in ranked if i in pending and i in deep), key=lambda i: -deep[i])[:REREAD]
    if nearest:
        ranked = _with_read(ranked, static_of(nearest))
    out = [(mixed(s, deep.get(i), voiced.get(i)), i) for s, i in ranked]
    out.sort(key=lambda t: -t[0])
    judge = {i: j for _s, i in out if (j := judged(deep.get(i), voiced.get(i))) is not None}
    return out, judge


def _with_read(ranked: list[tuple[float, int]], read: list[tuple[float, int]]) -> list[tuple[float, int]]:
    """`ranked` with the (static cosine, id) of `read` in place of what it had for those ids."""
    replaced = {i for _s, i in read}
    return [(s, i) for s, i in ranked if i not in replaced] + read


__all__ = ["DeepLane", "embed_query", "judged", "mixed", "reads", "rescored", "start_query"]
