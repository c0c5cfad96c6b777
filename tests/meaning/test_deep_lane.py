"""The second model (server.meaning.deep: all-MiniLM-L6-v2 from its wheel, run by onnxruntime)
through the real server: every item gets its vector in the background (read back from the
store), a changed item is read again, a paraphrase the static model ranks third comes first
(control: the same store without the second model's vectors), hidden items stay hidden, a query
of unknown words is left to the static model, a deleted document's vectors go with it, and
other weights are refused."""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path
from typing import Any

import pytest

from server import appkeys
from server.commands.status import meaning_line
from server.meaning import deep, minilm
from server.settings import Settings
from tests.conftest import Api, running_api
from tests.memory.test_memory_captures import capture
from tests.memory.test_memory_pagematch import LONG_TEXT, add_document

CRATE = "Crate training: make the crate a happy place, feed the puppy's meals inside it and never use it as punishment."
# no word of CRATE; the static model puts two notes of "getting", "new", "comfortable" first
QUERY = "getting a new pup comfortable in its cage"
OTHERS = [
    "New shoes: comfortable after a week, getting the laces replaced.",
    "Getting a new phone: transfer the photos first, comfortable with the bigger screen.",
    "Used bookshop on the corner sells first editions of old travel guides.",
    "Getting used to the new office: the coffee machine is on the third floor.",
    "A new pair of running shoes needs about 50 km before they feel right.",
    "Its battery lasts two days; the new phone charges over USB-C.",
    "Sourdough starter: feed it flour and water daily and keep it at room temperature.",
    "Moving house checklist: forward the mail, update the address at the bank.",
    "Fence repair: the gap by the gate lets the neighbour's chickens through.",
    "Comfortable new sofa delivered; the old one goes to the dump.",
    "Young trees need staking in their first year, new growth in spring.",
]


pytestmark = pytest.mark.usefixtures("second_model")


async def store_notes(api: Api) -> list[int]:
    ids = []
    for n, text in enumerate([CRATE, *OTHERS]):
        url = "https://dogs.example/crate" if text == CRATE else f"https://notes.example/{n}"
        status, body = await api.post("/api/notes", {"url": url, "text": text})
        assert status == 201, body
        ids.append(int(body["id"]))
    return ids


async def built(api: Api) -> None:
    """Both models' queues empty (the embedder is idle only then)."""
    await asyncio.wait_for(api.app[appkeys.EMBEDDER].idle.wait(), 120)


async def meaning_texts(api: Api, q: str) -> list[str]:
    status, body = await api.get("/api/search", params={"q": q, "lanes": "meaning"})
    assert status == 200, body
    return [r["text"] for r in body["results"]]


async def count(api: Api, sql: str, *args: Any) -> int:
    row = await api.store.fetchone(sql, args)
    assert row is not None
    return int(row[0])


async def test_every_item_gets_a_vector_and_a_paraphrase_comes_first(api: Api) -> None:
    ids = await store_notes(api)
    await built(api)
    assert await count(api, "SELECT COUNT(*) FROM deep_queue") == 0
    rows = await api.store.fetchall("SELECT fact_id, model, length(vec) FROM deep_fact_vectors ORDER BY fact_id")
    assert [(r[0], r[1], r[2]) for r in rows] == [(i, minilm.NAME, minilm.DIMS) for i in ids]
    assert api.app[appkeys.EMBEDDER].progress()["deep"]["state"] == "ready"
    assert (await meaning_texts(api, QUERY))[0] == CRATE
    status, body = await api.get("/api/search", params={"q": QUERY})
    assert status == 200 and body["meaning"]["deep"] == {"state": "ready", "pending": 0}  # what the panel reads
    # control: the same store by the static model alone ranks it lower
    async with api.store.transaction() as conn:
        await conn.execute("DELETE FROM deep_fact_vectors")
    static = await meaning_texts(api, QUERY)
    assert CRATE in static and static.index(CRATE) >= 2, static


