"""The third voice by meaning: multilingual-e5-small (server.meaning.e5) for the items the second
model does not read and e5 does (`reads`: the second model's rule for queries and items, applied
by both: at least KNOWN_WORDS of their words are words of the model's vocabulary): a Dutch
conversation, a Japanese note.

Most of the reference ChatGPT export is Dutch. For an English question about a Dutch conversation
the static model puts the target nowhere near its top 100 (cosine ~0.1-0.2) and the second model
reads it as word pieces; e5 relates the two languages. So these items get e5's vectors (one per
window of the second model's, `e5_*_vectors`: 0016), built in the background after the second
model's queue (server.meaning.voice); other items get none. A search the second model reads also
embeds its query with e5 (~6 ms, beside the second model's, on the deep-query pool) while the store
holds any such vector; the items nearest to it by e5's sign bits join the candidates, and each item
holding an e5 vector is scored by the mean of e5's cosine, put on the static model's scale, and the
second model's, in place of the static model's cosine (server.meaning.deep.rescored).

e5's cosines sit in a narrow band (any two texts ~0.8), so they are put on the static model's scale
for the query: its median and 95th percentile cosine by each model to the same sample of the
store (server.meaning.scale). Until that sample is taken: the static model's fixed noise
(STATIC_NOISE, the medians over the bench's queries) and e5's over a random sample of its own
windows (its scan keeps OWN_WINDOWS). bench/fusion_lab.py measured that first rule over every item of
the three quality stores: held-out cross-language paraphrase r@1/5/10 0.00/0.05/0.05 ->
0.10/0.29/0.33, the tuned paraphrases unchanged; the sample of the store's items takes r@10 on to
0.48 (server.meaning.scale).
"""

from __future__ import annotations

import sqlite3
from concurrent.futures import Future
from dataclasses import dataclass

import numpy as np

from server.meaning import deep, e5, minilm
from server.meaning import model as model_mod
from server.meaning import scale as scale_mod
from server.meaning.deep_scan import DeepScan
from server.meaning.items import json_ids
from server.meaning.voice import Voice, VoiceLane
from server.store.db import Store

# of its own windows, kept by its scan: their cosines to a query set e5's scale until
# server.meaning.scale has taken its sample of items (scale.SAMPLE, items, not windows)
OWN_WINDOWS = 256
# the static model's cosine to unrelated items: a query's median and 95th percentile over the
# items, the medians of those over bench_search_quality's queries (bench/fusion_lab.py)
STATIC_NOISE = (0.095, 0.209)
NEAREST = 100  # windows whose items its own scan adds to the candidates

Vectors = model_mod.Vectors


def reads(text: str) -> bool:
    """Whether the third voice speaks for this item: the second model does not read it
    (`deep.reads`) and e5 does (at least KNOWN_WORDS of its words are words of its vocabulary, the
    second model's rule: e5.Words.known_share). Random letters are neither's: of bench_memory.py's
    generated notes the second model does not read (57k of 1M) e5 reads 3 %; of the real items of
    bench_search_quality's store it does not read (Dutch and Japanese turns), 276 of 279."""
    return not deep.reads(text) and e5.words().known_share(text[: minilm.ITEM_CHARS]) >= deep.KNOWN_WORDS


def embed(texts: list[str]) -> list[Vectors | None]:
    """Per text, e5's vector of each of the second model's windows of it, or None when the third
    voice does not speak for it (`reads`: it keeps no vector of that item)."""
    return [e5.model().windows(t) if reads(t) else None for t in texts]


# its vectors of candidates, to score them (their items are read through the visibility rule)
_VECTORS_SQL = {
    "fact": "SELECT fact_id, vec FROM e5_fact_vectors WHERE fact_id IN (SELECT value FROM json_each(?))",
    "chunk": "SELECT chunk_id, vec FROM e5_chunk_vectors WHERE chunk_id IN (SELECT value FROM json_each(?))",
}
# every vector of it, a page at a time: its own scan's bits and sample
_LOAD_SQL = {
    "fact": "SELECT fact_id, vec FROM e5_fact_vectors WHERE fact_id > ? ORDER BY fact_id LIMIT 5000",
    "chunk": "SELECT chunk_id, vec FROM e5_chunk_vectors WHERE chunk_id > ? ORDER BY chunk_id LIMIT 5000",
}
_COUNT_SQL = "SELECT (SELECT COUNT(*) FROM e5_fact_vectors) + (SELECT COUNT(*) FROM e5_chunk_vectors)"


