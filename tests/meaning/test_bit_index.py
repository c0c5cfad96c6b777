"""The in-memory index against a brute-force scan: with the reach of every vector, its nearest k
are the k smallest Hamming distances of the kind, whatever the layout (partitioned, unassigned,
added after the layout); a partial reach scans whole partitions, nearest centroids first."""

from __future__ import annotations

import numpy as np
import pytest

from server.meaning import index as index_mod
from server.meaning.index import CHUNK, FACT, UNASSIGNED, WORDS, BitIndex
from server.meaning.model import DIMS


def brute(bits: np.ndarray, query: np.ndarray) -> np.ndarray:
    return np.array([sum(bin(int(w)).count("1") for w in row ^ query) for row in bits])


def test_full_reach_is_an_exact_scan_in_every_layout(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(7)
    n, k, parts = 3_000, 25, 16
    bits = rng.integers(0, 2**63, size=(n, WORDS), dtype=np.uint64)
    kinds = rng.choice([FACT, CHUNK], n, p=[0.8, 0.2])
    index = BitIndex()
    first = 2_000  # laid out with partitions; the rest arrive after the layout
    assigned = [int(p) if i % 7 else UNASSIGNED for i, p in enumerate(rng.integers(0, parts, first))]
    owners = [10 * i for i in range(1, n + 1)]  # the item of vector i (made up: 10 i)
    index.add(
        list(range(1, first + 1)), kinds[:first].tolist(), owners[:first], [r.tobytes() for r in bits[:first]], assigned
    )
    centroids = rng.normal(size=(parts, DIMS)).astype(np.float32)
    index.set_centroids(centroids / np.linalg.norm(centroids, axis=1, keepdims=True))
    index.add(
        list(range(first + 1, n + 1)), kinds[first:].tolist(), owners[first:], [r.tobytes() for r in bits[first:]]
    )
    assert index.items_of(np.array([3, n, n + 1, 1], np.int64)).tolist() == [30, 10 * n, 0, 10]
    query_vec = rng.normal(size=DIMS).astype(np.float32)
    for kind in (FACT, CHUNK):
        query = rng.integers(0, 2**63, size=WORDS, dtype=np.uint64)
        ids, got, complete = index.nearest(query_vec, query.tobytes(), kind, k, 1.0)
        of_kind = np.flatnonzero(kinds == kind)
        dist = brute(bits[of_kind], query)
        assert sorted(brute(bits[ids - 1], query).tolist()) == sorted(dist)[:k]
        assert all(kinds[i - 1] == kind for i in ids) and not complete
        assert list(brute(bits[ids - 1], query)) == sorted(brute(bits[ids - 1], query))  # nearest first
        assert got.tolist() == brute(bits[ids - 1], query).tolist()  # and their distances
        # a small reach scans fewer vectors, and every one it scans is of the kind
        monkeypatch.setattr(index_mod, "SCAN_MIN", 10)
        few, _bits, everything = index.scanned(query_vec, kind, 0.1)
        every, _bits, everything_all = index.scanned(query_vec, kind, 1.0)
        assert not everything and everything_all and len(few) < len(every) == len(of_kind)
        assert sorted(every.tolist()) == sorted((of_kind + 1).tolist())


@pytest.mark.parametrize("seed", range(40))
def test_top_k_is_the_k_smallest_distances_the_first_of_equal_ones_first(seed: int) -> None:
    """index_mod.top_k against a full stable sort, on distances with many ties (a few distinct
    values, or the spread of real Hamming distances), every k from none to more than there are."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 3_000))
    spread = [3, 20, 257][seed % 3]
    dist = (rng.binomial(256, 0.5, n) % spread if spread < 257 else rng.binomial(256, 0.5, n)).astype(np.int32)
    for k in (0, 1, 2, int(rng.integers(1, n + 1)), n - 1, n, n + 5):
        got = index_mod.top_k(dist, k)
        assert got.dtype == np.intp
        assert got.tolist() == np.argsort(dist, kind="stable")[: max(k, 0)].tolist(), (n, k)