# three paragraphs of a long note before the part the query is about (well past 128 tokens)
PREAMBLE = (
    "Trip log, day one: the ferry left at seven and the harbour was still grey with fog. We bought "
    "bread and cheese at the market, then walked the old walls until the rain came back. The hostel "
    "had twelve beds, a kitchen with one working hob and a view of the cranes at the container port. "
    "Day two: a bus to the monastery on the hill, two hours of hairpin bends, lunch of lentil soup. "
    "The library there holds maps from the sixteenth century; photographs were not allowed. Back in "
    "town a street band played until midnight and the square smelled of grilled corn and diesel. "
    "Day three: laundry, postcards, a long swim off the rocks, and a late train to the capital. "
)


async def test_a_long_item_is_read_in_windows_and_found_by_a_later_one(api: Api) -> None:
    long_note = PREAMBLE + "Back home: " + CRATE
    ids = await store_notes(api)
    status, body = await api.post("/api/notes", {"url": "https://dogs.example/trip", "text": long_note})
    assert status == 201
    await built(api)
    row = await api.store.fetchone("SELECT vec FROM deep_fact_vectors WHERE fact_id = ?", (body["id"],))
    assert row is not None and len(row[0]) in (2 * minilm.DIMS, 3 * minilm.DIMS)  # its windows, one blob
    async with api.store.transaction() as conn:  # the short crate note out of the way
        await conn.execute("UPDATE facts SET text = 'Tax return due in April.' WHERE id = ?", (ids[0],))
    await built(api)
    assert (await meaning_texts(api, QUERY))[0].startswith("Trip log")  # (shown cut)
    # control: its first window alone (what the second model read before) ranks it lower
    async with api.store.transaction() as conn:
        await conn.execute(
            "UPDATE deep_fact_vectors SET vec = substr(vec, 1, ?) WHERE fact_id = ?", (minilm.DIMS, body["id"])
        )
    first_only = await meaning_texts(api, QUERY)
    assert not first_only[0].startswith("Trip log"), first_only


async def test_a_changed_item_is_read_again(api: Api) -> None:
    ids = await store_notes(api)
    await built(api)
    before = await api.store.fetchone("SELECT vec FROM deep_fact_vectors WHERE fact_id = ?", (ids[1],))
    async with api.store.transaction() as conn:
        await conn.execute("UPDATE facts SET text = ? WHERE id = ?", ("Tax return due in April.", ids[1]))
    assert await count(api, "SELECT COUNT(*) FROM deep_queue WHERE id = ?", ids[1]) == 1  # queued again
    api.app[appkeys.EMBEDDER].wake.set()
    await asyncio.sleep(0)
    await built(api)
    after = await api.store.fetchone("SELECT vec FROM deep_fact_vectors WHERE fact_id = ?", (ids[1],))
    assert before is not None and after is not None and before[0] != after[0]
    assert await count(api, "SELECT COUNT(*) FROM deep_queue") == 0


async def test_forgotten_items_are_not_found_by_the_second_model_either(api: Api) -> None:
    await store_notes(api)
    await built(api)
    assert CRATE in await meaning_texts(api, QUERY)  # control
    status, dry = await api.post("/api/forget", {"host": "dogs.example", "dry_run": True})
    assert status == 200, dry
    status, _ = await api.post("/api/forget", {"host": "dogs.example", "confirm": dry["confirm"]})
    assert status == 200
    found = await meaning_texts(api, QUERY)
    assert found and CRATE not in found


async def test_deleting_a_document_deletes_its_vectors_of_the_second_model(api: Api) -> None:
    doc = await add_document(api, "https://trees.example/walnut", "Walnut", LONG_TEXT)
    await built(api)
    sql = (
        "SELECT COUNT(*) FROM deep_chunk_vectors v JOIN document_chunks c ON c.id = v.chunk_id WHERE c.document_id = ?"
    )
    assert await count(api, sql, doc["id"]) == doc["chunks"] > 1  # control: one per chunk
    status, _ = await api.call("DELETE", f"/api/library/{doc['id']}")
    assert status == 200
    assert await count(api, "SELECT COUNT(*) FROM deep_chunk_vectors") == 0


