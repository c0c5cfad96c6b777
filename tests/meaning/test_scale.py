"""The scale of a query's cosines (server.meaning.scale) through the real server: taken from both
models' vectors of the same items once the third voice holds a vector (read back: the store's own
static vectors and e5's of the same windows), again when the index has doubled, never in a store
of English only nor of a few notes, and without the items a search may not show; a failure leaves
the third voice on the fixed scale; and the third voice's cosines are mapped by it (or by the fixed
scale before it is taken)."""

from __future__ import annotations

from concurrent.futures import Future

import numpy as np
import pytest

from server import appkeys
from server.commands.status import meaning_line
from server.meaning import deep_scan, e5, minilm, scale, third
from server.meaning import model as model_mod
from tests.conftest import Api
from tests.meaning.test_deep_lane import OTHERS, built, count, meaning_texts
from tests.meaning.test_third_voice import QUERY, TARGET, store_notes

pytestmark = pytest.mark.usefixtures("third_voice")


async def more_notes(api: Api, n: int, start: int = 0) -> dict[str, int]:
    """`n` English notes (one window each), text -> id."""
    ids = {}
    for k in range(start, start + n):
        text = f"{OTHERS[k % len(OTHERS)]} ({k})"
        status, body = await api.post("/api/notes", {"url": f"https://more.example/{k}", "text": text})
        assert status == 201, body
        ids[text] = int(body["id"])
    return ids


async def enough_notes(api: Api) -> dict[str, int]:
    """The third voice's notes and English ones, more than a sample needs (scale.MIN_WINDOWS)."""
    ids = await store_notes(api)
    return ids | await more_notes(api, scale.MIN_WINDOWS)


async def test_it_is_both_models_vectors_of_the_same_items(api: Api) -> None:
    ids = await enough_notes(api)  # fewer than SAMPLE items: the sample is all of them
    await built(api)
    embedder = api.app[appkeys.EMBEDDER]
    taken = embedder.scale.scale
    assert taken is not None
    rows = await api.store.fetchall("SELECT vec FROM vectors ORDER BY id")
    stored = model_mod.from_int8([bytes(r[0]) for r in rows])
    assert len(taken.static) == len(stored) and np.allclose(np.sort(taken.static, axis=0), np.sort(stored, axis=0))
    windows = [w for t in ids for w in minilm.model().window_texts(t)]
    expected = e5.model().passages(windows)
    assert len(taken.e5) == len(windows) > len(ids) - 1
    assert np.all((taken.e5 @ expected.T).max(axis=0) > 0.999)  # each window's e5 vector is there
    assert embedder.progress()["third"]["scale"] == f"{len(stored)} windows"


async def test_it_is_taken_again_when_the_index_has_doubled(api: Api) -> None:
    await enough_notes(api)
    await built(api)
    embedder = api.app[appkeys.EMBEDDER]
    before = len(embedder.scale.scale.static)
    assert not embedder.scale.due()  # control: nothing new, nothing to take
    await more_notes(api, before + 1, start=1000)
    await built(api)
    assert len(embedder.scale.scale.static) == await count(api, "SELECT COUNT(*) FROM vectors") > 2 * before - 1


async def test_a_store_of_english_only_takes_none(api: Api) -> None:
    await more_notes(api, 2 * scale.MIN_WINDOWS)  # enough for a sample, but the third voice holds nothing
    await built(api)
    assert await count(api, "SELECT COUNT(*) FROM vectors") >= scale.MIN_WINDOWS
    progress = api.app[appkeys.EMBEDDER].progress()
    assert progress["deep"]["state"] == "ready" and progress["third"]["scale"] == "none"


