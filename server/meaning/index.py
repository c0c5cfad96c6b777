"""The in-memory index of the vectors table: every vector's id, item kind, item id (the fact or
chunk it is a vector of), sign bits (32 bytes) and partition, and a copy of the ids and bits
(word by word) in partition order, so that a query reads each partition as one slice (~90 MB at
1M vectors). A query scans sign bits by Hamming distance for candidates; the caller reranks them
by their int8 vectors, read from SQLite, and reads their items through the visibility rule
(server.meaning.lane). Ids of vectors since
deleted stay here until the next start; reading their vectors drops them.

Partitioned (server.meaning.partitions: k-means centroids, each vector's nearest one), a query
scans only the partitions whose centroids are nearest to it, until `reach` of all vectors is
covered, plus every vector not laid out by partition yet (not assigned, or added since the
last layout): a few percent of a full scan. Without partitions it scans everything.
"""

from __future__ import annotations

import itertools
import threading
from typing import Any, TypeVar, cast

import numpy as np
import numpy.typing as npt

from server.meaning.model import DIMS, Vectors

FACT, CHUNK = 0, 1
KINDS = (FACT, CHUNK)
WORDS = DIMS // 64  # the sign bits as uint64 words
UNASSIGNED = -1
RELAYOUT_AT = 20_000  # vectors outside the partition layout that make `maintain` lay out again
SCAN_MIN = 20_000  # a partitioned query scans at least this many vectors of its kind

Ids = npt.NDArray[np.int64]
_A = TypeVar("_A", bound=npt.NDArray[Any])


def hamming(columns: npt.NDArray[np.uint64], query: npt.NDArray[np.uint64]) -> npt.NDArray[np.int32]:
    """The Hamming distance of each vector to the query; `columns` holds the vectors' sign bits
    word by word ((WORDS, n): a word's row is contiguous, so each XOR runs over one stretch of
    memory; a (n, WORDS) array broadcast against the query took 4x as long). All the words in one
    XOR and one count, then their rows added (a word at a time, three calls each, took 1.25x as
    long over a page-match's ~45k vectors at 1M items). int32: what top_k counts (numpy's
    argpartition, which it used before, was 4x slower on uint16)."""
    counts = np.bitwise_count(columns ^ query[:, None])
    out: npt.NDArray[np.int32] = counts[0].astype(np.int32)
    for word in range(1, len(counts)):  # WORDS here; the second model's bits have more
        out += counts[word]
    return out


def top_k(dist: npt.NDArray[np.int32], k: int) -> npt.NDArray[np.intp]:
    """The positions of the k smallest distances, smallest first, of equal ones the first
    (np.argsort(dist, kind="stable")[:k]). Hamming distances are small integers, so the k-th
    smallest is found by counting them. np.argpartition took 0.42 ms of a page-match's ~2.2 at 1M
    items (and chose among equal distances at the cut as it fell); the related tier's lookup went
    2.0-2.2 -> 1.8 ms (bench/README, twelfth pass)."""
    k = min(k, len(dist))
    if k <= 0:
        return np.zeros(0, np.intp)
    if k < len(dist):
        cut = int(np.searchsorted(np.cumsum(np.bincount(dist)), k))  # the k-th smallest distance
        below = np.flatnonzero(dist < cut)
        top = np.concatenate([below, np.flatnonzero(dist == cut)[: k - len(below)]])
        top.sort()  # positions in order, so the stable sort below keeps the first of equal ones first
    else:
        top = np.arange(len(dist))
    return top[np.argsort(dist[top], kind="stable")]


