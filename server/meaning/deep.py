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

import asyncio
import contextlib
import logging
import sqlite3
from collections.abc import Callable
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from typing import Any

import numpy as np

from server.meaning import deep_scan, minilm
from server.meaning import model as model_mod
from server.meaning.deep_scan import DeepScan
from server.meaning.items import ITEMS, Key, dequeue, item_texts, json_ids, take
from server.store.db import Store

log = logging.getLogger("wherefrom")
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
BATCH = 16  # items a step: ~0.15 s of one core, so the static model's queue waits little behind it
_QUEUE_SQL = "SELECT id FROM deep_queue WHERE item = ? ORDER BY id LIMIT ?"
_DEQUEUE_SQL = "DELETE FROM deep_queue WHERE item = ? AND id IN (SELECT value FROM json_each(?))"
_TABLE = {"fact": ("deep_fact_vectors", "fact_id"), "chunk": ("deep_chunk_vectors", "chunk_id")}
# the candidates' vectors of this model, to rescore them: no item is answered from these reads
_FACT_VECTORS_SQL = "SELECT fact_id, vec FROM deep_fact_vectors WHERE fact_id IN (SELECT value FROM json_each(?))"
_CHUNK_VECTORS_SQL = "SELECT chunk_id, vec FROM deep_chunk_vectors WHERE chunk_id IN (SELECT value FROM json_each(?))"
_VECTORS_SQL = {"fact": _FACT_VECTORS_SQL, "chunk": _CHUNK_VECTORS_SQL}
# every vector of this model, a page at a time: its own scan's bits (server.meaning.deep_scan)
_LOAD_SQL = {
    "fact": "SELECT fact_id, vec FROM deep_fact_vectors WHERE fact_id > ? ORDER BY fact_id LIMIT 5000",
    "chunk": "SELECT chunk_id, vec FROM deep_chunk_vectors WHERE chunk_id > ? ORDER BY chunk_id LIMIT 5000",
}


def mixed(static: float, deep: float | None) -> float:
    """A candidate's cosine by meaning: the mean of the two models' (the static one alone
    while its item has no vector of the second model). The second model lifts a candidate only
    when it relates the two texts itself (a cosine of at least RELATED); below that it can only
    lower it, so unrelated text is not lifted over the noise floor by its baseline."""
    if deep is None:
        return static
    mean = (static + deep) / 2
    return mean if deep >= RELATED else min(static, mean)


