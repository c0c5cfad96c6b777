"""The static model alone reads the vectors of the candidates best by their sign estimate
(server.meaning.model.sign_estimates: the query dotted with a vector's signs), chosen among more
candidates nearest by Hamming distance (server.meaning.lane._by_sign_estimate). The estimate
weighs each dimension by the query's value there; the Hamming distance weighs all alike."""

from __future__ import annotations

import numpy as np

from server.meaning import model as model_mod
from server.meaning.index import FACT, UNASSIGNED, BitIndex
from server.meaning.lane import _by_sign_estimate

DIMS = model_mod.DIMS


def unit(v: np.ndarray) -> np.ndarray:
    out: np.ndarray = (v / np.linalg.norm(v, axis=-1, keepdims=True)).astype(np.float32)
    return out


def test_the_estimate_is_the_query_dotted_with_the_signs() -> None:
    rng = np.random.default_rng(5)
    vectors, query = unit(rng.normal(size=(30, DIMS))), unit(rng.normal(size=DIMS))
    bits = np.frombuffer(b"".join(model_mod.sign_bits(vectors)), np.uint8).reshape(30, -1)
    signs = np.where(vectors > 0, 1.0, -1.0)
    assert np.allclose(model_mod.sign_estimates(bits, query), signs @ query, atol=1e-4)


def test_the_index_hands_back_the_bits_of_what_it_found_in_every_layout() -> None:
    rng = np.random.default_rng(9)
    vectors = unit(rng.normal(size=(500, DIMS)))
    bits = model_mod.sign_bits(vectors)
    index = BitIndex()
    parts = [int(p) if i % 5 else UNASSIGNED for i, p in enumerate(rng.integers(0, 8, 400))]
    index.add(list(range(1, 401)), [FACT] * 400, list(range(1, 401)), bits[:400], parts)
    index.set_centroids(unit(rng.normal(size=(8, DIMS))))
    index.add(list(range(401, 501)), [FACT] * 100, list(range(401, 501)), bits[400:])  # after the layout
    query = unit(rng.normal(size=DIMS))
    qbits = model_mod.sign_bits(query[None, :])[0]
    for reach in (1.0, 0.2):
        ids, dist, complete = index.nearest(query, qbits, FACT, 120, reach)
        ids2, dist2, found, complete2 = index.nearest_bits(query, qbits, FACT, 120, reach)
        assert ids.tolist() == ids2.tolist() and dist.tolist() == dist2.tolist() and complete == complete2
        assert [row.tobytes() for row in found] == [bits[int(i) - 1] for i in ids]


def test_a_vector_near_in_the_query_s_strong_dimensions_is_read_before_one_near_in_its_weak_ones() -> None:
    rng = np.random.default_rng(2)
    query = np.full(DIMS, 0.02, np.float32)
    query[:8] = 1.0  # a query with eight strong dimensions
    query = unit(query)
    # 1: agrees with the query on the strong dimensions, not on 100 weak ones; 2: on every weak
    # one and not on the strong ones (nearer by Hamming distance, far by cosine); then noise
    strong = np.where(np.arange(DIMS) < 8, 1.0, 0.02)
    strong[8 : 8 + 100] = -0.02
    weak = np.where(np.arange(DIMS) < 8, -1.0, 0.02)
    noise = rng.normal(size=(200, DIMS))
    vectors = unit(np.vstack([strong, weak, noise]).astype(np.float32))
    assert vectors[0] @ query > 0.9 > -0.5 > vectors[1] @ query
    index = BitIndex()
    n = len(vectors)
    index.add(list(range(1, n + 1)), [FACT] * n, list(range(1, n + 1)), model_mod.sign_bits(vectors))
    qbits = model_mod.sign_bits(query[None, :])[0]
    by_hamming, _d, _c = index.nearest(query, qbits, FACT, 1, 1.0)
    assert by_hamming.tolist() == [2]  # control: the Hamming distance alone reads the wrong one
    chosen, _dist, complete = _by_sign_estimate(index, query, qbits, FACT, 1, 1.0)
    assert chosen.tolist() == [1] and not complete
    every, _dist, complete = _by_sign_estimate(index, query, qbits, FACT, n, 1.0)
    assert len(every) == n and complete and every[0] == 1
