"""Search by meaning (server.meaning) through the real server: found by meaning, why and how
strongly, hidden items never found by meaning (forgotten, off) and never crowding visible ones
out, a deleted document's vectors gone, the related tier by meaning, and the honest "no close
match" answer."""

from __future__ import annotations

import time
from typing import Any

import pytest

from server import ages, appkeys
from server.memory.facts import insert_fact
from server.memory.ranking import CLOSE, CLOSE_WORDS, NOTE, UNJUDGED
from server.provenance import stamp
from tests.conftest import Api
from tests.meaning.test_deep_lane import built
from tests.memory.test_memory_pagematch import LONG_TEXT, add_document, match, note

CRATE = "Crate training: let the puppy sleep in the crate with a blanket, short stays at first, never as punishment."
PARAPHRASE = "teaching a young dog to rest in its box"  # no word of CRATE
SPRING = (
    "Het is weer lente: de tijd van het jaar waarin de natuur ontwaakt en je de tuin weer klaar "
    "kunt maken voor de zomer."
)
MIGRATE = "To migrate the database in Django, run makemigrations and then migrate."


async def search(api: Api, q: str, **params: Any) -> dict[str, Any]:
    status, body = await api.get("/api/search", params={"q": q, **params})
    assert status == 200, body
    return dict(body)


def texts(body: dict[str, Any]) -> list[str]:
    return [r["text"] for r in body["results"]]


async def test_a_paraphrase_is_found_by_meaning_and_says_so(api: Api) -> None:
    await note(api, "https://dogs.example/crate", CRATE, title="Crate training")
    await note(api, "https://bread.example/s", "Feed the sourdough starter flour and water every day.")
    words = await search(api, PARAPHRASE, lanes="words")
    assert CRATE not in texts(words)  # control: no word of the query is in the note
    body = await search(api, PARAPHRASE)
    top = body["results"][0]
    assert top["text"] == CRATE and top["why"] == "meaning"
    assert 0 < top["strength"] == top["meaning"] <= 1 and "words" not in top
    exact = (await search(api, "crate training puppy"))["results"][0]
    assert exact["text"] == CRATE and exact["why"] == "both" and exact["words"] == 1.0 and exact["close"] is True
    assert (await search(api, "crate training puppy"))["close"] is True


@pytest.mark.usefixtures("second_model")
async def test_nothing_close_says_so_and_gibberish_finds_nothing(api: Api) -> None:
    await note(api, "https://dogs.example/crate", CRATE)
    await note(api, "https://a.example/1", "the new stove arrived on tuesday")
    await built(api)  # the second model, which judges, has read both
    body = await search(api, "quantum chromodynamics on a lattice, new results")
    assert body["results"] and body["close"] is False and body["judged"] is True and body["note"] == NOTE
    assert not any(r["close"] for r in body["results"])
    assert (await search(api, "zzzqqqxj"))["results"] == []


@pytest.mark.usefixtures("second_model")
async def test_the_static_model_alone_does_not_call_a_match_close(api: Api) -> None:
    """A question the second model does not read (here Dutch) is ranked by the static model alone,
    whose cosine runs high between any two texts of a language it reads poorly: it ranks, it does
    not call a match close (server.meaning.deep.judged)."""
    await note(api, "https://nieuws.example/lente", SPRING)
    body = await search(api, "hoe bouw je een zandkasteel dat niet instort")  # a sandcastle: not stored
    top = body["results"][0]
    # the premise: first by a cosine the old rule called close, by no more than a word or two
    assert top["text"] == SPRING and top["meaning"] >= CLOSE and (top.get("words") or 0) < CLOSE_WORDS
    # nor does it say that nothing is close: nothing that judges read the question
    assert body["close"] is False and body["judged"] is False and body["note"] == UNJUDGED
    # control: a paraphrase the second model reads is called close, on its own cosine
    await note(api, "https://dogs.example/crate", CRATE)
    await built(api)  # once it has read the note (till then no judge, and nothing close by meaning)
    assert (await search(api, PARAPHRASE))["close"] is True
    # and a question it reads about nothing stored is judged: nothing close
    other = await search(api, "quantum chromodynamics on a lattice, new results")
    assert other["close"] is False and other["judged"] is True and other["note"] == NOTE


@pytest.mark.usefixtures("second_model")
async def test_the_second_model_judges_what_it_reads(api: Api) -> None:
    """Where the second model reads the question, its cosine says whether a match is close: the
    static model's, high on a shared word piece ("migrating", "migrate"), does not lift it."""
    await note(api, "https://django.example/migrate", MIGRATE)
    await note(api, "https://dogs.example/crate", CRATE)
    await built(api)  # the second model has read both
    body = await search(api, "how migrating birds find their way")
    top = body["results"][0]
    assert top["text"] == MIGRATE and top["meaning"] >= CLOSE  # the premise: the mean of both is high
    assert body["close"] is False
    assert (await search(api, PARAPHRASE))["close"] is True  # control: its cosine calls this one close