class BitIndex:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._n = 0
        self._ids: Ids = np.zeros(1024, np.int64)
        self._kinds: npt.NDArray[np.int8] = np.zeros(1024, np.int8)
        self._items: Ids = np.zeros(1024, np.int64)
        self._bits: npt.NDArray[np.uint64] = np.zeros((1024, WORDS), np.uint64)
        self._parts: npt.NDArray[np.int16] = np.zeros(1024, np.int16)
        self.centroids: Vectors | None = None
        self._assigned = 0  # assign() calls so far
        self._state: tuple[tuple[int, int, int], str] | None = None  # state() for (n, _assigned, centroids)
        self.train_after = 0  # a training that found too few vectors waits for twice as many
        # the layout: the vectors [0, _laid) copied grouped by kind, then partition (unassigned
        # first): partition p of kind c is _laid_ids[a:b] and _laid_bits[:, a:b] for a, b =
        # _offsets[c * _groups + p + 1 : ... + 3]; the bits are stored word by word (see
        # hamming); the vectors added since (_laid and on) are scanned by every query of their kind
        self._laid = 0
        self._groups = 1
        self._laid_ids: Ids = np.zeros(0, np.int64)
        self._laid_bits: npt.NDArray[np.uint64] = np.zeros((WORDS, 0), np.uint64)
        self._offsets = np.zeros(len(KINDS) + 1, np.int64)

    def __len__(self) -> int:
        return self._n

    def add(
        self, ids: list[int], kinds: list[int], items: list[int], bits: list[bytes], parts: list[int] | None = None
    ) -> None:
        """Append vectors (ids ascending, after every id already here) of these items (fact or
        chunk ids, by kind)."""
        if not ids:
            return
        packed = np.frombuffer(b"".join(bits), dtype=np.uint64).reshape(len(ids), WORDS)
        with self._lock:
            n, m = self._n, len(ids)
            if n + m > len(self._ids):
                cap = max(2 * len(self._ids), n + m)
                self._ids = _grown(self._ids, cap, n)
                self._kinds = _grown(self._kinds, cap, n)
                self._items = _grown(self._items, cap, n)
                self._bits = _grown(self._bits, cap, n)
                self._parts = _grown(self._parts, cap, n)
            self._ids[n : n + m] = ids
            self._kinds[n : n + m] = kinds
            self._items[n : n + m] = items
            self._bits[n : n + m] = packed
            self._parts[n : n + m] = UNASSIGNED if parts is None else parts
            self._n = n + m  # readers see the new vectors only once they are written

    def items_of(self, ids: Ids) -> Ids:
        """The item (fact or chunk id) of each of these vectors (0 for an id not here)."""
        with self._lock:
            n, known, items = self._n, self._ids, self._items
        if not n or not len(ids):
            return np.zeros(len(ids), np.int64)
        pos = np.minimum(np.searchsorted(known[:n], ids), n - 1)
        return np.where(known[pos] == ids, items[pos], 0)

    def set_centroids(self, centroids: Vectors, unassign: bool = False) -> None:
        """Partition by these centroids; `unassign`: they are newly trained, so the vectors'
        partitions (numbers of other centroids) are void until assigned again."""
        with self._lock:
            self.centroids = centroids
            if unassign:
                self._parts[: self._n] = UNASSIGNED
                self._assigned += 1
        self._relayout()

    def part_of(self, vectors: Vectors) -> list[int]:
        """Each vector's partition (its nearest centroid); UNASSIGNED without partitions."""
        centroids = self.centroids
        if centroids is None or not len(vectors):
            return [UNASSIGNED] * len(vectors)
        parts: list[int] = np.argmax(vectors @ centroids.T, axis=1).tolist()
        return parts

    def assign(self, ids: list[int], parts: list[int]) -> None:
        with self._lock:
            ids_now = self._ids[: self._n]
            pos = np.searchsorted(ids_now, ids)
            pos = np.minimum(pos, max(self._n - 1, 0))
            found = ids_now[pos] == np.asarray(ids, np.int64)
            self._parts[pos[found]] = np.asarray(parts, np.int16)[found]
            self._assigned += 1

    def state(self) -> str:
        """'flat' (no partitions: every query scans all), 'partitioning' (vectors still to
        assign) or 'partitioned'."""
        with self._lock:
            n, parts, centroids, known = self._n, self._parts, self.centroids, self._state
            key = (n, self._assigned, id(centroids))
        if centroids is None:
            return "flat"
        if known is not None and known[0] == key:
            return known[1]  # nothing added or assigned since: every search asks (via progress)
        state = "partitioning" if np.any(parts[:n] == UNASSIGNED) else "partitioned"
        self._state = (key, state)
        return state

    def unassigned(self, limit: int) -> list[int]:
        """Ids of (up to `limit`) vectors with no partition yet, oldest first."""
        with self._lock:
            n, ids, parts = self._n, self._ids, self._parts
        out: list[int] = ids[:n][parts[:n] == UNASSIGNED][:limit].tolist()
        return out

    def sample(self, size: int, seed: int = 0) -> list[int]:
        with self._lock:
            n, ids = self._n, self._ids
        rng = np.random.default_rng(seed)
        out: list[int] = np.sort(ids[:n][rng.choice(n, min(n, size), replace=False)]).tolist()
        return out

    def maintain(self) -> None:
        """Lay the vectors out again when many are outside the layout (CPU: ~0.1 s at 1M,
        queries go on meanwhile; call it off the event loop)."""
        with self._lock:
            loose = int(sum(self._offsets[c * self._groups + 1] - self._offsets[c * self._groups] for c in KINDS))
            loose += self._n - self._laid
        if loose >= RELAYOUT_AT:
            self._relayout()

    def _relayout(self) -> None:
        """The layout: the vectors [0, n) grouped by kind, then partition (unassigned first),
        copied in that order (ids and bits), so a query scans each partition as one slice."""
        with self._lock:
            n, centroids = self._n, self.centroids
            parts = self._parts[:n].astype(np.int64)
            kinds = self._kinds[:n].astype(np.int64)
            ids, bits = self._ids[:n], self._bits[:n]  # rows below n never change
        groups = 1 + (0 if centroids is None else len(centroids))
        parts[parts >= groups - 1] = UNASSIGNED  # of other centroids (or deleted): scanned always
        keys = kinds * groups + parts + 1
        order = np.argsort(keys, kind="stable")
        offsets = np.searchsorted(keys[order], np.arange(len(KINDS) * groups + 1)).astype(np.int64)
        laid_ids, laid_bits = ids[order], np.empty((WORDS, n), np.uint64)
        for word in range(WORDS):  # word by word (see hamming), with no copy between
            np.take(bits[:, word], order, out=laid_bits[word])
        with self._lock:
            if self.centroids is centroids:
                self._laid_ids, self._laid_bits = laid_ids, laid_bits
                self._offsets, self._laid, self._groups = offsets, n, groups

    def nearest(
        self, query: Vectors, query_bits: bytes, kind: int, k: int, reach: float
    ) -> tuple[Ids, npt.NDArray[np.int32], bool]:
        """The ids of (up to) the k vectors of `kind` nearest to the query by Hamming distance
        among the vectors scanned, nearest first, their distances, and whether those were all
        there are (every vector of the kind scanned and no more than k of them). `reach`: the
        share of the kind's vectors a partitioned scan covers at least. CPU-bound: call it off
        the event loop."""
        _slices, ids, dist, top, complete = self._scan(query, query_bits, kind, k, reach)
        return ids[top], dist[top], complete

    def nearest_bits(
        self, query: Vectors, query_bits: bytes, kind: int, k: int, reach: float
    ) -> tuple[Ids, npt.NDArray[np.int32], npt.NDArray[np.uint8], bool]:
        """`nearest`, with the found vectors' sign bits ((k, 32) bytes, as model.sign_bits packs
        them)."""
        slices, ids, dist, top, complete = self._scan(query, query_bits, kind, k, reach)
        return ids[top], dist[top], _gathered(slices, top), complete

    def _scan(
        self, query: Vectors, query_bits: bytes, kind: int, k: int, reach: float
    ) -> tuple[list[tuple[Ids, npt.NDArray[np.uint64]]], Ids, npt.NDArray[np.int32], npt.NDArray[np.intp], bool]:
        """The slices scanned, their ids and distances taken one after the other, the positions of
        the k nearest, and whether that is all there is."""
        slices, everything = self._slices(query, kind, reach)
        ids = np.concatenate([i for i, _c in slices])
        complete = everything and len(ids) <= k
        if min(k, len(ids)) <= 0:
            return slices, ids, np.zeros(len(ids), np.int32), np.zeros(0, np.intp), complete
        qbits = np.frombuffer(query_bits, dtype=np.uint64)
        # each slice's distances where it lies (copying the scanned bits together cost as much)
        dist = np.concatenate([hamming(columns, qbits) for _i, columns in slices])
        return slices, ids, dist, top_k(dist, k), complete

    def scanned(self, query: Vectors, kind: int, reach: float) -> tuple[Ids, npt.NDArray[np.uint64], bool]:
        """The ids and sign bits of the vectors of `kind` a query scans, and whether that is all
        of them: the partitions nearest to the query until `reach` of the kind's vectors, those
        not assigned, and those added since the layout."""
        slices, everything = self._slices(query, kind, reach)
        return np.concatenate([i for i, _c in slices]), np.concatenate([c.T for _i, c in slices]), everything

    def _slices(self, query: Vectors, kind: int, reach: float) -> tuple[list[tuple[Ids, npt.NDArray[np.uint64]]], bool]:
        """What `scanned` covers, as (ids, bits word by word) pieces where they lie: the
        layout's slices, then the vectors added since the layout."""
        with self._lock:
            n, kinds, ids, bits, centroids = self._n, self._kinds, self._ids, self._bits, self.centroids
            laid_ids, laid_bits = self._laid_ids, self._laid_bits
            offsets, laid, groups = self._offsets, self._laid, self._groups
        first = kind * groups
        block = offsets[first : first + groups + 1]  # the kind's groups: unassigned, then parts
        ranges = [(int(block[0]), int(block[-1]))]
        everything = True
        if centroids is not None and groups > 1:
            sizes = np.diff(block)[1:]
            want = max(SCAN_MIN, reach * float(block[-1] - block[0]))
            ranked = np.argsort(-(centroids @ query))
            reached = int(np.searchsorted(np.cumsum(sizes[ranked]), want)) + 1
            if reached < len(ranked):
                ranges = [(int(block[0]), int(block[1]))]
                ranges += [(int(block[p + 1]), int(block[p + 2])) for p in ranked[:reached].tolist()]
                everything = False
        tail = laid + np.flatnonzero(kinds[laid:n] == kind)
        pieces = [(laid_ids[a:b], laid_bits[:, a:b]) for a, b in ranges if b > a]
        return [*pieces, (ids[tail], np.ascontiguousarray(bits[tail].T))], everything


def _gathered(slices: list[tuple[Ids, npt.NDArray[np.uint64]]], at: npt.NDArray[np.intp]) -> npt.NDArray[np.uint8]:
    """The sign bits of the vectors at positions `at` of the slices taken one after the other,
    one row of bytes each, in model.sign_bits's order (the words are its bytes read as uint64).
    The positions are grouped by slice once (a mask per slice took 1.7x as long)."""
    starts = np.concatenate([[0], np.cumsum([len(i) for i, _c in slices])])
    slice_of = np.searchsorted(starts, at, side="right") - 1
    order = np.argsort(slice_of, kind="stable")
    bounds = np.searchsorted(slice_of[order], np.arange(len(slices) + 1)).tolist()
    out = np.zeros((len(at), WORDS), np.uint64)
    for s, (a, b) in enumerate(itertools.pairwise(bounds)):
        if b > a:
            mine = order[a:b]
            out[mine] = slices[s][1][:, at[mine] - starts[s]].T
    return out.view(np.uint8)


def _grown(a: _A, cap: int, n: int) -> _A:
    out = np.zeros((cap, *a.shape[1:]), a.dtype)
    out[:n] = a[:n]
    return cast(_A, out)
