"""The second model's own candidates (server.meaning.deep_scan): the sign bits of every window it
read, scanned beside the static model's candidates, so an item the static model does not put among
its nearest is still found by the second model; above MAX_ITEMS it keeps and scans nothing."""

from __future__ import annotations

import numpy as np
import pytest

from server import appkeys
from server.meaning import deep, deep_scan, lane, minilm
from server.meaning import model as model_mod
from server.meaning.deep_scan import DeepScan, window_bits
from server.settings import Settings
from tests.conftest import Api, running_api
from tests.meaning.test_deep_lane import CRATE, OTHERS, QUERY, built, store_notes

# notes the static model puts nearer to QUERY than CRATE (its words: getting, new, comfortable),
# and both models together below it (a hammock made comfortable scored 0.50 to CRATE's 0.49)
DECOYS = [
    f"Getting a new {thing} comfortable: {n} days of getting used to the new one."
    for n, thing in enumerate(
        [
            "chair",
            "mattress",
            "desk",
            "car seat",
            "pillow",
            "keyboard",
            "jacket",
            "bike saddle",
            "headset",
            "backpack",
            "boots",
            "sofa",
            "lamp",
            "monitor",
            "tent",
        ]
    )
]


pytestmark = pytest.mark.usefixtures("second_model")


def test_window_bits_are_each_windows_signs() -> None:
    blob = np.array([1] * 384 + [-1] * 384, np.int8).tobytes()
    bits = window_bits(blob)
    assert bits.shape == (2, 6) and bits[0].tolist() == [2**64 - 1] * 6 and bits[1].tolist() == [0] * 6


def test_nearest_windows_name_their_items_once_and_nothing_over_the_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(1)
    query = rng.normal(size=384).astype(np.float32)
    near = np.sign(query).astype(np.int8)  # the query's own signs: distance 0
    far = (-near).astype(np.int8)
    scan = DeepScan()
    scan.add("fact", [(7, far.tobytes() + near.tobytes()), (8, far.tobytes())])
    scan.add("chunk", [(9, near.tobytes())])
    assert scan.nearest("fact", query, 1) == [7]  # its second window is the query's signs
    assert scan.nearest("fact", query, 3) == [7, 8]  # each item once, nearest first
    assert scan.nearest("chunk", query) == [9]
    monkeypatch.setattr(deep_scan, "MAX_ITEMS", 4)
    scan.add("fact", [(10, near.tobytes()), (11, near.tobytes())])  # 5 items: over
    assert scan.over and scan.state.startswith("off") and scan.nearest("fact", query) == []


async def test_an_item_the_static_model_leaves_out_is_found_by_the_second_models_own_scan(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    await store_notes(api)
    for n, text in enumerate(DECOYS):
        status, _ = await api.post("/api/notes", {"url": f"https://decoys.example/{n}", "text": text})
        assert status == 201
    await built(api)
    # the static model's candidates for one result: 4 read and 8 estimated (a store's 600 and more)
    monkeypatch.setattr(lane, "FIRST_WINDOW", 1)
    texts = [CRATE, *OTHERS, *DECOYS]
    static = model_mod.model().embed(texts) @ model_mod.model().embed([QUERY])[0]
    assert int(np.sum(static > static[0])) >= 12  # not among the static model's 12 nearest

    async def first() -> str:
        status, body = await api.get("/api/search", params={"q": QUERY, "lanes": "meaning", "limit": 1})
        assert status == 200 and len(body["results"]) == 1, body
        return str(body["results"][0]["text"])

    assert await first() == CRATE
    # control: without its own scan (as above MAX_ITEMS) the second model never sees it
    api.app[appkeys.EMBEDDER].deep.scan.too_many()
    assert await first() != CRATE


async def test_an_item_whose_static_cosine_was_only_estimated_is_scored_by_its_read_one(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    """CRATE among the static model's candidates whose cosine it estimates (the far half of its
    window, by Hamming distance) and among the second model's own nearest: its score is the mean
    of its read static cosine and the second model's, and it comes first (with the estimate,
    from below the read half's floor, it did not). The same with the second model's own scan off
    (a large store): among the estimated candidates it puts nearest, its static cosine is read."""
    await store_notes(api)
    for n, text in enumerate(DECOYS):
        status, _ = await api.post("/api/notes", {"url": f"https://decoys.example/{n}", "text": text})
        assert status == 201
    await built(api)
    query = model_mod.model().embed([QUERY])[0]
    qbits = np.unpackbits(np.frombuffer(model_mod.sign_bits(query[None, :])[0], np.uint8))
    rows = await api.store.fetchall("SELECT f.text, v.bits, v.vec FROM vectors v JOIN facts f ON f.id = v.fact_id")
    bits = np.unpackbits(np.frombuffer(b"".join(bytes(r[1]) for r in rows), np.uint8).reshape(len(rows), -1), axis=1)
    distance = (bits != qbits).sum(axis=1)
    crate = [n for n, r in enumerate(rows) if r[0] == CRATE]
    assert len(crate) == 1
    nearer = int(np.sum(distance < distance[crate[0]]))
    tied = int(np.sum(distance == distance[crate[0]]))
    # a first window of `first` for one result: WIDEN x first candidates, the cosine of the
    # nearer half read, of the rest estimated; CRATE and every vector as far as it in the far
    # half, the read half as large as that allows (its floor, which caps an estimate, lowest)
    first = max(f for f in range(4, nearer + 1) if (deep.WIDEN * f) // 2 <= nearer)
    assert deep.WIDEN * first >= nearer + tied, (nearer, tied)
    monkeypatch.setattr(lane, "FIRST_WINDOW", first)
    static = float(model_mod.from_int8([bytes(rows[crate[0]][2])])[0] @ query)
    (second,) = minilm.model().embed_windows([CRATE])
    expected = deep.mixed(static, float(np.max(second @ minilm.model().embed([QUERY])[0])))

    async def first() -> tuple[str, float]:
        status, body = await api.get("/api/search", params={"q": QUERY, "lanes": "meaning", "limit": 1})
        assert status == 200 and len(body["results"]) == 1, body
        return str(body["results"][0]["text"]), float(body["results"][0]["meaning"])

    text, score = await first()
    assert text == CRATE and score == pytest.approx(expected, abs=0.01)
    api.app[appkeys.EMBEDDER].deep.scan.too_many()  # its own scan off, as in a store over MAX_ITEMS
    text, score = await first()
    assert text == CRATE and score == pytest.approx(expected, abs=0.01)


async def test_a_restart_loads_every_window_read_and_a_large_store_keeps_none(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with running_api(settings) as api:
        ids = await store_notes(api)
        await built(api)
    async with running_api(settings) as api:
        await built(api)
        scan = api.app[appkeys.EMBEDDER].deep.scan
        assert scan.items == len(ids) and not scan.over
        assert set(scan.nearest("fact", minilm.model().embed([QUERY])[0], len(ids))) == set(ids)
    monkeypatch.setattr(deep_scan, "MAX_ITEMS", len(ids) - 1)
    async with running_api(settings) as api:  # more items than it keeps: nothing loaded, search as before
        await built(api)
        scan = api.app[appkeys.EMBEDDER].deep.scan
        assert scan.over and scan.nearest("fact", minilm.model().embed([QUERY])[0]) == []
        status, body = await api.get("/api/search", params={"q": QUERY, "lanes": "meaning"})
        assert status == 200 and body["results"][0]["text"] == CRATE
