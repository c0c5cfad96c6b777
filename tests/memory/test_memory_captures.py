"""Chat captures: a conversation upsert that adds new turns, grows streaming replies in place,
keeps order, and refuses what it must."""

from __future__ import annotations

from typing import Any

import pytest

from server.memory.captures import Incoming, Stored, plan
from tests.conftest import Api
from tests.memory.test_memory_writes import set_mode, snapshot

CHAT = "https://chatgpt.com/c/abc-123"


def capture(turns: list[tuple[str, str]] | list[dict[str, Any]], **kw: Any) -> dict[str, Any]:
    items = [t if isinstance(t, dict) else {"role": t[0], "text": t[1]} for t in turns]
    return {"url": CHAT, "title": "Dog names", "site": "chatgpt", "turns": items, **kw}


async def stored_turns(api: Api, url: str = CHAT) -> list[dict[str, str]]:
    status, body = await api.get("/api/conversations", params={"url": url})
    assert status == 200
    return [{"role": t["role"], "text": t["text"]} for t in body["turns"]]  # markdown: test_turn_markdown.py


async def test_first_capture_then_one_more_turn_adds_one(api: Api) -> None:
    turns = [("user", "What should I call my dog?"), ("assistant", "How about Biscuit?")]
    status, body = await api.post("/api/captures", capture(turns))
    assert status == 200 and (body["added"], body["updated"], body["unchanged"]) == (2, 0, 0)
    cid = body["conversation_id"]
    status, body = await api.post("/api/captures", capture([*turns, ("user", "Something shorter")]))
    assert (body["conversation_id"], body["added"], body["updated"], body["unchanged"]) == (cid, 1, 0, 2)
    assert await stored_turns(api) == [
        {"role": "user", "text": "What should I call my dog?"},
        {"role": "assistant", "text": "How about Biscuit?"},
        {"role": "user", "text": "Something shorter"},
    ]


async def test_same_capture_twice_changes_nothing(api: Api) -> None:
    turns = [("user", "hi"), ("assistant", "hello")]
    await api.post("/api/captures", capture(turns))
    before = await snapshot(api)
    status, body = await api.post("/api/captures", capture(turns))
    assert (body["added"], body["updated"], body["unchanged"]) == (0, 0, 2)
    assert await snapshot(api) == {**before, "conversations": (await snapshot(api))["conversations"]}


async def test_a_streaming_reply_updates_one_turn_and_never_adds_fragments(api: Api) -> None:
    q = ("user", "Explain FTS5 briefly")
    reply = "FTS5 is SQLite's full-text search extension; it builds an inverted index."
    for n in range(5, len(reply) + 1, 9):
        status, body = await api.post("/api/captures", capture([q, ("assistant", reply[:n])]))
        assert status == 200 and body["added"] <= 2
    await api.post("/api/captures", capture([q, ("assistant", reply)]))
    assert await stored_turns(api) == [{"role": "user", "text": q[1]}, {"role": "assistant", "text": reply}]
    count = await api.store.fetchone("SELECT COUNT(*) FROM facts WHERE kind = 'turn'")
    assert count is not None and count[0] == 2
    # a late, shorter re-send (an outbox delivering an old snapshot) never shrinks the turn
    status, body = await api.post("/api/captures", capture([q, ("assistant", reply[:10])]))
    assert (body["added"], body["updated"]) == (0, 0)
    assert (await stored_turns(api))[1]["text"] == reply


async def test_native_ids_match_turns_wherever_they_are(api: Api) -> None:
    t = [
        {"role": "user", "text": "one", "native_id": "m1"},
        {"role": "assistant", "text": "two", "native_id": "m2"},
        {"role": "user", "text": "three", "native_id": "m3"},
        {"role": "assistant", "text": "fo", "native_id": "m4"},
    ]
    await api.post("/api/captures", capture(t))
    # a virtualised thread: only the last two are on screen, the reply has grown
    window = [t[2], {**t[3], "text": "four"}, {"role": "user", "text": "five", "native_id": "m5"}]
    status, body = await api.post("/api/captures", capture(window))
    assert (body["added"], body["updated"], body["unchanged"]) == (1, 1, 1)
    assert [x["text"] for x in await stored_turns(api)] == ["one", "two", "three", "four", "five"]