async def test_forgotten_and_off_items_are_never_found_by_meaning(api: Api) -> None:
    await note(api, "https://dogs.example/crate", CRATE)
    await note(api, "https://pets.example.org/kennel", "Kennel habits for a young dog: a den it likes.")
    assert CRATE in texts(await search(api, PARAPHRASE, lanes="meaning"))  # control
    _, dry = await api.post("/api/forget", {"host": "dogs.example", "dry_run": True})
    _, done = await api.post("/api/forget", {"host": "dogs.example", "confirm": dry["confirm"]})
    found = texts(await search(api, PARAPHRASE, lanes="meaning"))
    assert CRATE not in found and "Kennel habits for a young dog: a den it likes." in found
    status, _ = await api.post("/api/forget/undo", {"batch": done["batch"]})
    assert status == 200
    assert CRATE in texts(await search(api, PARAPHRASE, lanes="meaning"))
    status, _ = await api.put("/api/site-mode", {"host": "dogs.example", "mode": "off"})
    assert status == 200
    assert CRATE not in texts(await search(api, PARAPHRASE))
    assert all(
        r["source_host"] != "dogs.example"
        for r in (await match(api, "https://x.example/", PARAPHRASE))["tiers"]["related"]
    )


async def test_hidden_items_do_not_crowd_visible_ones_out(api: Api) -> None:
    """300 near copies of the query on an off host are nearer than the one visible note; the
    meaning lane's window is taken after visibility, so the visible note is still found."""
    now = time.time()
    async with api.store.transaction() as conn:
        for i in range(300):
            await insert_fact(
                conn, stamp(f"https://hidden.example/{i}", "t"), kind="note", title="", text=f"{PARAPHRASE} {i}",
                valid_at=now, granularity=ages.INSTANT, now=now,
            )  # fmt: skip
    await note(api, "https://dogs.example/crate", CRATE)
    status, _ = await api.put("/api/site-mode", {"host": "hidden.example", "mode": "off"})
    assert status == 200
    body = await search(api, PARAPHRASE, lanes="meaning", limit=5)
    assert [r["text"] for r in body["results"]] == [CRATE]
    status, _ = await api.put("/api/site-mode", {"host": "hidden.example", "mode": "collect"})
    body = await search(api, PARAPHRASE, lanes="meaning", limit=5)  # control: they are nearer
    assert len(body["results"]) == 5 and all(r["source_host"] == "hidden.example" for r in body["results"])


async def test_deleting_a_document_deletes_its_vectors(api: Api) -> None:
    doc = await add_document(api, "https://trees.example/walnut", "Walnut", LONG_TEXT)
    await search(api, "walnut timber")  # waits for the embedder to catch up
    sql = "SELECT COUNT(*) FROM vectors v JOIN document_chunks c ON c.id = v.chunk_id WHERE c.document_id = ?"
    row = await api.store.fetchone(sql, (doc["id"],))
    assert row is not None and row[0] >= doc["chunks"] > 1
    found = await search(api, "furniture wood from a slow nut tree", lanes="meaning")
    assert [r["id"] for r in found["results"] if r["kind"] == "document"] == [doc["id"]]
    status, _ = await api.call("DELETE", f"/api/library/{doc['id']}")
    assert status == 200
    row = await api.store.fetchone("SELECT COUNT(*) FROM vectors WHERE chunk_id IS NOT NULL")
    assert row is not None and row[0] == 0
    assert (await search(api, "furniture wood from a slow nut tree", lanes="meaning"))["results"] == []


async def test_related_tier_is_by_meaning_from_other_sites_never_chunks(api: Api) -> None:
    page = "https://training.example/crate-puppy"
    await note(api, "https://dogs.example/crate", CRATE)
    await note(api, "https://training.example/other", "same site: leash walking")
    await note(api, "https://bread.example/s", "Feed the sourdough starter flour and water every day.")
    await add_document(api, "https://library.example/dogs", "Dogs", "Puppies and their kennels. " * 200)
    tiers = (await match(api, page, "Young dog sleeping in a box - Training Blog"))["tiers"]
    assert [f["text"] for f in tiers["related"]] == [CRATE]
    assert tiers["related"][0]["meaning"] > 0 and all(f["kind"] != "document" for f in tiers["related"])
    assert [f["text"] for f in tiers["site"]] == ["same site: leash walking"]
    status, body = await api.get(
        "/api/page-match",
        params={"url": page, "title": "", "description": "how to teach a young dog to sleep in a box"},
    )
    assert status == 200 and [f["text"] for f in body["tiers"]["related"]] == [CRATE]


async def test_health_reports_the_embedders_progress(api: Api) -> None:
    await note(api, "https://dogs.example/crate", CRATE)
    await search(api, "crate")
    status, body = await api.get("/api/health")
    assert status == 200
    meaning = body["meaning"]
    assert meaning["state"] == "ready" and meaning["pending"] == 0 and meaning["vectors"] >= 1
    assert meaning["model"].startswith("wordllama")


async def test_a_search_that_waited_for_its_note_sees_the_embedder_ready(api: Api) -> None:
    """The batch that embeds the last queued item leaves the embedder "ready" as it ends, not one
    queue read later: a search that waited for it (and the health asked next) never says
    "building" with nothing left to do (it did, now and then, in a loop of test runs)."""
    embedder = api.app[appkeys.EMBEDDER]
    for n in range(5):
        await note(api, f"https://dogs.example/{n}", f"{CRATE} ({n})")
        await embedder.settled()  # returns as the batch's end is signalled
        assert embedder.state == "ready", n