async def test_a_failure_leaves_the_third_voice_on_the_fixed_scale(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(texts: list[str]) -> model_mod.Vectors:
        raise RuntimeError("test")

    monkeypatch.setattr(scale, "_passages", broken)
    await enough_notes(api)  # more than one step's items: the sample is given up, not left half-taken
    await built(api)
    progress = api.app[appkeys.EMBEDDER].progress()
    assert progress["third"]["state"] == "ready" and progress["third"]["scale"] == "none"
    assert (await meaning_texts(api, QUERY))[0] == TARGET  # it still answers, on the fixed scale


async def test_a_store_of_a_few_notes_keeps_the_fixed_scale(api: Api) -> None:
    await store_notes(api)  # fewer windows than MIN_WINDOWS (enough_notes, above: taken)
    await built(api)
    assert await count(api, "SELECT COUNT(*) FROM vectors") < scale.MIN_WINDOWS
    progress = api.app[appkeys.EMBEDDER].progress()
    assert progress["third"]["state"] == "ready" and progress["third"]["scale"] == "none"
    assert (await meaning_texts(api, QUERY))[0] == TARGET


def test_status_says_while_the_scale_is_being_taken() -> None:
    base = {"state": "ready", "vectors": 3, "model": "m"}
    taking = {"model": e5.NAME, "state": "building", "pending": 0, "scale": "taking, 48 items to go"}
    line = meaning_line({**base, "third": taking})
    assert line.endswith(f"third voice ({e5.NAME}): building, the scale of its cosines: 48 items to go"), line


def units(rng: np.random.Generator, n: int, dims: int) -> model_mod.Vectors:
    out = rng.normal(size=(n, dims)).astype(np.float32)
    out /= np.linalg.norm(out, axis=1, keepdims=True)
    return out


def test_the_scale_maps_its_noise_onto_the_static_models() -> None:
    rng = np.random.default_rng(3)
    query, static_query = units(rng, 1, e5.DIMS)[0], units(rng, 1, model_mod.DIMS)[0]
    taken = scale.Scale(static=units(rng, 300, model_mod.DIMS), e5=units(rng, 300, e5.DIMS) + 0.05)
    done: Future[model_mod.Vectors] = Future()
    done.set_result(query)
    own = deep_scan.DeepScan(sample=0)
    own.sample = -units(rng, 100, e5.DIMS)  # another population: its noise differs
    with_scale, without = third.Ask(done, own, taken), third.Ask(done, own)
    static = with_scale.static_noise(static_query)
    assert static == scale.noise(taken.static, static_query) != third.STATIC_NOISE
    assert without.static_noise(static_query) == third.STATIC_NOISE  # until it is taken
    e5_median, e5_high = with_scale.e5_noise(query)
    assert (e5_median, e5_high) == scale.noise(taken.e5, query) != without.e5_noise(query)
    assert without.e5_noise(query) == scale.noise(own.sample, query)
    mapped = third.on_static_scale(np.array([e5_median, e5_high], np.float32), (e5_median, e5_high), static)
    assert mapped.tolist() == pytest.approx(list(static), abs=1e-5)


async def test_a_forgotten_item_is_not_read_into_it(api: Api) -> None:
    ids = await enough_notes(api)
    await built(api)
    embedder = api.app[appkeys.EMBEDDER]
    sql = "SELECT vec FROM vectors WHERE fact_id = ?"
    target = model_mod.from_int8([bytes(r[0]) for r in await api.store.fetchall(sql, (ids[TARGET],))])
    assert np.isclose(embedder.scale.scale.static @ target[0], 1.0).any()  # control: it is in the first one
    status, dry = await api.post("/api/forget", {"host": "werk.example", "dry_run": True})
    assert status == 200, dry
    status, _ = await api.post("/api/forget", {"host": "werk.example", "confirm": dry["confirm"]})
    assert status == 200
    await more_notes(api, len(ids) + 1, start=1000)  # the index doubles: it is taken again
    await built(api)
    taken = embedder.scale.scale
    assert len(taken.static) == await count(api, "SELECT COUNT(*) FROM vectors") - len(target)
    assert not np.isclose(taken.static @ target[0], 1.0).any()
    assert len(taken.e5) == sum(len(minilm.model().window_texts(t)) for t in ids if t != TARGET) + len(ids) + 1