async def test_a_window_without_ids_is_aligned_on_a_shared_turn(api: Api) -> None:
    turns = [("user", f"question {i}") if i % 2 == 0 else ("assistant", f"answer {i}") for i in range(10)]
    await api.post("/api/captures", capture(turns))
    window = [*turns[6:], ("user", "question 10")]
    status, body = await api.post("/api/captures", capture(window))
    assert (body["added"], body["updated"], body["unchanged"]) == (1, 0, 4)
    texts = [x["text"] for x in await stored_turns(api)]
    assert texts == [t[1] for t in turns] + ["question 10"]


def test_plan_prepends_turns_loaded_above_the_window() -> None:
    stored = [Stored(1, 0, "user", "c", None), Stored(2, 1, "assistant", "d", None)]
    ops = plan(
        stored, [Incoming("user", "a"), Incoming("assistant", "b"), Incoming("user", "c"), Incoming("assistant", "d")]
    )
    assert [(o.action, o.position) for o in ops] == [("add", -2), ("add", -1), ("unchanged", None), ("unchanged", None)]


def test_plan_duplicate_turn_in_one_capture_is_kept_once() -> None:
    stored = [Stored(1, 0, "user", "a", "x")]
    ops = plan(stored, [Incoming("user", "a", "x"), Incoming("user", "a", "x")])
    assert [o.action for o in ops] == ["unchanged", "unchanged"]


async def test_conversations_are_per_url_and_site(api: Api) -> None:
    await api.post("/api/captures", capture([("user", "a")]))
    await api.post("/api/captures", {**capture([("user", "b")]), "url": "https://chatgpt.com/c/other"})
    assert [x["text"] for x in await stored_turns(api)] == ["a"]
    assert [x["text"] for x in await stored_turns(api, "HTTPS://ChatGPT.com/c/other/#x")] == ["b"]


async def test_turns_are_facts_on_the_page(api: Api) -> None:
    await api.post("/api/captures", capture([("user", "walnut-lantern-4417"), ("assistant", "noted")]))
    status, match = await api.get("/api/page-match", params={"url": CHAT, "title": "Dog names"})
    assert status == 200 and match["green"] is True
    exact = match["tiers"]["exact"]
    assert {f["text"] for f in exact} == {"walnut-lantern-4417", "noted"}
    assert all(f["kind"] == "turn" and f["source_url"] == CHAT and f["source_host"] == "chatgpt.com" for f in exact)


async def test_a_renamed_conversation_renames_its_turns(api: Api) -> None:
    await api.post("/api/captures", capture([("user", "a")], title="New chat"))
    await api.post("/api/captures", capture([("user", "a"), ("assistant", "b")], title="Walnut plans"))
    rows = await api.store.fetchall("SELECT title, source_ref FROM facts ORDER BY position")
    assert [(r["title"], r["source_ref"]) for r in rows] == [("Walnut plans", "Walnut plans")] * 2
    status, body = await api.get("/api/search", params={"q": "walnut plans"})
    assert len(body["results"]) == 2


async def test_the_panel_names_a_chat_the_site_had_not_titled_by_its_first_question(api: Api) -> None:
    """The tab's title before ChatGPT names a chat is "ChatGPT": the panel's conversation view
    shows the first question instead, as the saved file does; a real title arriving later wins."""
    await api.post(
        "/api/captures", capture([("user", "Name my  dog\nplease"), ("assistant", "Biscuit")], title="ChatGPT")
    )
    _, view = await api.get("/api/conversations", params={"url": CHAT})
    _, file = await api.get("/api/conversations/markdown", params={"url": CHAT})
    assert view["title"] == file["title"] == "Name my dog please"
    await api.post("/api/captures", capture([("user", "Name my  dog\nplease"), ("assistant", "Biscuit")]))
    _, view = await api.get("/api/conversations", params={"url": CHAT})
    assert view["title"] == "Dog names"


