"""The scale of a query's cosines by meaning, for putting the third voice's (e5) cosines on the
static model's: both models' vectors of the same SAMPLE items of the store, picked at random
(BitIndex.sample, a fixed seed), held in memory. A query's median and 95th percentile cosine over
each model's windows of these items are that model's noise for this query
(server.meaning.third.on_static_scale): an item e5 speaks for is put where an item of the same
standing among the store's by e5 stands by the static model.

Before it, the static model's noise was fixed (third.STATIC_NOISE, the median over the bench's
queries) and e5's was measured over e5's own windows only (the Dutch and Japanese items): a query
of common words, over every item by the static model, had its e5 items sink below the static
model's noise, and one of rare words had them rise above it. Served (bench_search_quality.py,
seeds 5 / 6 / 7), cross-language paraphrase r@10: held-out 0.33 / 0.38 / 0.38 -> 0.48 / 0.52 /
0.48, tuned 0.18 / 0.27 / 0.09 -> 0.36; every other kind as before (bench/README, thirteenth pass).

Taken in the background by the third voice's build once its queue is empty and it holds a vector
(server.meaning.voice: `finish`), BATCH items a step on the embedder's thread (SAMPLE items cost
~5 s of CPU: e5 reads each of their windows), and again each time the static model's index has
doubled since (a store's first hundred notes do not speak for its millionth). Until then, and
while a sample holds fewer than MIN_WINDOWS windows, the scale is the fixed one. It is a statistic
of the items a search may show (read through the visibility rule), never a result and never
written: an item hidden or deleted since stays in it until it is taken again.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import Executor
from dataclasses import dataclass

import numpy as np

from server import heap
from server.governance.visibility import visible
from server.meaning import e5
from server.meaning import model as model_mod
from server.meaning.index import BitIndex
from server.meaning.items import ITEMS, Key, item_texts, json_ids
from server.store.db import Store

SAMPLE = 256  # items (128, 256 and 512 gave the same mean recall, 128 varying more: bench/README, 13th pass)
BATCH = 16  # items a step (~0.3 s of one core)
MIN_WINDOWS = 32  # a sample of fewer windows (a store of a few notes) says little: the fixed scale stays

Vectors = model_mod.Vectors

_ITEMS_SQL = "SELECT fact_id, chunk_id FROM vectors WHERE id IN (SELECT value FROM json_each(?))"
# of those, the ones a search may show: a forgotten item, or one of a site now `off`, is not read
_VISIBLE_SQL = {
    "fact": f"""
SELECT f.id FROM facts f WHERE f.id IN (SELECT value FROM json_each(?)) AND {visible("facts", "f")}
""",  # noqa: S608 - built by visible()
    "chunk": f"""
SELECT c.id FROM document_chunks c JOIN documents d ON d.id = c.document_id
WHERE c.id IN (SELECT value FROM json_each(?)) AND {visible("document_chunks", "c")} AND {visible("documents", "d")}
""",  # noqa: S608 - built by visible()
}
_STATIC_SQL = {
    "fact": "SELECT vec FROM vectors WHERE fact_id IN (SELECT value FROM json_each(?)) AND model = ?",
    "chunk": "SELECT vec FROM vectors WHERE chunk_id IN (SELECT value FROM json_each(?)) AND model = ?",
}


@dataclass(frozen=True)
class Scale:
    static: Vectors  # the sampled items' windows by the static model, unit vectors
    e5: Vectors  # by e5, unit vectors (its windows are the second model's)


def noise(sample: Vectors, query: Vectors) -> tuple[float, float]:
    """A query's median and 95th percentile cosine to the sample's vectors."""
    around = sample @ query
    return float(np.median(around)), float(np.percentile(around, 95))


def _passages(texts: list[str]) -> Vectors:
    """e5's vectors of the texts' windows, one after another."""
    return np.vstack([np.zeros((0, e5.DIMS), np.float32), *(e5.model().windows(t) for t in texts)])


class ScaleSample:
    """The scale being taken and the one taken (`scale`), a step at a time (server.meaning.voice's
    `finish` for the third voice)."""

    def __init__(self, store: Store, index: BitIndex) -> None:
        self.store, self.index = store, index
        self.scale: Scale | None = None  # None until taken
        self._of = 0  # the index's size when the last one was started
        self._todo: list[Key] = []
        self._static: list[Vectors] = []
        self._e5: list[Vectors] = []

    def due(self) -> bool:
        """Whether it is being taken, or is to be (none yet, or the index has doubled since)."""
        return bool(self._todo) or (len(self.index) > 0 and len(self.index) >= 2 * self._of)

    def progress(self) -> str:
        """ "none", "N windows" (taken), or "taking, N items to go"."""
        if self._todo:
            return f"taking, {len(self._todo)} items to go"
        return "none" if self.scale is None else f"{len(self.scale.static)} windows"

    async def step(self, executor: Executor) -> int:
        """Read BATCH of the sample's items by both models (starting a sample when it is due); how
        many items it read (0: nothing to do)."""
        if not self._todo:
            if not self.due():
                return 0
            self._of = len(self.index)
            rows = await self.store.fetchall(_ITEMS_SQL, (json_ids(self.index.sample(SAMPLE)),))
            self._todo = sorted({("fact", int(f)) if f is not None else ("chunk", int(c)) for f, c in rows})
            self._static, self._e5 = [], []
            if not self._todo:
                return 0
        batch, self._todo = self._todo[:BATCH], self._todo[BATCH:]
        try:
            await self._read(batch, executor)
        except BaseException:  # this sample is given up (its caller says why)
            self._todo, self._static, self._e5 = [], [], []
            raise
        if not self._todo:
            static = np.vstack([model_mod.from_int8([]), *self._static])  # (none at all: hidden items only)
            static = static[np.any(static, axis=1)]
            passages = np.vstack([np.zeros((0, e5.DIMS), np.float32), *self._e5])
            if min(len(static), len(passages)) >= MIN_WINDOWS:  # else the one before stays (or none)
                self.scale = Scale(static, passages)
            self._static, self._e5 = [], []
            # what e5 took to read long windows (its queries are short) goes back: bench_memory at
            # 1M, server RSS after the requests 461-465 MB before the scale, 473-475 with it, 436-439
            # with it and this
            await asyncio.get_running_loop().run_in_executor(executor, heap.release)
        return len(batch)

    async def _read(self, batch: list[Key], executor: Executor) -> None:
        wanted = {}
        for item in ITEMS:
            ids = [i for kind, i in batch if kind == item]
            shown = await self.store.fetchall(_VISIBLE_SQL[item], (json_ids(ids),)) if ids else []
            wanted[item] = sorted(int(r[0]) for r in shown)
        for item in ITEMS:
            if wanted[item]:
                rows = await self.store.fetchall(_STATIC_SQL[item], (json_ids(wanted[item]), model_mod.NAME))
                self._static.append(model_mod.from_int8([bytes(r[0]) for r in rows]))
        texts = await item_texts(self.store, wanted)
        self._e5.append(await asyncio.get_running_loop().run_in_executor(executor, _passages, list(texts.values())))


__all__ = ["BATCH", "MIN_WINDOWS", "SAMPLE", "Scale", "ScaleSample", "noise"]
