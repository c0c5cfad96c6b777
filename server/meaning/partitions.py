"""Partitions of the vectors, so that a search by meaning scans a few percent of them, not all
(server.meaning.index): k-means centroids of one model's vectors (`vector_partitions`, written
in one transaction) and each vector's nearest centroid (`vectors.part`; 0012_vector_partitions.sql).

Trained once per model, as soon as the store holds TRAIN_AT vectors (a full scan of fewer costs
about a millisecond), on a sample of them, off the event loop. From then on the embedder gives
each new vector its partition as it writes it; the vectors written before are assigned in
batches of ASSIGN_BATCH, each one transaction, while the embed queue is empty. A kill -9 leaves
each vector assigned or not (an unassigned one is scanned by every query), never half-written;
the next start goes on where it stopped.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from concurrent.futures import Executor

import numpy as np

from server.meaning import model as model_mod
from server.meaning.index import BitIndex
from server.store.db import Store

log = logging.getLogger("wherefrom")
TRAIN_AT = 50_000
SAMPLE_PER_PART = 32
ITERATIONS = 10
ASSIGN_BATCH = 4_096

_CENTROIDS_SQL = "SELECT part, centroid FROM vector_partitions WHERE model = ? ORDER BY part"
_VECTORS_SQL = "SELECT id, vec FROM vectors WHERE id IN (SELECT value FROM json_each(?)) AND model = ?"
_WRITE_CENTROID_SQL = "INSERT INTO vector_partitions(model, part, centroid) VALUES (?, ?, ?)"
_ASSIGN_SQL = "UPDATE vectors SET part = ? WHERE id = ?"


def parts_for(vectors: int) -> int:
    """How many partitions: about the square root of the vectors (~1,000 vectors each)."""
    return int(np.clip(np.sqrt(vectors), 64, 1024))


def kmeans(sample: model_mod.Vectors, k: int, iterations: int = ITERATIONS, seed: int = 0) -> model_mod.Vectors:
    """Spherical k-means (cosine): k unit centroids of the sample's unit vectors. CPU-bound."""
    rng = np.random.default_rng(seed)
    centroids = sample[rng.choice(len(sample), k, replace=False)].copy()
    for _ in range(iterations):
        nearest = np.argmax(sample @ centroids.T, axis=1)
        sums = np.zeros_like(centroids)
        np.add.at(sums, nearest, sample)
        empty = ~sums.any(axis=1)
        sums[empty] = sample[rng.choice(len(sample), int(empty.sum()), replace=False)]  # reseed
        norms = np.linalg.norm(sums, axis=1, keepdims=True)
        centroids = (sums / np.maximum(norms, 1e-12)).astype(np.float32)
    return centroids


async def load(store: Store, index: BitIndex) -> None:
    """The current model's centroids into the index (none: the index scans everything)."""
    rows = await store.fetchall(_CENTROIDS_SQL, (model_mod.NAME,))
    if rows:
        centroids = np.frombuffer(b"".join(r[1] for r in rows), np.float32).reshape(len(rows), model_mod.DIMS)
        index.set_centroids(centroids.copy())


async def step(store: Store, index: BitIndex, executor: Executor, *, idle: bool) -> bool:
    """One piece of partitioning work, if any is due: train (once enough vectors exist), or,
    while the embed queue is `idle`, assign one batch. Whether it did anything."""
    loop = asyncio.get_running_loop()
    if index.centroids is None and len(index) >= max(TRAIN_AT, index.train_after):
        await train(store, index, executor)
        return True
    ids = index.unassigned(ASSIGN_BATCH) if idle and index.centroids is not None else []
    if ids:
        rows = await store.fetchall(_VECTORS_SQL, (json.dumps(ids), model_mod.NAME))
        vectors = model_mod.from_int8([r[1] for r in rows])
        parts = await loop.run_in_executor(executor, index.part_of, vectors)
        pairs = [(p, int(r[0])) for p, r in zip(parts, rows, strict=True)]
        async with store.transaction() as conn:
            await conn.executemany(_ASSIGN_SQL, pairs)
        index.assign([i for _p, i in pairs], parts)
        gone = sorted(set(ids) - {i for _p, i in pairs})  # deleted since loading, or of another model
        if gone and index.centroids is not None:
            index.assign(gone, [len(index.centroids)] * len(gone))  # out of range: never laid out
    await loop.run_in_executor(executor, index.maintain)  # new and assigned vectors into the layout
    return bool(ids)


async def train(store: Store, index: BitIndex, executor: Executor) -> None:
    t0 = time.monotonic()
    k = parts_for(len(index))
    ids = index.sample(k * SAMPLE_PER_PART)
    rows = await store.fetchall(_VECTORS_SQL, (json.dumps(ids), model_mod.NAME))
    sample = model_mod.from_int8([r[1] for r in rows])
    sample = sample[np.any(sample, axis=1)]
    if len(sample) < k:
        index.train_after = 2 * len(index)
        return
    centroids = await asyncio.get_running_loop().run_in_executor(executor, kmeans, sample, k)
    async with store.transaction() as conn:
        await conn.execute("DELETE FROM vector_partitions WHERE model = ?", (model_mod.NAME,))
        # a partition number means a centroid of this training only: any earlier one is void
        await conn.execute("UPDATE vectors SET part = NULL WHERE part IS NOT NULL AND model = ?", (model_mod.NAME,))
        await conn.executemany(_WRITE_CENTROID_SQL, [(model_mod.NAME, p, c.tobytes()) for p, c in enumerate(centroids)])
    await asyncio.get_running_loop().run_in_executor(executor, index.set_centroids, centroids, True)
    log.info("meaning: %d partitions trained on %d vectors in %.1f s", k, len(sample), time.monotonic() - t0)
