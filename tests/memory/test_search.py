"""Search: sentences find things, operators are words, possessives fold, bm25 ranks,
forgotten facts vanish, documents are searched too."""

from __future__ import annotations

import time
from typing import Any
from unittest.mock import ANY

import pytest

from server import ages
from server.memory import search as search_mod
from server.memory.facts import insert_fact
from server.provenance import stamp
from tests.conftest import Api
from tests.memory.test_memory_pagematch import add_document, note


async def search(api: Api, q: str, **params: Any) -> list[dict[str, Any]]:
    status, body = await api.get("/api/search", params={"q": q, **params})
    assert status == 200, body
    return list(body["results"])


async def test_a_sentence_finds_a_fact_with_provenance(api: Api) -> None:
    await note(api, "https://HTTPS.example.com/Dogs?utm_source=x", "My dog's name is Biscuit", title="Pets")
    results = await search(api, "what is my dogs name")
    assert len(results) == 1
    hit = results[0]
    assert hit["text"] == "My dog's name is Biscuit"
    assert (hit["source_url"], hit["source_host"], hit["source_ref"], hit["title"], hit["kind"]) == (
        "https://https.example.com/Dogs",
        "https.example.com",
        "Pets",
        "Pets",
        "note",
    )
    assert hit["age"] == {"label": "just now", "granularity": "instant", "at": ANY}


@pytest.mark.parametrize("q", ["dogs name", "dog's name", "DOG’S NAME", "dog`s", "name of the dog"])
async def test_possessives_fold_both_ways(api: Api, q: str) -> None:
    await note(api, "https://a.example/1", "my dog's name is Biscuit")
    await note(api, "https://a.example/2", "the dogs name tag fell off")
    assert len(await search(api, q)) >= 1


async def test_all_terms_first_then_any_term(api: Api) -> None:
    await note(api, "https://a.example/1", "walnut lantern")
    await note(api, "https://a.example/2", "walnut only")
    assert [r["text"] for r in await search(api, "walnut lantern")] == ["walnut lantern"]
    # nothing has all of these: any non-stop-word term then
    assert {r["text"] for r in await search(api, "the walnut of the zeppelin")} == {"walnut lantern", "walnut only"}


async def test_bm25_ranks_the_denser_match_first(api: Api) -> None:
    await note(api, "https://a.example/1", "sourdough " + "filler words here " * 30)
    await note(api, "https://a.example/2", "sourdough starter sourdough bread sourdough")
    assert (await search(api, "sourdough"))[0]["text"].startswith("sourdough starter")


@pytest.mark.parametrize(
    "q",
    [
        '"',
        '""',
        "'",
        "(",
        ")",
        "a AND",
        "OR",
        "NOT x",
        "NEAR(a b)",
        "NEAR",
        "title:walnut",
        "body:x",
        "*",
        "^walnut",
        "walnut*",
        "a - b",
        "{x}",
        "[x]",
        "+",
        ":",
        "\\",
        "'; DROP TABLE facts; --",
        "AND OR NOT",
        "\u0000x",
    ],
)
async def test_operators_and_punctuation_are_words_never_errors(api: Api, q: str) -> None:
    await note(api, "https://a.example/1", "walnut title body near and or not")
    status, body = await api.get("/api/search", params={"q": q})
    assert status in (200, 400), body
    if status == 400:
        assert q.strip() == "" or "\u0000" in q
    else:
        assert isinstance(body["results"], list)
    assert len(await search(api, "walnut")) == 1  # still there


async def test_operator_words_match_as_words(api: Api) -> None:
    await note(api, "https://a.example/1", "NEAR the river AND the sea")
    assert len(await search(api, "near AND")) == 1
    assert len(await search(api, 'near("river")')) == 1


async def test_ten_thousand_terms_are_fine(api: Api) -> None:
    await note(api, "https://a.example/1", "term1 term2")
    q = " ".join(f"term{i}" for i in range(10_000))
    body = await search_mod.search(api.store, q, 20)  # searchtext.terms caps what reaches MATCH
    assert [r["text"] for r in body["results"]] == ["term1 term2"]
    # over HTTP a query is at most 4,000 characters: as many terms as fit
    q = "term1 " + " ".join(f"t{i}" for i in range(700))
    assert len(q) <= 4000
    assert len(await search(api, q)) == 1


async def test_empty_query_is_400(api: Api) -> None:
    for q in ("", "   "):
        status, body = await api.get("/api/search", params={"q": q})
        assert status == 400, body
    status, body = await api.get("/api/search")
    assert status == 400 and body["error"]["code"] == "missing_field"


async def test_limit(api: Api) -> None:
    for i in range(8):
        await note(api, f"https://a.example/{i}", f"walnut {i}")
    assert len(await search(api, "walnut", limit=3)) == 3
    status, _ = await api.get("/api/search", params={"q": "walnut", "limit": 0})
    assert status == 400
    status, _ = await api.get("/api/search", params={"q": "walnut", "limit": 1000})
    assert status == 400


