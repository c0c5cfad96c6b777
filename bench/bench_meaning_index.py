"""Recall and speed of the partitioned meaning index against the exact scan, on a store's vectors.

    .venv/bin/python bench/bench_meaning_index.py --data-dir D [--queries 300]

D is a store whose vectors are built (e.g. bench_memory.py's, after its run). The queries are
page titles of the store, as the related tier asks them (server.memory.pagematch). For each:
  exact        the 10 nearest fact vectors by cosine over every vector (float, no index)
  flat         server.meaning.index without partitions: every vector's sign bits scanned, the
               lane's window (FIRST_WINDOW) reranked by int8 cosine, as server.meaning.lane does
  partitioned  the same with the store's partitions (vector_partitions; trained here on a
               sample if the store has none), scanning FIRST_REACH of the vectors
recall@10 is |top 10 ∩ exact top 10| / 10, averaged; ms is index.nearest's time per query (wall
clock, and the thread's CPU time: on a loaded machine the wall clock is mostly waiting).
"""

from __future__ import annotations

import argparse
import sqlite3
import statistics
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.memory_store import pct, sample_pages  # noqa: E402
from server.meaning import lane, partitions  # noqa: E402
from server.meaning import model as model_mod  # noqa: E402
from server.meaning.index import CHUNK, FACT, UNASSIGNED, BitIndex  # noqa: E402
from server.memory.pagematch import strip_site_name  # noqa: E402


def load(db: Path) -> tuple[BitIndex, BitIndex, np.ndarray, np.ndarray, np.ndarray | None]:
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    flat, parted = BitIndex(), BitIndex()
    ids: list[int] = []
    vecs: list[bytes] = []
    kinds: list[int] = []
    after = 0
    while rows := con.execute(
        "SELECT id, fact_id IS NULL, bits, part, vec, COALESCE(fact_id, chunk_id) FROM vectors"
        " WHERE id > ? AND model = ? ORDER BY id LIMIT 50000",
        (after, model_mod.NAME),
    ).fetchall():
        k = [CHUNK if r[1] else FACT for r in rows]
        owners = [r[5] for r in rows]
        flat.add([r[0] for r in rows], k, owners, [r[2] for r in rows])
        parted.add(
            [r[0] for r in rows], k, owners, [r[2] for r in rows], [UNASSIGNED if r[3] is None else r[3] for r in rows]
        )
        ids += [r[0] for r in rows]
        vecs += [r[4] for r in rows]
        kinds += k
        after = rows[-1][0]
    cents = con.execute(
        "SELECT centroid FROM vector_partitions WHERE model = ? ORDER BY part", (model_mod.NAME,)
    ).fetchall()
    con.close()
    int8 = np.frombuffer(b"".join(vecs), np.int8).reshape(len(vecs), model_mod.DIMS)
    centroids = (
        np.frombuffer(b"".join(c[0] for c in cents), np.float32).reshape(len(cents), model_mod.DIMS).copy()
        if cents
        else None
    )
    return flat, parted, np.array(ids), int8, centroids


def unit_rows(int8: np.ndarray, lo: int, hi: int) -> np.ndarray:
    rows = int8[lo:hi].astype(np.float32)
    return rows / np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-12)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data-dir", type=Path, required=True)
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--reach", type=float, default=lane.FIRST_REACH)
    args = ap.parse_args()
    db = args.data_dir / "wherefrom.db"
    t0 = time.perf_counter()
    flat, parted, ids, int8, centroids = load(db)
    print(f"{len(ids):,} vectors loaded in {time.perf_counter() - t0:.0f} s")
    if centroids is None:
        t0 = time.perf_counter()
        k = partitions.parts_for(len(ids))
        pick = np.random.default_rng(0).choice(len(ids), min(len(ids), k * partitions.SAMPLE_PER_PART), replace=False)
        centroids = partitions.kmeans(unit_rows(int8, 0, len(ids))[pick], k)
        parted.set_centroids(centroids)
        parts = np.concatenate([parted.part_of(unit_rows(int8, i, i + 50_000)) for i in range(0, len(ids), 50_000)])
        parted.assign(ids.tolist(), parts.tolist())
        print(f"no stored partitions: {k} trained and assigned here in {time.perf_counter() - t0:.0f} s")
    else:
        parted.set_centroids(centroids)
    parted.maintain()
    titles = [strip_site_name(t) for _u, t in sample_pages(db, args.queries)]
    queries = model_mod.model().embed(titles)
    qbits = model_mod.sign_bits(queries)
    exact_scores = np.concatenate(
        [unit_rows(int8, i, i + 100_000) @ queries.T for i in range(0, len(ids), 100_000)]
    )  # (vectors, queries)
    results: dict[str, tuple[list[float], list[float], list[float]]] = {
        "flat": ([], [], []),
        "partitioned": ([], [], []),
    }
    for n, (q, qb) in enumerate(zip(queries, qbits, strict=True)):
        exact = set(ids[np.argpartition(-exact_scores[:, n], 9)[:10]].tolist())
        for name, index, reach in (("flat", flat, 1.0), ("partitioned", parted, args.reach)):
            t, c = time.perf_counter(), time.thread_time()
            found, _dist, _complete = index.nearest(q, qb, FACT, lane.FIRST_WINDOW, reach)
            results[name][1].append((time.perf_counter() - t) * 1000)
            results[name][2].append((time.thread_time() - c) * 1000)
            pos = np.searchsorted(ids, found)
            top = found[np.argsort(-(_units(int8, pos) @ q))[:10]]
            results[name][0].append(len(exact & set(top.tolist())) / 10)
    print(f"{len(titles)} page titles as queries, window {lane.FIRST_WINDOW}, reach {args.reach:.0%}:")
    for name, (recall, ms, cpu) in results.items():
        print(
            f"  {name:<12} recall@10 vs exact {statistics.mean(recall):.3f}   "
            f"index ms p50 {pct(ms, 50):.2f} p95 {pct(ms, 95):.2f} p99 {pct(ms, 99):.2f}   "
            f"CPU ms p50 {pct(cpu, 50):.2f} p99 {pct(cpu, 99):.2f}"
        )
    return 0


def _units(int8: np.ndarray, pos: np.ndarray) -> np.ndarray:
    rows = int8[pos].astype(np.float32)
    return rows / np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-12)


if __name__ == "__main__":
    raise SystemExit(main())