def _load() -> None:
    """What decides (the second model and e5's vocabulary, ~15 MB); e5 itself is loaded when an
    item needs it (a store of English only never loads it)."""
    minilm.model()
    e5.words()


THIRD = Voice(
    name=e5.NAME,
    prefix="e5",
    available=e5.available,
    load=_load,
    embed=embed,
    vectors_sql=_VECTORS_SQL,
    load_sql=_LOAD_SQL,
    count_sql=_COUNT_SQL,
    centre=lambda: e5.model().centre,
    sample=OWN_WINDOWS,
    speaks=reads,
)


def ThirdLane(store: Store, scale: scale_mod.ScaleSample, *, enabled: bool = True) -> VoiceLane:  # noqa: N802 - what it makes
    """The third voice's state and background build (driven by server.meaning.embedder), the
    scale's sample taken after its vectors; off with the second model."""
    return VoiceLane(store, THIRD, enabled=enabled, off_reason="off with the second model", finish=scale)


def start_query(text: str) -> Future[Vectors]:
    """The query's vector of e5, being computed on the deep-query pool."""
    return deep.queries.submit(e5.model().query, text)


@dataclass
class Ask:
    """The third voice's part in one search (server.meaning.deep.rescored)."""

    vector: Future[Vectors]  # the query's, being computed
    scan: DeepScan
    scale: scale_mod.Scale | None = None  # both models' vectors of a sample of the store (server.meaning.scale)

    def static_noise(self, static_query: Vectors | None) -> tuple[float, float]:
        """The static model's noise for this query (its vector by the static model): over the
        scale's sample; STATIC_NOISE until it is taken (or without the query's vector)."""
        if self.scale is None or static_query is None:
            return STATIC_NOISE
        return scale_mod.noise(self.scale.static, static_query)

    def scored(
        self, con: sqlite3.Connection, item: str, ranked: list[tuple[float, int]], static_query: Vectors | None
    ) -> tuple[list[tuple[float, int]], dict[int, float]]:
        """`ranked` with its own NEAREST windows' items added (their static cosine left out: -1),
        and its cosine, on the static model's scale for this query (`static_noise` of its vector
        by the static model), of each of those items it holds."""
        vector = self.vector.result()
        have = {i for _s, i in ranked}
        if self.scan.scans:
            ranked = ranked + [(-1.0, i) for i in self.scan.nearest(item, vector, NEAREST) if i not in have]
        held = self.scan.holding(item, [i for _s, i in ranked])
        if not held:
            return ranked, {}
        rows = con.execute(_VECTORS_SQL[item], (json_ids(held),)).fetchall()
        if not rows:
            return ranked, {}
        cosines = np.asarray(deep.nearest_window([r[1] for r in rows], vector), np.float32)
        scaled = on_static_scale(cosines, self.e5_noise(vector), self.static_noise(static_query)).tolist()
        return ranked, dict(zip([int(r[0]) for r in rows], scaled, strict=True))

    def e5_noise(self, query: Vectors) -> tuple[float, float]:
        """e5's noise for this query: over the scale's sample; until it is taken, over its own
        windows' sample (its scan keeps OWN_WINDOWS), or its reference texts' (e5.E5.reference) while
        that holds fewer than scale.MIN_WINDOWS."""
        if self.scale is not None:
            return scale_mod.noise(self.scale.e5, query)
        own = self.scan.sample
        return scale_mod.noise(own if len(own) >= scale_mod.MIN_WINDOWS else e5.model().reference, query)


def ask(lane: VoiceLane, text: str, scale: scale_mod.Scale | None = None) -> Ask | None:
    """The third voice's part in a search of `text`, its query vector started; None while it is
    off or holds no vector (a store of English only pays nothing for it)."""
    if not lane.on or not (lane.scan.items or lane.scan.over):
        return None
    return Ask(start_query(text), lane.scan, scale)


def on_static_scale(cosines: Vectors, e5_noise: tuple[float, float], static: tuple[float, float]) -> Vectors:
    """e5's cosines to a query put on the static model's scale for it: e5's noise for the query
    (median, 95th percentile) maps to the static model's."""
    median, high = e5_noise
    low, top = static
    out: Vectors = (low + (cosines - median) * (top - low) / max(high - median, 1e-6)).astype(np.float32)
    return out


__all__ = ["NEAREST", "THIRD", "Ask", "ThirdLane", "ask", "embed", "on_static_scale", "start_query"]
