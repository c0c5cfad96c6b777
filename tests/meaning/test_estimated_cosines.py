"""The static model's cosine of the candidates whose vectors a search with the second model does not
read (server.meaning.lane._estimated): the line through the read ones' (Hamming distance, cosine),
never above the weakest read one; a vector the index no longer knows is left out."""

from __future__ import annotations

import numpy as np

from server.meaning import model as model_mod
from server.meaning.index import FACT, BitIndex
from server.meaning.lane import _cosines, _estimated


def test_the_unread_candidates_are_scored_by_their_distance_below_the_read_ones() -> None:
    rng = np.random.default_rng(3)
    dims = model_mod.DIMS
    query = rng.normal(size=dims).astype(np.float32)
    query /= np.linalg.norm(query)
    # vectors ever farther from the query (cosines ~0.9 down to ~0.2)
    vectors = np.stack([query + rng.normal(size=dims) * (0.03 + 0.007 * k) for k in range(40)]).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    bits = model_mod.sign_bits(vectors)
    index = BitIndex()
    ids = list(range(1, 41))
    index.add(ids, [FACT] * 40, [100 + i for i in ids], bits)
    found, dist, _complete = index.nearest(query, model_mod.sign_bits(query[None, :])[0], FACT, 40, 1.0)
    read = 20
    rows = [{"id": int(i), "vec": model_mod.to_int8(vectors[int(i) - 1][None, :])[0]} for i in found[:read]]
    cosines = _cosines(rows, query)
    estimated = _estimated(index, cosines, found, dist, read)
    assert [item for _c, item in estimated] == [100 + int(i) for i in found[read:]]  # each unread one, by its item
    guesses = [c for c, _i in estimated]
    weakest = min(float(vectors[int(i) - 1] @ query) for i in found[:read])
    assert all(g <= weakest + 0.01 for g in guesses)  # (int8 rounding: < 0.01)
    assert guesses == sorted(guesses, reverse=True)  # nearer by bits, higher
    true = [float(vectors[int(i) - 1] @ query) for i in found[read:]]
    assert float(np.corrcoef(guesses, true)[0, 1]) > 0.5  # the estimate follows the real cosine
    # a vector deleted since the index was loaded is not known to it: no estimate, no item
    unknown = np.append(found, np.int64(999))
    assert len(_estimated(index, cosines, unknown, np.append(dist, np.int32(200)), read)) == 20
    assert _estimated(index, cosines, found[:read], dist[:read], read) == []  # nothing unread
