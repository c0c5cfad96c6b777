"""The second look by meaning: all-MiniLM-L6-v2 (server.meaning.minilm) reranks the static model's
candidates.

The static model (server.meaning.model) embeds thousands of items a second and finds the
candidates; it misses most paraphrases ("getting a new pup used to its kennel" for a note on
crate training). The sentence transformer separates them far better but embeds ~100 items a
second, so it never scans: each item gets one vector of it (`deep_vectors`, 0014), built by the
embedder's task after its own queue, in batches off the event loop, resumably (`deep_queue`); a
search embeds its query with it too (a few ms) and each candidate is scored by the mean of its
two cosines (`mixed`), or by the static one alone while its item has no vector of this model yet.

The meaning lane of page-match (the page's title: one lookup per page open, under a 5 ms budget)
keeps the static model alone. When the model's package is not installed the lane is `off` and
the meaning lane is the static model's, as before.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from concurrent.futures import Executor
from typing import Any

from server.meaning import minilm
from server.meaning import model as model_mod
from server.meaning.items import ITEMS, item_texts, json_ids
from server.store.db import Store

log = logging.getLogger("wherefrom")
# the static model's candidates it rescores (the lane's first window without it is 200): paraphrase
# recall@10 0.71 -> 0.76 at 600, no higher at 1,200 or 2,400 (bench/bench_search_quality.py)
WINDOW = 600
KNOWN_WORDS = 0.5  # the share of a query's words the second model must know to read it
BATCH = 16  # items a step: ~0.15 s of one core, so the static model's queue waits little behind it
_QUEUE_SQL = "SELECT id FROM deep_queue WHERE item = ? ORDER BY id LIMIT ?"
_DEQUEUE_SQL = "DELETE FROM deep_queue WHERE item = ? AND id IN (SELECT value FROM json_each(?))"
_COLUMN = {"fact": "fact_id", "chunk": "chunk_id"}
# the candidates' vectors of this model, to rescore them: no item is answered from this read
_VECTORS_SQL = {
    item: f"SELECT {column}, vec FROM deep_vectors WHERE {column} IN (SELECT value FROM json_each(?))"  # noqa: S608
    for item, column in _COLUMN.items()
}


def mixed(static: float, deep: float | None) -> float:
    """A candidate's cosine by meaning: the mean of the two models' (the static one alone
    while its item has no vector of the second model)."""
    return static if deep is None else (static + deep) / 2


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

    @property
    def on(self) -> bool:
        return self.state in ("building", "ready")

    def progress(self) -> dict[str, Any]:
        return {
            "model": minilm.NAME,
            "state": self.state,
            "pending": self.pending,
            "embedded": self.done,
            **({"error": self.error} if self.error else {}),
            **({"off": self.off_reason} if self.off_reason else {}),
        }

    async def start(self, executor: Executor) -> None:
        """Load the model (off the loop; the first time on a machine it is built, ~3 s)."""
        if self.state == "off":
            return
        try:
            await asyncio.get_running_loop().run_in_executor(executor, minilm.model)
        except Exception as e:  # search by the static model goes on; health says why
            log.exception("the second embedding model did not load")
            self.state, self.error = "failed", f"{type(e).__name__}: {e}"
            return
        row = await self.store.fetchone("SELECT COUNT(*) FROM deep_queue")
        self.pending = int(row[0]) if row else 0
        self.state = "building" if self.pending else "ready"

    async def step(self, executor: Executor) -> int:
        """Embed one batch of the queue; how many queue rows it handled (0: empty, or off)."""
        if not self.on:
            return 0
        try:
            return await self._step(executor)
        except asyncio.CancelledError:
            raise
        except Exception as e:  # the static model's lane goes on
            log.exception("the second embedding model stopped")
            self.state, self.error = "failed", f"{type(e).__name__}: {e}"
            return 0

    async def _step(self, executor: Executor) -> int:
        wanted: dict[str, list[int]] = {}
        for item in ITEMS:
            room = BATCH - sum(map(len, wanted.values()))
            wanted[item] = [r[0] for r in await self.store.fetchall(_QUEUE_SQL, (item, room))] if room else []
        queued = sum(map(len, wanted.values()))
        if not queued:
            self.state, self.pending = "ready", 0
            return 0
        self.state = "building"
        texts = await item_texts(self.store, wanted)
        keys = list(texts)
        vectors = await asyncio.get_running_loop().run_in_executor(
            executor, lambda: minilm.model().embed([texts[k] for k in keys])
        )
        blobs = model_mod.to_int8(vectors) if keys else []
        async with self.store.transaction() as conn:
            now = await item_texts(self.store, wanted)
            # a changed item is still queued (its trigger re-queued it), for a later batch
            fresh = [(k, b) for k, b in zip(keys, blobs, strict=True) if now.get(k) == texts[k]]
            for (item, i), blob in fresh:
                column = _COLUMN[item]
                await conn.execute(f"DELETE FROM deep_vectors WHERE {column} = ?", (i,))  # noqa: S608
                await conn.execute(
                    f"INSERT INTO deep_vectors({column}, model, vec) VALUES (?, ?, ?)",  # noqa: S608
                    (i, minilm.NAME, blob),
                )
            gone = [(item, i) for item, ids in wanted.items() for i in ids if (item, i) not in now]
            done = [k for k, _b in fresh] + gone
            for item in ITEMS:
                await conn.execute(_DEQUEUE_SQL, (item, json_ids([i for kind, i in done if kind == item])))
        self.done += len(done)
        self.pending = max(0, self.pending - len(done))
        return queued


def embed_query(text: str) -> model_mod.Vectors | None:
    """The query's vector of the second model (CPU-bound, a few ms: call it off the loop); None
    when fewer than KNOWN_WORDS of its words are words of the model's vocabulary (a misspelled
    word, a name, a language it was not trained on): the static model and the words lane read
    those better, and the second model's vector of word pieces would only add noise."""
    m = minilm.model()
    if m.known_share(text) < KNOWN_WORDS:
        return None
    return m.embed([text]).reshape(-1)


def rescored(
    con: sqlite3.Connection, item: str, ranked: list[tuple[float, int]], query: model_mod.Vectors
) -> list[tuple[float, int]]:
    """`ranked` ((static cosine, id), best first) rescored by `mixed`, best first."""
    if not ranked:
        return ranked
    rows = con.execute(_VECTORS_SQL[item], (json_ids([i for _s, i in ranked]),)).fetchall()
    deep: dict[int, float] = {}
    if rows:
        scores = model_mod.from_int8([r[1] for r in rows], minilm.DIMS) @ query
        deep = {int(r[0]): float(s) for r, s in zip(rows, scores.tolist(), strict=True)}
    out = [(mixed(s, deep.get(i)), i) for s, i in ranked]
    out.sort(key=lambda t: -t[0])
    return out


__all__ = ["DeepLane", "embed_query", "mixed", "rescored"]
