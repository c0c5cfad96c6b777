"""While search by meaning is built, a search says so (server.meaning.building): which part is at
work and what that means, in the answer the panel, `wherefrom search` and MCP show; through the
real server while the third voice reads Dutch notes, then gone once it has read them all."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from server import appkeys
from server.meaning.building import meaning_state
from server.resultformat import results_text
from tests.conftest import Api
from tests.meaning.test_deep_lane import built

READY = {"state": "ready", "pending": 0}


def progress(static: dict[str, Any] = READY, **voices: dict[str, Any]) -> dict[str, Any]:
    return {**static, "deep": READY, "third": READY, **voices}


def test_the_first_part_at_work_is_named_with_its_items_to_go() -> None:
    assert "hint" not in meaning_state(progress())  # every part has read every item: nothing to say
    static = meaning_state(progress({"state": "building", "pending": 1234}, deep={"state": "building", "pending": 9}))
    assert static["building"] == "static"
    assert static["hint"] == "Search by meaning is being built (1,234 items to go); matches by words are complete."
    loading = meaning_state(progress({"state": "loading", "pending": 0}))
    assert loading["hint"] == "Search by meaning is being built; matches by words are complete."
    deep = meaning_state(progress(deep={"state": "building", "pending": 56}, third={"state": "building", "pending": 7}))
    assert (deep["building"], deep["hint"]) == (
        "deep",
        "Search by meaning is being sharpened (56 items to go); every item is found meanwhile.",
    )
    third = meaning_state(progress(third={"state": "building", "pending": 7}))
    assert third["hint"].startswith("Search by meaning across languages is being built (7 items to go)")
    assert third["deep"] == READY and third["third"] == {"state": "building", "pending": 7}  # each part's state
    # its items all read, the third voice only takes its scale: nothing left out for the person
    assert "hint" not in meaning_state(progress(third={"state": "building", "pending": 0}))
    for state in ("off", "failed"):  # said by `wherefrom status`, not at every search
        assert "hint" not in meaning_state(progress({"state": state, "pending": 0}))


def test_the_text_answer_says_it_after_its_first_line() -> None:
    meaning = meaning_state(progress(third={"state": "building", "pending": 7}))
    item = {"kind": "note", "title": "t", "source_url": "https://a.example/", "text": "x", "age": "today"}
    lines = results_text("q", [item], meaning).splitlines()
    assert lines[0] == '1 result for "q":' and lines[1] == meaning["hint"] and lines[2] == ""
    none = results_text("q", [], meaning).splitlines()
    assert none == ['No stored item matches "q". Try fewer or other words.', meaning["hint"]]
    assert results_text("q", [], meaning_state(progress())) == results_text("q", [])  # control: built


DUTCH = "Notitie {n}: de gemeente int de afvalstoffenheffing per kwartaal; bezwaar kan binnen zes weken."


@pytest.mark.usefixtures("third_voice")
async def test_a_search_says_while_the_third_voice_reads_other_languages(api: Api) -> None:
    for n in range(150):  # ~4 s of its reading
        status, body = await api.post("/api/notes", {"url": f"https://gemeente.example/{n}", "text": DUTCH.format(n=n)})
        assert status == 201, body
    embedder = api.app[appkeys.EMBEDDER]
    deadline = time.monotonic() + 60
    while not (embedder.progress()["third"]["state"] == "building" and embedder.progress()["third"]["pending"]):
        assert time.monotonic() < deadline, embedder.progress()
        await asyncio.sleep(0.02)
    status, body = await api.get("/api/search", params={"q": "when must I object to the waste tax"})
    assert status == 200, body
    assert body["meaning"]["building"] == "third", body["meaning"]
    assert "across languages" in body["meaning"]["hint"] and "items to go" in body["meaning"]["hint"]
    await built(api)
    status, body = await api.get("/api/search", params={"q": "when must I object to the waste tax"})
    assert status == 200 and body["meaning"]["third"] == READY
    assert "hint" not in body["meaning"] and "building" not in body["meaning"]
