"""A Unigram tokenizer (SentencePiece's model) over a large vocabulary, in little memory: the same
pieces as the `tokenizers` library's Unigram model gives (its encode_optimized: the best-scoring
path, the first candidate kept on a tie, a character no piece covers as the unknown piece at the
lowest score less 10, runs of unknown pieces fused into one), which for multilingual-e5-small's
250k pieces holds a trie of ~270 MB; this holds the pieces as sorted fixed-width arrays, one per
length (~10 MB, built from the model file's arrays without a Python string per piece), and finds
every piece of a text with one binary search per length.
tests/meaning/test_e5.py compares the two.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from server.meaning.e5_file import Vocabulary

UNK_PENALTY = 10.0


class Unigram:
    def __init__(self, vocabulary: Vocabulary, unk_id: int) -> None:
        self.unk_id = unk_id
        self.scores = vocabulary.scores.astype(np.float64)
        self.unk_score = float(self.scores.min()) - UNK_PENALTY
        codes, starts, lengths = vocabulary.codes, vocabulary.starts, vocabulary.lengths
        self.longest = int(lengths.max(initial=0))
        self._tables: list[tuple[npt.NDArray[np.str_], npt.NDArray[np.int64]]] = []
        for length in range(1, self.longest + 1):
            ids = np.flatnonzero(lengths == length)
            table = np.ascontiguousarray(codes[starts[ids][:, None] + np.arange(length)]).view(f"<U{length}").ravel()
            order = np.argsort(table, kind="stable")  # a piece listed twice: its ids in order
            table, ids = table[order], ids[order]
            last = np.append(table[1:] != table[:-1], True)  # ... and the last one kept
            self._tables.append((table[last], ids[last].astype(np.int64)))

    def pieces(self) -> list[str]:
        """Every piece it holds (for building a model's reference texts, once)."""
        return [str(p) for table, _ids in self._tables for p in table.tolist()]

    def encode(self, text: str) -> list[int]:
        """The ids of the best path through the text's pieces."""
        n = len(text)
        if not n:
            return []
        codes = np.frombuffer(text.encode("utf-32-le"), np.uint32)
        starts: list[list[tuple[int, int]]] = [[] for _ in range(n)]  # per start: (length, id), shortest first
        for length, (table, ids) in enumerate(self._tables, start=1):
            if length > n or not len(table):
                continue
            windows = np.lib.stride_tricks.sliding_window_view(codes, length)
            subs = np.ascontiguousarray(windows).view(f"<U{length}").reshape(-1)
            at = np.minimum(np.searchsorted(table, subs), len(table) - 1)
            for start in np.flatnonzero(table[at] == subs).tolist():
                starts[start].append((length, int(ids[at[start]])))
        best = [0.0] * (n + 1)
        back: list[tuple[int, int] | None] = [None] * (n + 1)  # (start, id) of the best path's last piece
        best[0], back[0] = 0.0, (-1, -1)
        for start in range(n):
            here = best[start]
            single = False
            for length, piece in starts[start]:
                end, score = start + length, here + float(self.scores[piece])
                if back[end] is None or score > best[end]:
                    best[end], back[end] = score, (start, piece)
                single = single or length == 1
            if not single:
                score = here + self.unk_score
                if back[start + 1] is None or score > best[start + 1]:
                    best[start + 1], back[start + 1] = score, (start, self.unk_id)
        out: list[int] = []
        end = n
        while end > 0:
            step = back[end]
            assert step is not None
            start, piece = step
            if not (piece == self.unk_id and out and out[-1] == self.unk_id):  # unknowns fused
                out.append(piece)
            end = start
        out.reverse()
        return out


__all__ = ["Unigram"]