async def test_an_offset_past_the_end_of_its_turn_is_refused(api: Api) -> None:
    """A page continues a turn at `offset`; one past the turn's end is no page of it (it answered
    an empty "continued" turn)."""
    await api.post("/api/captures", capture([("user", "Name my dog"), ("assistant", "Biscuit " * 300)]))
    params = {"url": CHAT, "start": 1, "max_chars": 1000}
    status, first = await api.get("/api/conversations/markdown", params=params)
    assert status == 200 and first["next"] == 1 and first["offset"], first  # the reply goes on
    status, rest = await api.get("/api/conversations/markdown", params={**params, "offset": first["offset"]})
    assert status == 200 and "continued" in rest["markdown"] and rest["markdown"].rstrip().endswith("Biscuit")
    status, past = await api.get("/api/conversations/markdown", params={**params, "offset": 2400})
    assert status == 400 and past["error"]["code"] == "bad_offset", past
    assert "past the end of turn 1 (2399 characters)" in past["error"]["message"]


async def test_capture_writes_one_activity_row_per_conversation_while_it_streams(api: Api) -> None:
    await api.post("/api/captures", capture([("user", "q"), ("assistant", "a")]))
    await api.post("/api/captures", capture([("user", "q"), ("assistant", "ab")]))
    await api.post("/api/captures", capture([("user", "q"), ("assistant", "ab")]))  # no change: not a write
    status, body = await api.get("/api/activity")
    rows = [r for r in body["activity"] if r["kind"] == "capture"]
    assert len(rows) == 1 and rows[0]["source_url"] == CHAT and "2 turns" in rows[0]["summary"]


@pytest.mark.parametrize(
    "payload,status_code,code",
    [
        (capture([]), 400, "bad_value"),  # a miss is not a capture
        ({"url": CHAT, "title": "t", "site": "chatgpt"}, 400, "missing_field"),
        (capture([("robot", "x")]), 400, "bad_value"),
        (capture([("user", "")]), 400, "bad_value"),
        (capture([("user", " \n ")]), 400, "bad_value"),
        (capture([("user", "x")], url="javascript:alert(1)"), 400, "bad_url"),
        (capture([("user", "x")], url="file:///c/abc"), 400, "bad_url"),
        ({**capture([("user", "x")]), "url": None}, 400, "bad_type"),
        (capture([("user", "ok"), ("assistant", "x" * 100_001)]), 413, "payload_too_large"),
    ],
)
async def test_bad_captures_write_nothing(api: Api, payload: dict[str, Any], status_code: int, code: str) -> None:
    await api.post("/api/captures", capture([("user", "existing")]))
    before = await snapshot(api)
    status, body = await api.post("/api/captures", payload)
    assert status == status_code and body["error"]["code"] == code, body
    assert await snapshot(api) == before


@pytest.mark.parametrize("mode", ["off", "suggest"])
async def test_capture_is_403_unless_collect(api: Api, mode: str) -> None:
    await set_mode(api, "chatgpt.com", mode)
    before = await snapshot(api)
    status, body = await api.post("/api/captures", capture([("user", "x")]))
    assert status == 403 and body["error"]["code"] == "site_mode" and body["error"]["mode"] == mode
    assert await snapshot(api) == before
    await set_mode(api, "chatgpt.com", "collect")
    status, _ = await api.post("/api/captures", capture([("user", "x")]))
    assert status == 200


async def test_forgotten_turns_stay_forgotten_when_re_sent_and_undo_restores_them_in_place(api: Api) -> None:
    turns = [("user", "q1"), ("assistant", "a1")]
    await api.post("/api/captures", capture(turns))
    _, dry = await api.post("/api/forget", {"host": "chatgpt.com", "dry_run": True})
    _, done = await api.post("/api/forget", {"host": "chatgpt.com", "confirm": dry["confirm"]})
    assert await stored_turns(api) == []
    status, body = await api.post("/api/captures", capture([*turns, ("user", "q2")]))
    assert (body["added"], body["unchanged"]) == (1, 2)
    assert [t["text"] for t in await stored_turns(api)] == ["q2"]
    await api.post("/api/forget/undo", {"batch": done["batch"]})
    assert [t["text"] for t in await stored_turns(api)] == ["q1", "a1", "q2"]


