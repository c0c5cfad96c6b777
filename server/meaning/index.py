"""The in-memory index of the vectors table: every vector's id, item kind and sign bits
(32 bytes a vector: 32 MB at 1M vectors). A query scans it by Hamming distance for candidates;
the caller reranks them by their int8 vectors, read from SQLite joined back to their items
(which is where the visibility rule applies). Ids of vectors since deleted stay here until the
next start; the join drops them.
"""

from __future__ import annotations

import threading

import numpy as np
import numpy.typing as npt

FACT, CHUNK = 0, 1
WORDS = 4  # 256 bits as uint64 words

Ids = npt.NDArray[np.int64]


class BitIndex:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._ids: Ids = np.zeros(0, np.int64)
        self._kinds = np.zeros(0, np.int8)
        self._bits = np.zeros((0, WORDS), np.uint64)
        self._pending: list[tuple[Ids, npt.NDArray[np.int8], npt.NDArray[np.uint64]]] = []

    def __len__(self) -> int:
        with self._lock:
            return len(self._ids) + sum(len(p[0]) for p in self._pending)

    def add(self, ids: list[int], kinds: list[int], bits: list[bytes]) -> None:
        if not ids:
            return
        packed = np.frombuffer(b"".join(bits), dtype=np.uint64).reshape(len(ids), WORDS)
        with self._lock:
            self._pending.append((np.array(ids, np.int64), np.array(kinds, np.int8), packed))

    def _merge(self) -> None:
        if self._pending:
            self._ids = np.concatenate([self._ids, *(p[0] for p in self._pending)])
            self._kinds = np.concatenate([self._kinds, *(p[1] for p in self._pending)])
            self._bits = np.concatenate([self._bits, *(p[2] for p in self._pending)])
            self._pending = []

    def nearest(self, query_bits: bytes, kind: int, k: int) -> tuple[Ids, int]:
        """The ids of (up to) the k vectors of `kind` nearest to the query by Hamming distance,
        nearest first, and how many vectors of that kind there are. CPU-bound (~10 ms at 1M)."""
        with self._lock:
            self._merge()
            ids, kinds, bits = self._ids, self._kinds, self._bits
        q = np.frombuffer(query_bits, dtype=np.uint64)
        dist = np.bitwise_count(bits ^ q).sum(axis=1, dtype=np.int32)
        dist[kinds != kind] = 10_000
        total = int(np.count_nonzero(kinds == kind))
        k = min(k, total)
        if k <= 0:
            return np.zeros(0, np.int64), total
        top = np.argpartition(dist, k - 1)[:k] if k < len(dist) else np.arange(len(dist))
        top = top[np.argsort(dist[top], kind="stable")]
        return ids[top], total