class DeepLane:
    """The second model's state and background build (driven by server.meaning.embedder)."""

    def __init__(self, store: Store, *, enabled: bool = True) -> None:
        self.store = store
        self.state = "loading"  # -> building -> ready, or failed; "off" when it does not run:
        self.off_reason = ""
        if not enabled:
            self.state, self.off_reason = "off", "switched off (--no-second-model)"
        elif not minilm.available():
            self.state, self.off_reason = "off", "not installed"
        self.pending = 0
        self.done = 0
        self.error: str | None = None
        self.scan = DeepScan()  # its own candidates: the sign bits of every window it read
        # while no one is asking (server.quiet), a batch of its own on a spare thread beside each
        # step's: bench_backfill --notes 6000 [--quiet], one thread 116-118 items/s, both 171
        self._on_spare: asyncio.Task[int] | None = None
        self._claimed: set[Key] = set()  # the items of the batches being embedded
        self._taking = asyncio.Lock()

    @property
    def on(self) -> bool:
        return self.state in ("building", "ready")

    def progress(self) -> dict[str, Any]:
        return {
            "model": minilm.NAME,
            "state": self.state,
            "pending": self.pending,
            "embedded": self.done,
            "own_candidates": self.scan.state,  # its own scan beside the static model's candidates
            **({"error": self.error} if self.error else {}),
            **({"off": self.off_reason} if self.off_reason else {}),
        }

    async def _start(self, executor: Executor) -> None:
        """Load the model (off the loop; the first time on a machine it is built, ~3 s). Not
        before the static model's queue is empty: a large build's memory is given back first."""
        try:
            await asyncio.get_running_loop().run_in_executor(executor, minilm.model)
        except Exception as e:  # search by the static model goes on; health says why
            log.exception("the second embedding model did not load")
            self.state, self.error = "failed", f"{type(e).__name__}: {e}"
            return
        await self._load_scan()
        self.pending = await self._queued()
        self.state = "building" if self.pending else "ready"

    async def _load_scan(self) -> None:
        """The bits of every window read so far (not when the store holds more than the scan keeps)."""
        counted = await self.store.fetchone(
            "SELECT (SELECT COUNT(*) FROM deep_fact_vectors) + (SELECT COUNT(*) FROM deep_chunk_vectors)"
        )
        if counted and int(counted[0]) > deep_scan.MAX_ITEMS:
            self.scan.too_many()
            return
        for item in ITEMS:
            after = 0
            while rows := await self.store.fetchall(_LOAD_SQL[item], (after,)):
                self.scan.add(item, [(int(r[0]), bytes(r[1])) for r in rows])
                after = int(rows[-1][0])

    async def _queued(self) -> int:
        row = await self.store.fetchone("SELECT COUNT(*) FROM deep_queue")
        return int(row[0]) if row else 0

    async def step(self, executor: Executor, spare: Executor | None = None) -> int:
        """Embed one batch of the queue; how many queue rows it handled (0: empty, or off). Given
        `spare` while no batch runs there, another batch of its own starts on it, not waited for:
        a spare thread that gets little of a busy machine holds back its own batch only. The first
        call loads the model."""
        if self.state == "loading":
            await self._start(executor)
        if not self.on:
            return 0
        if spare is not None and self._on_spare is None:
            self._on_spare = asyncio.create_task(self._spare_step(spare), name="deep-spare")
        n = await self._guarded(executor)
        if not n and self._on_spare is not None:  # the queue's last batch is on the spare thread
            n = await asyncio.shield(self._on_spare)
        return n

    async def _spare_step(self, spare: Executor) -> int:
        try:
            return await self._guarded(spare)
        finally:
            self._on_spare = None

    async def stop(self) -> None:
        """Cancel the spare thread's batch (its transaction rolls back: the batch stays queued)."""
        if self._on_spare is not None:
            self._on_spare.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._on_spare

    async def _guarded(self, executor: Executor) -> int:
        try:
            return await self._step(executor)
        except asyncio.CancelledError:
            raise
        except Exception as e:  # the static model's lane goes on
            log.exception("the second embedding model stopped")
            self.state, self.error = "failed", f"{type(e).__name__}: {e}"
            return 0

    async def _step(self, executor: Executor) -> int:
        async with self._taking:  # the items of a batch running on the other thread are not taken again
            wanted = _unclaimed(await take(self.store, _QUEUE_SQL, BATCH + len(self._claimed)), self._claimed, BATCH)
            mine = {(item, i) for item, ids in wanted.items() for i in ids}
            self._claimed |= mine
        try:
            if not mine:
                if not self._claimed:
                    self.state, self.pending = "ready", 0
                return 0
            self.state = "building"
            if len(mine) > self.pending:  # items written since the count: count again (small then)
                self.pending = await self._queued()
            return await self._embed(executor, wanted)
        finally:
            self._claimed -= mine

    async def _embed(self, executor: Executor, wanted: dict[str, list[int]]) -> int:
        texts = await item_texts(self.store, wanted)
        keys = list(texts)
        windows = await asyncio.get_running_loop().run_in_executor(
            executor, minilm.model().embed_windows, [texts[k] for k in keys]
        )
        blobs = [b"".join(model_mod.to_int8(w)) for w in windows]  # an item's windows, one after another
        async with self.store.transaction() as conn:
            now = await item_texts(self.store, wanted)
            # a changed item is still queued (its trigger re-queued it), for a later batch
            fresh = [(k, b) for k, b in zip(keys, blobs, strict=True) if now.get(k) == texts[k]]
            for item in ITEMS:
                table, column = _TABLE[item]
                await conn.executemany(
                    f"INSERT OR REPLACE INTO {table}({column}, model, vec) VALUES (?, ?, ?)",  # noqa: S608
                    [(i, minilm.NAME, blob) for (kind, i), blob in fresh if kind == item],
                )
            done = await dequeue(conn, _DEQUEUE_SQL, wanted, now, fresh)
        for item in ITEMS:
            self.scan.add(item, [(i, b) for (kind, i), b in fresh if kind == item])
        self.done += done
        self.pending = max(0, self.pending - done)
        return sum(map(len, wanted.values()))