async def test_forgotten_facts_are_not_found_and_undo_brings_them_back(api: Api) -> None:
    await note(api, "https://shop.example.com/a", "walnut oil from the shop")
    await note(api, "https://example.org/a", "walnut oil elsewhere")
    _, dry = await api.post("/api/forget", {"host": "example.com", "dry_run": True})
    _, done = await api.post("/api/forget", {"host": "example.com", "confirm": dry["confirm"]})
    assert [r["text"] for r in await search(api, "walnut oil")] == ["walnut oil elsewhere"]
    await api.post("/api/forget/undo", {"batch": done["batch"]})
    assert len(await search(api, "walnut oil")) == 2


async def test_turns_and_clips_are_searched(api: Api) -> None:
    await api.post("/api/clips", {"url": "https://a.example/1", "title": "t", "text": "zephyr clip"})
    await api.post(
        "/api/captures",
        {
            "url": "https://chatgpt.com/c/1",
            "title": "t",
            "site": "chatgpt",
            "turns": [{"role": "user", "text": "zephyr question"}],
        },
    )
    kinds = {r["kind"] for r in await search(api, "zephyr")}
    assert kinds == {"clip", "turn"}


async def test_library_documents_are_searched_once_each(api: Api) -> None:
    text = "\n\n".join(f"Paragraph {i} about the quokka of Rottnest island. " * 8 for i in range(40))
    await add_document(api, "https://animals.example/quokka", "Quokka", text)
    await note(api, "https://a.example/1", "a quokka smiled at me")
    results = await search(api, "quokka")
    docs = [r for r in results if r["kind"] == "document"]
    assert len(docs) == 1 and docs[0]["source_url"] == "https://animals.example/quokka"
    assert {"source_url", "source_host", "source_ref", "title", "kind", "age", "text"} <= set(docs[0])
    assert any(r["kind"] == "note" for r in results)


async def test_a_word_on_every_page_neither_drowns_a_rare_one_nor_scans_the_store(api: Api) -> None:
    """Past WINDOW hits, ranking is bounded (newest WINDOW hits); a rare term wins the OR stage."""
    now = time.time()
    async with api.store.transaction() as conn:
        await insert_fact(
            conn,
            stamp("https://old.example/q", "t"),
            kind="note",
            title="t",
            text="walnut quokka",
            valid_at=now,
            granularity=ages.INSTANT,
            now=now,
        )
        for i in range(search_mod.WINDOW + 50):
            await insert_fact(
                conn,
                stamp(f"https://a.example/{i}", "t"),
                kind="note",
                title="t",
                text=f"walnut number {i}",
                valid_at=now,
                granularity=ages.INSTANT,
                now=now,
            )
    results = await search(api, "walnut quokka zebra")  # no fact has all three
    assert [r["text"] for r in results] == ["walnut quokka"]
    results = await search(api, "walnut", limit=5)
    assert len(results) == 5 and all("walnut" in r["text"] for r in results)


async def test_long_queries_answer_json_never_a_bare_parser_error(api) -> None:
    """The longest accepted query (4,000 characters, here 4-byte emoji, percent-encoded to
    ~48 KB) fits the request line; one character more is the route's own JSON 413."""
    status, body = await api.get("/api/search", params={"q": "🧪" * 4000})
    assert status == 200, body
    status, body = await api.get("/api/search", params={"q": "a" * 4001})
    assert status == 413 and body["error"]["field"] == "query.q"
    status, body = await api.get(
        "/api/page-match", params={"url": "https://example.com/" + "é" * 4000, "title": "漢" * 2000}
    )
    assert status in (200, 400, 413) and isinstance(body, dict) and "error" in body or "tiers" in body


async def test_any_term_stage_ranks_by_how_many_words_an_item_holds(api: Api) -> None:
    """A long turn holding four of the five asked words beats short notes holding one (bm25
    alone put the short, dense notes first: measured in bench/bench_search_quality.py)."""
    long_turn = (
        "I get the following error when I add to the cart: Forbidden (CSRF token missing.) "
        + "and the rest of a long explanation about middleware, sessions and cookies. " * 150
    )
    await note(api, "https://chat.example/c/1", long_turn)
    for i, word in enumerate(["csrf", "token", "missing"]):
        await note(api, f"https://short.example/{i}", f"{word} here")  # one word each, short and dense
    results = await search(api, "what about that csrf token missing from my basket?")
    assert len(results) == 4  # control: the short notes do match (the any-term stage)
    assert results[0]["source_url"] == "https://chat.example/c/1"


async def test_any_term_stage_reaches_words_only_the_library_holds(api: Api) -> None:
    await note(api, "https://a.example/1", "taking the train tomorrow")
    await add_document(
        api,
        "https://sport.example/eintracht",
        "Eintracht",
        "Axel Hellmann übernimmt den Vorstandsvorsitz bei Eintracht Frankfurt. " * 5,
    )
    results = await search(api, "Who is taking over at Eintracht Frankfurt, Axel Hellmann?")
    assert results[0]["source_url"] == "https://sport.example/eintracht"
    assert {r["kind"] for r in results} == {"document", "note"}  # control: the note's word matches too
