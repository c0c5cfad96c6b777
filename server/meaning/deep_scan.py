"""The second model's own candidates: the sign bits of every window it has read, in memory, scanned
by Hamming distance beside the static model's candidates (server.meaning.lane).

The static model's 600 nearest miss some paraphrases that the second model would rank first (its
targets' static cosine is low); the second model never scans its int8 vectors (384 bytes a window,
read from SQLite by id), but its sign bits (48 bytes a window) scan fast: ~1 ms per 100k windows
here. While the store holds at most MAX_ITEMS items read by it, each search adds the items of its
NEAREST nearest windows to the candidates; above that, the scan would cost more than a search's
budget (and its bits ~60 MB at 1M items), so it is not kept and the static model's candidates are
all there is (`state` says which). Bits of an item changed or deleted since they were added stay
until the next start: they only add a candidate, whose vectors are then read by id (a deleted item
has none and is dropped; a changed one is scored by what it holds now).
"""

from __future__ import annotations

import threading

import numpy as np
import numpy.typing as npt

from server.meaning.index import hamming, top_k
from server.meaning.items import ITEMS as KINDS
from server.meaning.minilm import DIMS

MAX_ITEMS = 200_000  # items read by the second model beyond which it does not scan
SAMPLE_SEED = 7
NEAREST = 300  # windows whose items a search adds (paraphrase r@10 0.76 -> 0.82 at 50 and 100, 0.85 at 300)


def window_bits(blob: bytes, centre: npt.NDArray[np.float32] | None = None) -> npt.NDArray[np.uint64]:
    """The sign bits of each window of a blob (server.meaning.deep: DIMS int8 a window), as
    (windows, DIMS / 64) words; with a `centre`, of each unit window less it."""
    windows = np.frombuffer(blob, dtype=np.int8).reshape(-1, DIMS)
    return _bits(windows if centre is None else units(windows) - centre)


def units(windows: npt.NDArray[np.int8]) -> npt.NDArray[np.float32]:
    """int8 windows as unit vectors."""
    out = windows.astype(np.float32)
    out /= np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)
    return out


def _bits(vectors: npt.NDArray[np.floating] | npt.NDArray[np.int8]) -> npt.NDArray[np.uint64]:
    return np.packbits(vectors > 0, axis=-1).view(np.uint64)


class DeepScan:
    """`centre`: its windows' bits are those of each unit window less it (server.meaning.e5's);
    `sample`: it keeps up to that many of its windows, picked at random, as unit vectors (the scale
    of a query's cosines to its items: server.meaning.third)."""

    def __init__(self, centre: npt.NDArray[np.float32] | None = None, sample: int = 0) -> None:
        self.centre = centre
        self.sample_size = sample
        self.sample = np.zeros((0, DIMS), np.float32)
        self._seen = 0  # windows offered to the sample
        self._rng = np.random.default_rng(SAMPLE_SEED)
        self._lock = threading.Lock()
        self.items = 0  # items added (an item read again counts again)
        self.over = False  # more than MAX_ITEMS: nothing kept, no scan
        self._owners: dict[str, list[npt.NDArray[np.int64]]] = {k: [] for k in KINDS}
        self._bits: dict[str, list[npt.NDArray[np.uint64]]] = {k: [] for k in KINDS}
        self._packed: dict[str, tuple[npt.NDArray[np.int64], npt.NDArray[np.uint64], npt.NDArray[np.int64]]] = {}

    @property
    def scans(self) -> bool:
        """Whether it holds anything to scan (a search waits for the query's vector only then)."""
        return not self.over and self.items > 0

    @property
    def state(self) -> str:
        return f"off: more than {MAX_ITEMS:,} items" if self.over else "on"

    def add(self, kind: str, rows: list[tuple[int, bytes]]) -> None:
        """The windows of these items (item id, blob) of `kind` ('fact' or 'chunk')."""
        if self.over or not rows:
            return
        joined = b"".join(blob for _i, blob in rows)
        bits = window_bits(joined, self.centre)  # one numpy pass for all of them
        owners = np.repeat(np.array([i for i, _b in rows], np.int64), [len(b) // DIMS for _i, b in rows])
        with self._lock:
            if self.sample_size:
                self._keep_some(np.frombuffer(joined, np.int8).reshape(-1, DIMS))
            self.items += len(rows)
            if self.items > MAX_ITEMS:
                self._off()
                return
            self._owners[kind].append(owners)
            self._bits[kind].append(bits)
            self._packed.pop(kind, None)

    def _keep_some(self, windows: npt.NDArray[np.int8]) -> None:
        """Reservoir sampling: each window offered so far is in the sample with the same chance."""
        for window in windows:
            self._seen += 1
            if len(self.sample) < self.sample_size:
                self.sample = np.vstack([self.sample, units(window[None, :])])
                continue
            slot = int(self._rng.integers(self._seen))
            if slot < self.sample_size:
                self.sample[slot] = units(window[None, :])[0]

    def too_many(self) -> None:
        """The store holds more items than it keeps: keep nothing, scan nothing."""
        with self._lock:
            self._off()

    def _off(self) -> None:
        self.over = True
        self._owners = {k: [] for k in KINDS}
        self._bits = {k: [] for k in KINDS}
        self._packed = {}

    def nearest(self, kind: str, query: npt.NDArray[np.float32], k: int = NEAREST) -> list[int]:
        """The items of `kind` owning the k windows nearest to the query's sign bits, nearest
        first, each once (none when it does not scan)."""
        packed = self._columns(kind)
        if packed is None:
            return []
        owners, columns, _held = packed
        qbits = _bits(query if self.centre is None else query - self.centre)
        out: list[int] = list(dict.fromkeys(owners[top_k(hamming(columns, qbits), k)].tolist()))
        return out

    def holding(self, kind: str, ids: list[int]) -> list[int]:
        """Those of `ids` whose windows it holds (all of them once it keeps nothing)."""
        packed = self._columns(kind)
        if packed is None:
            return ids if self.over else []
        held = packed[2]
        at = np.minimum(np.searchsorted(held, ids), len(held) - 1)
        out: list[int] = np.asarray(ids, np.int64)[held[at] == ids].tolist()
        return out

    def _columns(self, kind: str) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.uint64], npt.NDArray[np.int64]] | None:
        """The kind's owners, bits word by word (server.meaning.index.hamming) and owners sorted
        once each, joined once after each add."""
        with self._lock:
            if self.over or not self._owners[kind]:
                return None
            packed = self._packed.get(kind)
            if packed is None:
                owners = np.concatenate(self._owners[kind])
                bits = np.concatenate(self._bits[kind])
                self._owners[kind], self._bits[kind] = [owners], [bits]
                packed = self._packed[kind] = (owners, np.ascontiguousarray(bits.T), np.unique(owners))
            return packed


__all__ = ["MAX_ITEMS", "NEAREST", "DeepScan", "units", "window_bits"]