def _unclaimed(wanted: dict[str, list[int]], claimed: set[Key], batch: int) -> dict[str, list[int]]:
    """The first `batch` of `wanted` (facts first, then chunks) not in `claimed`."""
    out: dict[str, list[int]] = {}
    for item in ITEMS:
        room = batch - sum(map(len, out.values()))
        out[item] = [i for i in wanted.get(item, []) if (item, i) not in claimed][:room]
    return out


def reads(text: str) -> bool:
    """Whether the second model reads this query: at least KNOWN_WORDS of its words are words of
    its vocabulary. A misspelled word, a name or a language it was not trained on is cut into
    word pieces, whose vector is noise next to what the static model and the words lane read."""
    return minilm.model().known_share(text) >= KNOWN_WORDS


def embed_query(text: str) -> model_mod.Vectors | None:
    """The query's vector of the second model (CPU-bound, a few ms: call it off the loop); None
    when it does not read the query (`reads`)."""
    return minilm.model().embed([text]).reshape(-1) if reads(text) else None


# a query's vector of the second model is computed here while the static model's scan and reads
# run on a store reader, which waits for it only when it rescores
_queries = ThreadPoolExecutor(max_workers=2, thread_name_prefix="deep-query")


def start_query(text: str) -> Future[model_mod.Vectors | None] | None:
    """The query's vector of the second model, being computed (None when it does not read it)."""
    return _queries.submit(embed_query, text) if reads(text) else None


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
) -> list[tuple[float, int]]:
    """`ranked` ((static cosine, id), best first) rescored by `mixed`, best first. `query`: the
    second model's vector of the query, or its computation, waited for once the candidates'
    vectors are read. `estimated`: the ids of `ranked` whose static cosine is an estimate (from
    their Hamming distance, capped at the read ones' floor), `static_of`: reads the static cosine
    of ids. `its_own`: given that vector, its own nearest ids (server.meaning.deep_scan), added
    to the candidates. Its own nearest and the REREAD estimated candidates it puts nearest are
    scored by their read static cosine: an estimate had sunk its nearest item below 20 others
    (bench_search_quality, "is an earlier moment smaller when timestamps are textual": static
    cosine 0.38 read, under 0.22 estimated)."""
    if not ranked:
        return ranked
    rows = con.execute(_VECTORS_SQL[item], (json_ids([i for _s, i in ranked]),)).fetchall()
    vector = query.result() if isinstance(query, Future) else query  # computed meanwhile
    if vector is None:
        return ranked
    have = {i for _s, i in ranked}
    own = [i for i in its_own(vector) if i not in have or i in estimated] if its_own is not None else []
    if own:
        rows += con.execute(_VECTORS_SQL[item], (json_ids([i for i in own if i not in have]),)).fetchall()
        ranked = _with_read(ranked, static_of(own))
    deep: dict[int, float] = {}
    if rows:
        deep = dict(zip([int(r[0]) for r in rows], nearest_window([r[1] for r in rows], vector), strict=True))
    pending = estimated - set(own)
    nearest = sorted((i for _s, i in ranked if i in pending and i in deep), key=lambda i: -deep[i])[:REREAD]
    if nearest:
        ranked = _with_read(ranked, static_of(nearest))
    out = [(mixed(s, deep.get(i)), i) for s, i in ranked]
    out.sort(key=lambda t: -t[0])
    return out


def _with_read(ranked: list[tuple[float, int]], read: list[tuple[float, int]]) -> list[tuple[float, int]]:
    """`ranked` with the (static cosine, id) of `read` in place of what it had for those ids."""
    replaced = {i for _s, i in read}
    return [(s, i) for s, i in ranked if i not in replaced] + read


__all__ = ["DeepLane", "embed_query", "mixed", "reads", "rescored", "start_query"]
