"""Search finds words inside unspaced sentences (Japanese, Chinese, Thai), corrects a single
misspelled word to the spellings the index holds, and takes its windows after the visibility rule
(hidden items never crowd a visible one out). The lexical lane answers a strength and the terms."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import Any

from server import ages
from server.governance.visibility import govern
from server.meaning import model as model_mod
from server.meaning.model import whole_word
from server.memory import coverage, typos
from server.memory import search as search_mod
from server.memory.facts import insert_fact
from server.memory.snippets import MARK_END, MARK_START
from server.provenance import stamp
from server.store.db import Store, _statements, migration_files
from tests.conftest import Api
from tests.memory.test_memory_pagematch import add_document, match, note

SUSHI = "今日は東京で寿司を食べました"


async def search(api: Api, q: str, **params: Any) -> list[dict[str, Any]]:
    """The words lane alone (`lanes=words`): these are its rules; fusion with meaning adds
    nearest-by-meaning items after them (tests/meaning/)."""
    status, body = await api.get("/api/search", params={"q": q, "lanes": "words", **params})
    assert status == 200, body
    return list(body["results"])


async def test_japanese_words_are_found_inside_a_sentence(api: Api) -> None:
    await note(api, "https://a.example/sushi", SUSHI)
    await note(api, "https://a.example/kyoto", "京都の寺を見ました")
    for q in ("東京", "寿司", "東京で寿司", "食べました", "今日"):
        assert [r["text"] for r in await search(api, q)] == [SUSHI], q
    assert [r["text"] for r in await search(api, "京都")] == ["京都の寺を見ました"]  # control: not every note
    assert await search(api, "大阪") == []
    hit = (await search(api, "寿司"))[0]
    assert f"{MARK_START}寿司{MARK_END}" in hit["snippet"]  # the original text marked, not the pairs
    assert hit["text"] == SUSHI


async def test_chinese_thai_and_korean_words_inside_sentences(api: Api) -> None:
    await note(api, "https://a.example/zh", "我们明天去北京大学看朋友")
    await note(api, "https://a.example/th", "ภาษาไทยง่ายนิดเดียว")
    await note(api, "https://a.example/ko", "서울에서 만나요")
    assert [r["source_url"] for r in await search(api, "北京大学")] == ["https://a.example/zh"]
    assert [r["source_url"] for r in await search(api, "朋友")] == ["https://a.example/zh"]
    assert [r["source_url"] for r in await search(api, "ภาษาไทย")] == ["https://a.example/th"]
    assert [r["source_url"] for r in await search(api, "ง่าย")] == ["https://a.example/th"]
    assert [r["source_url"] for r in await search(api, "서울")] == ["https://a.example/ko"]
    hit = (await search(api, "ง่าย"))[0]
    assert f"{MARK_START}ง่าย{MARK_END}" in hit["snippet"]


async def test_a_japanese_page_title_finds_a_document_by_a_word_inside(api: Api) -> None:
    await add_document(api, "https://news.example/1", "ニュース", "日本の首相は東京で記者会見を開きました。" * 3)
    results = await search(api, "記者会見")
    assert [r["kind"] for r in results] == ["document"]


async def test_a_misspelled_word_finds_its_item(api: Api) -> None:
    await note(api, "https://a.example/p", "Piranesi drew the imaginary prisons of Rome")
    await note(api, "https://a.example/q", "a quiet walk along the river")
    for q in ("piranessi", "piranesi prisns", "the imaginery prisons", "Pirnaesi"):
        assert [r["source_url"] for r in await search(api, q)] == ["https://a.example/p"], q
    hit = (await search(api, "piranessi"))[0]
    assert f"{MARK_START}Piranesi{MARK_END}" in hit["snippet"]
    assert await search(api, "zqxjkvw") == []  # nothing near it: still nothing


async def test_a_query_of_many_unknown_words_looks_up_a_few(api: Api) -> None:
    """A pasted text of names no item holds: at most MAX_TRIED of its words (the longest first) are
    looked up for a correction; words of the language cost nothing and do not count."""
    await note(api, "https://a.example/p", "Piranesi drew the imaginary prisons of Rome")
    junk = ["qxzvbnmwtrk", "wplkjhgfdsz", "zmxncbvqpwo", "yrtuieowpqa", "kjhqwzxcvbn", "lkjzxqwmnbv"]
    words = ["government", "restaurant", "technology", "television"]
    assert all(whole_word(w) for w in words) and not any(whole_word(w) for w in junk)  # the premise
    assert len(junk) == typos.MAX_TRIED and all(len(w) > len("piranessi") for w in junk + words)
    # five names, then the misspelling: corrected, with words of the language beside them
    assert [r["source_url"] for r in await search(api, " ".join([*junk[:-1], *words, "piranessi"]))] == [
        "https://a.example/p"
    ]
    # six longer names are looked up first: the misspelling is not reached
    assert await search(api, " ".join([*junk, *words, "piranessi"])) == []


async def test_a_word_with_several_corrections_beside_another_word(api: Api) -> None:
    await note(api, "https://a.example/1", "the cart was left here")
    await note(api, "https://a.example/2", "the card was left here")
    await note(api, "https://a.example/3", "the card was lost")
    assert {r["source_url"] for r in await search(api, "carx left here")} == {
        "https://a.example/1",
        "https://a.example/2",
    }


async def test_a_word_of_the_language_no_item_holds_is_not_taken_for_a_misspelling(api: Api) -> None:
    await note(api, "https://a.example/weed", "pulling weed from the garden beds")
    assert whole_word("week") and not whole_word("weeed")  # the premise: one a word, one not
    assert await search(api, "week") == []  # one edit from "weed", but a word: no item holds it
    # control: a non-word one edit away is corrected to it
    assert [r["source_url"] for r in await search(api, "weeed")] == ["https://a.example/weed"]


async def test_misspellings_are_corrected_when_the_model_does_not_load(api: Api, monkeypatch: Any) -> None:
    await note(api, "https://a.example/weed", "pulling weed from the garden beds")

    def unreadable() -> Any:
        raise OSError("the weights are unreadable")

    monkeypatch.setattr(model_mod, "model", unreadable)
    assert not whole_word("week")  # no vocabulary: no word is known to be a word of the language
    assert [r["source_url"] for r in await search(api, "weeed")] == ["https://a.example/weed"]


async def test_a_correctly_spelled_rare_word_is_not_corrected(api: Api) -> None:
    await note(api, "https://a.example/1", "a note about the river Rhone")
    await note(api, "https://a.example/2", "a note about the river Rhine")
    assert [r["source_url"] for r in await search(api, "rhine")] == ["https://a.example/2"]
    assert [r["source_url"] for r in await search(api, "rhone")] == ["https://a.example/1"]


async def test_a_word_only_a_forgotten_item_holds_corrects_to_nothing_shown(api: Api) -> None:
    await note(api, "https://gone.example/1", "Piranesi etchings")
    assert len(await search(api, "piranessi")) == 1  # control
    _, dry = await api.post("/api/forget", {"host": "gone.example", "dry_run": True})
    await api.post("/api/forget", {"host": "gone.example", "confirm": dry["confirm"]})
    assert await search(api, "piranessi") == []


async def _hidden_crowd(api: Api, word: str, visible_text: str, n: int = search_mod.WINDOW + 20) -> None:
    """One visible note first, then `n` newer notes of the word on hidden.example."""
    await note(api, "https://seen.example/1", visible_text)
    now = time.time()
    async with api.store.transaction() as conn:
        for i in range(n):
            await insert_fact(
                conn,
                stamp(f"https://hidden.example/{i}", "t"),
                kind="note",
                title="t",
                text=f"{word} number {i}",
                valid_at=now,
                granularity=ages.INSTANT,
                now=now,
            )


async def test_hidden_items_do_not_crowd_a_visible_one_out_of_search(api: Api) -> None:
    await _hidden_crowd(api, "walnut", "walnut from the visible site")
    before = await search(api, "walnut", limit=20)
    assert len(before) == 20 and all(r["source_host"] == "hidden.example" for r in before)  # control
    _, dry = await api.post("/api/forget", {"host": "hidden.example", "dry_run": True})
    await api.post("/api/forget", {"host": "hidden.example", "confirm": dry["confirm"]})
    assert [r["text"] for r in await search(api, "walnut")] == ["walnut from the visible site"]
    # the any-term stage (nothing holds both words) takes its window after the rule too
    assert [r["text"] for r in await search(api, "walnut zeppelin")] == ["walnut from the visible site"]


async def test_more_hidden_candidates_than_the_rule_is_asked_of_at_first(api: Api) -> None:
    """The any-term stage asks the rule of its best SCAN candidates first, then of all of them."""
    await _hidden_crowd(api, "walnut", "walnut from the visible site", n=coverage.SCAN + 50)
    assert len(await search(api, "walnut zeppelin")) == 20  # control: the crowd is found
    status, body = await api.put("/api/site-mode", {"host": "hidden.example", "mode": "off"})
    assert status == 200, body
    assert [r["text"] for r in await search(api, "walnut zeppelin")] == ["walnut from the visible site"]


async def test_an_off_site_does_not_crowd_a_visible_one_out_of_search(api: Api) -> None:
    await _hidden_crowd(api, "quince", "quince jam recipe")
    assert len(await search(api, "quince")) == 20  # control: the crowd is found while the site is on
    status, body = await api.put("/api/site-mode", {"host": "hidden.example", "mode": "off"})
    assert status == 200, body
    assert [r["text"] for r in await search(api, "quince")] == ["quince jam recipe"]


async def test_the_related_tier_is_not_crowded_out_by_the_page_s_own_site(api: Api) -> None:
    await _hidden_crowd(api, "lantern", "lantern festival notes")
    tiers = (await match(api, "https://hidden.example/page", "Lantern"))["tiers"]
    assert [r["text"] for r in tiers["related"]] == ["lantern festival notes"]
    assert tiers["site"]  # control: the page's own site holds the crowd


async def test_the_lexical_lane_answers_strength_and_terms(api: Api) -> None:
    await note(api, "https://a.example/1", "walnut lantern festival")
    await note(api, "https://a.example/2", "walnut only")
    await note(api, "https://a.example/3", "Piranesi prisons")
    both = await search_mod.lexical(api.store, "walnut lantern", 10)
    assert [(h.item["source_url"], h.strength, h.terms) for h in both] == [
        ("https://a.example/1", 1.0, ("walnut", "lantern"))
    ]
    some = await search_mod.lexical(api.store, "walnut zeppelin", 10)
    assert {(h.item["source_url"], h.strength, h.terms) for h in some} == {
        ("https://a.example/1", 0.5, ("walnut",)),
        ("https://a.example/2", 0.5, ("walnut",)),
    }
    typo = await search_mod.lexical(api.store, "piranessi prisons", 10)
    assert [(h.item["source_url"], h.strength, h.terms) for h in typo] == [
        ("https://a.example/3", 0.875, ("piranesi", "prisons"))
    ]
    assert await search_mod.lexical(api.store, "nothing matches zzyzx", 10) == []


async def test_items_stored_before_the_upgrade_are_found_by_words_inside(tmp_path: Path) -> None:
    """A store written before unspaced scripts were indexed as pairs: the migration's Python step
    writes their indexed forms again (facts and library chunks), so they are found too."""
    db = tmp_path / "wherefrom.db"
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE schema_migrations (name TEXT PRIMARY KEY, applied_at REAL NOT NULL)")
    for name, sql in migration_files():
        if name >= "0007":
            continue
        for statement in _statements(sql):
            con.execute(statement)
        con.execute("INSERT INTO schema_migrations VALUES (?, 0)", (name,))
    prov = stamp("https://old.example/sushi", "")
    con.execute(
        "INSERT INTO facts(kind, title, text, source_url, source_host, source_ref, valid_at, granularity, "
        "created_at, updated_at) VALUES ('note', '', ?, ?, ?, ?, 0, 'instant', 0, 0)",
        (SUSHI, prov.source_url, prov.source_host, prov.source_ref),
    )
    con.execute(
        "INSERT INTO facts(kind, title, text, source_url, source_host, source_ref, valid_at, granularity, "
        "created_at, updated_at) VALUES ('note', '', 'plain words', ?, ?, ?, 0, 'instant', 0, 0)",
        (prov.source_url, prov.source_host, prov.source_ref),
    )
    doc = stamp("https://old.example/news", "ニュース")
    con.execute(
        "INSERT INTO documents(id, source_url, source_host, source_ref, given_url, title, text, text_sha256, lane, "
        "extractor, created_at, updated_at) VALUES (1, ?, ?, ?, ?, 'ニュース', ?, '', 'text', 'text', 0, 0)",
        (doc.source_url, doc.source_host, doc.source_ref, doc.source_url, "首相は記者会見を開きました"),
    )
    con.execute(
        "INSERT INTO document_chunks(document_id, seq, text, source_url, source_host, source_ref, search_title, "
        "search_text) VALUES (1, 0, ?, ?, ?, ?, 'ニュース', ?)",
        ("首相は記者会見を開きました", doc.source_url, doc.source_host, doc.source_ref, "首相は記者会見を開きました"),
    )
    con.commit()
    assert con.execute("SELECT rowid FROM facts_fts WHERE facts_fts MATCH '\"寿司\"'").fetchall() == []  # control
    con.close()
    store = await Store.open(db)
    try:
        await govern(store)
        found = await search_mod.search(store, "寿司", 10)
        assert [r["text"] for r in found["results"]] == [SUSHI]
        assert [r["text"] for r in (await search_mod.search(store, "plain", 10))["results"]] == ["plain words"]
        assert [r["kind"] for r in (await search_mod.search(store, "記者会見", 10))["results"]] == ["document"]
    finally:
        await store.close()