async def test_an_exchange_id_shared_by_prompt_and_reply_keeps_both(api) -> None:
    """Gemini and ChatGPT (layout B) give one id to a prompt and its reply: both turns are kept,
    also when the thread arrives window by window (lazy loading)."""
    url = "https://gemini.google.com/app/abc123"
    late = [{"role": "user", "text": "q3", "native_id": "c3"}, {"role": "assistant", "text": "a3", "native_id": "c3"}]
    early = [
        {"role": "user", "text": "q1", "native_id": "c1"},
        {"role": "assistant", "text": "a1", "native_id": "c1"},
        {"role": "user", "text": "q2", "native_id": "c2"},
        {"role": "assistant", "text": "a2", "native_id": "c2"},
    ]
    status, _ = await api.post("/api/captures", {"url": url, "title": "t", "site": "gemini", "turns": late})
    assert status == 200
    status, body = await api.post("/api/captures", {"url": url, "title": "t", "site": "gemini", "turns": early + late})
    assert status == 200, body
    _, conv = await api.get("/api/conversations", params={"url": url})
    assert [(t["role"], t["text"]) for t in conv["turns"]] == [
        ("user", "q1"),
        ("assistant", "a1"),
        ("user", "q2"),
        ("assistant", "a2"),
        ("user", "q3"),
        ("assistant", "a3"),
    ]


# --- one conversation per page: a capture never rewrites another conversation's history ---------------


async def test_unrelated_turns_under_a_stored_url_are_added_never_replace(api: Api) -> None:
    """The capture's URL follows pushState: another chat's turns arrive under this page's URL.
    The stored turns stay as they were; the newcomers are appended (nothing lost either way)."""
    mine = [("user", f"my question {i}") if i % 2 == 0 else ("assistant", f"my answer {i}") for i in range(40)]
    await api.post("/api/captures", capture(mine))
    other = [("user", f"other question {i}") if i % 2 == 0 else ("assistant", f"other answer {i}") for i in range(40)]
    status, body = await api.post("/api/captures", capture(other))
    assert status == 200 and (body["added"], body["updated"]) == (40, 0), body
    texts = [t["text"] for t in await stored_turns(api)]
    assert texts[:40] == [t[1] for t in mine]
    assert texts[40:] == [t[1] for t in other]
    # re-sending either thread changes nothing now (content matching, not places)
    for thread in (mine, other):
        status, body = await api.post("/api/captures", capture(thread))
        assert (body["added"], body["updated"], body["unchanged"]) == (0, 0, 40), body


async def test_a_turn_with_a_native_id_is_updated_only_by_the_same_id(api: Api) -> None:
    stored = [{"role": "user", "text": "q1", "native_id": "m1"}, {"role": "assistant", "text": "a1", "native_id": "m2"}]
    await api.post("/api/captures", capture(stored))
    # the same places, other ids (another conversation, or an edited branch): added, not replaced
    other = [
        {"role": "user", "text": "Q-other", "native_id": "x1"},
        {"role": "assistant", "text": "a1 and more", "native_id": "x2"},
    ]
    status, body = await api.post("/api/captures", capture(other))
    assert (body["added"], body["updated"]) == (2, 0), body
    # and with no ids at all, a longer text at the last stored place does not update an id'd turn
    status, body = await api.post("/api/captures", capture([("user", "q1"), ("assistant", "a1 grown")]))
    assert body["updated"] == 0, body
    rows = await api.store.fetchall("SELECT native_id, text FROM facts WHERE native_id IN ('m1', 'm2') ORDER BY id")
    assert [(r["native_id"], r["text"]) for r in rows] == [("m1", "q1"), ("m2", "a1")]
    # positive control: the same id does update it
    status, body = await api.post("/api/captures", capture([{**stored[1], "text": "a1 edited"}]))
    assert body["updated"] == 1
    row = await api.store.fetchone("SELECT text FROM facts WHERE native_id = 'm2'")
    assert row is not None and row["text"] == "a1 edited"