async def test_switched_off_it_reads_nothing_and_says_so(settings: Settings) -> None:
    async with running_api(dataclasses.replace(settings, no_second_model=True)) as api:
        await store_notes(api)
        await built(api)
        assert await count(api, "SELECT COUNT(*) FROM deep_fact_vectors") == 0
        assert await count(api, "SELECT COUNT(*) FROM deep_queue") == len(OTHERS) + 1  # kept for later
        second = api.app[appkeys.EMBEDDER].progress()["deep"]
        assert (second["state"], second["off"]) == ("off", "switched off (--no-second-model)")
        found = await meaning_texts(api, QUERY)
        assert CRATE in found and found[0] != CRATE  # the static model's order
    async with running_api(settings) as api:  # control: on again, it reads what is queued
        await built(api)
        assert await count(api, "SELECT COUNT(*) FROM deep_fact_vectors") == len(OTHERS) + 1
        assert (await meaning_texts(api, QUERY))[0] == CRATE


def test_a_query_of_unknown_words_is_left_to_the_static_model() -> None:
    assert deep.embed_query("terrafrom") is None  # one misspelled word: word pieces
    assert deep.embed_query("piranessi etchings") is None
    vector = deep.embed_query(QUERY)  # control: words it knows
    assert vector is not None and vector.shape == (minilm.DIMS,)


def test_mixed_is_the_mean_and_the_static_score_alone_without_a_vector() -> None:
    assert deep.mixed(0.2, 0.6) == pytest.approx(0.4)
    assert deep.mixed(0.2, None) == 0.2
    # unrelated by the second model: it may lower the score, never lift it over the static one
    assert deep.mixed(0.03, 0.1) == 0.03
    assert deep.mixed(0.3, 0.1) == pytest.approx(0.2)
    assert deep.mixed(-0.05, 0.17) == -0.05  # its noise: an identifier against a one-letter turn


async def test_a_query_nothing_relates_to_finds_nothing_once_both_models_have_read(api: Api) -> None:
    """The second model gives "zebracorn_marker" and the turn "q" of a chat titled "Dog names" a
    cosine of ~0.17 (noise: a p95 of unrelated pairs); it must not lift the turn over the noise
    floor (it did, whenever the search ran after the second model had read the turn)."""
    turns = [{"role": "user", "text": "q"}, {"role": "assistant", "text": "Plain words here."}]
    status, _ = await api.post("/api/captures", capture(turns, title="Dog names"))
    assert status == 200
    await built(api)
    assert await count(api, "SELECT COUNT(*) FROM deep_fact_vectors") == 2  # both turns read by it
    assert await meaning_texts(api, "zebracorn_marker") == []
    assert "q" in await meaning_texts(api, "names for my puppy")  # control: a query that relates


def test_other_weights_are_refused(tmp_path: Path) -> None:
    real = minilm.model_dir()
    fake = tmp_path / "model"
    fake.mkdir()
    (fake / "tokenizer.json").write_bytes((real / "tokenizer.json").read_bytes())
    (fake / "model.safetensors").write_bytes(b"not the weights")
    with pytest.raises(minilm.ModelMissing, match="not the published"):
        minilm.graph_file(fake)


def test_status_says_how_far_the_second_model_is() -> None:
    base = {"state": "ready", "vectors": 3, "model": "m"}
    building = {"model": minilm.NAME, "state": "building", "pending": 1234}
    line = meaning_line({**base, "deep": building})
    assert line.endswith(f"second model ({minilm.NAME}): building, 1,234 items to go"), line
    off = meaning_line({**base, "deep": {"state": "off", "off": "not installed"}})
    assert off.endswith("second model: not installed (paraphrases are found less often)"), off
    assert meaning_line(base) == "search by meaning: ready (3 vectors, model m)"