async def test_only_the_last_reply_grows_in_place(api: Api) -> None:
    turns = [("user", "q1"), ("assistant", "a1"), ("user", "q2"), ("assistant", "a2 partial")]
    await api.post("/api/captures", capture(turns))
    # an earlier turn "growing" is not a reply still streaming: another version of that turn
    # (shown in its place), the stored one kept as version 1
    status, body = await api.post(
        "/api/captures",
        capture([("user", "q1"), ("assistant", "a1 but different"), ("user", "q2"), ("assistant", "a2 partial")]),
    )
    assert (body["added"], body["updated"], body["versions"]) == (0, 0, 1), body
    texts = [t["text"] for t in await stored_turns(api)]
    assert texts == ["q1", "a1 but different", "q2", "a2 partial"]
    _, conv = await api.get("/api/conversations", params={"url": CHAT, "versions": "true"})
    second = conv["turns"][1]
    assert (second["version"], second["versions"]) == (2, 2)
    assert [o["text"] for o in second["others"]] == ["a1"]
    # positive control, on another page: the last reply growing is one update
    other = "https://chatgpt.com/c/positive-control"
    await api.post("/api/captures", {**capture(turns), "url": other})
    status, body = await api.post(
        "/api/captures", {**capture([*turns[:3], ("assistant", "a2 partial, now whole")]), "url": other}
    )
    assert (body["added"], body["updated"], body["versions"]) == (0, 1, 0), body
    assert [t["text"] for t in await stored_turns(api, other)] == ["q1", "a1", "q2", "a2 partial, now whole"]


def test_plan_unrelated_thread_adds_every_turn() -> None:
    stored = [Stored(k, k, "user" if k % 2 == 0 else "assistant", f"stored {k}", None) for k in range(2000)]
    incoming = [Incoming("user" if k % 2 == 0 else "assistant", f"incoming {k}") for k in range(2000)]
    ops = plan(stored, incoming)
    assert {o.action for o in ops} == {"add"}
    assert [o.position for o in ops] == list(range(2000, 4000))


def test_plan_grows_the_last_turn_only() -> None:
    stored = [
        Stored(1, 0, "user", "q", None),
        Stored(2, 1, "assistant", "a", None),
        Stored(3, 2, "user", "q2", None),
        Stored(4, 3, "assistant", "b", None),
    ]
    ops = plan(
        stored,
        [Incoming("user", "q"), Incoming("assistant", "a!"), Incoming("user", "q2"), Incoming("assistant", "bb")],
    )
    assert [(o.action, o.stored_id) for o in ops] == [("unchanged", 1), ("version", 2), ("unchanged", 3), ("update", 4)]


class CountingText(str):
    """A turn's text that counts the comparisons made with it (the matcher's work)."""

    compared = 0

    def __eq__(self, other: object) -> bool:
        CountingText.compared += 1
        return str.__eq__(self, other)

    __hash__ = str.__hash__


def test_plan_is_linear() -> None:
    """The old matcher compared every incoming turn with the stored thread (quadratic: 1 s for
    2,000 x 20,000). Counted, not timed: text comparisons stay within a small multiple of the
    turns seen (bench/bench_captures.py has the times)."""

    def comparisons(n_stored: int, n_incoming: int) -> int:
        stored = [
            Stored(k, k, "user" if k % 2 == 0 else "assistant", CountingText(f"s{k}"), None) for k in range(n_stored)
        ]
        incoming = [Incoming("user" if k % 2 == 0 else "assistant", CountingText(f"i{k}")) for k in range(n_incoming)]
        CountingText.compared = 0
        plan(stored, incoming)
        return CountingText.compared

    assert comparisons(2000, 200) <= 4 * 2200
    # a shared window (the usual re-send) is linear too
    stored = [Stored(k, k, "user", CountingText(f"t{k}"), None) for k in range(2000)]
    CountingText.compared = 0
    ops = plan(stored, [Incoming("user", CountingText(f"t{k}")) for k in range(1000, 2200)])
    assert [o.action for o in ops].count("unchanged") == 1000 and CountingText.compared <= 4 * 3200
