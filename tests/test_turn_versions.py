"""Versions of a turn: a regenerated reply or an edited message is another version of the same
turn, never a turn after it — in live capture and in import (a ChatGPT tree), with the version
shown said by GET /api/conversations, the export's Markdown and the JSON export."""

from __future__ import annotations

from typing import Any

from server.dataio import chats
from tests.conftest import Api

CHAT = "https://chatgpt.com/c/versions"


def capture(turns: list[Any]) -> dict[str, Any]:
    items = [t if isinstance(t, dict) else {"role": t[0], "text": t[1]} for t in turns]
    return {"url": CHAT, "title": "Almonds", "site": "chatgpt", "turns": items}


async def shown(api: Api, url: str = CHAT) -> list[tuple[str, str, int, int]]:
    status, body = await api.get("/api/conversations", params={"url": url})
    assert status == 200, body
    return [(t["role"], t["text"], t["version"], t["versions"]) for t in body["turns"]]


async def test_a_regenerated_reply_without_ids_is_a_version_not_a_turn_after_it(api: Api) -> None:
    await api.post("/api/captures", capture([("user", "What is an almond?"), ("assistant", "A nut.")]))
    # regenerated: the reply at that place changed (not a reply still growing: no prefix)
    status, body = await api.post(
        "/api/captures",
        capture([("user", "What is an almond?"), ("assistant", "A nut from trees…"), ("user", "Which trees?")]),
    )
    assert status == 200 and (body["added"], body["versions"]) == (1, 1), body
    assert await shown(api) == [
        ("user", "What is an almond?", 1, 1),
        ("assistant", "A nut from trees…", 2, 2),
        ("user", "Which trees?", 1, 1),
    ]
    _, conv = await api.get("/api/conversations", params={"url": CHAT, "versions": "true"})
    assert [(o["version"], o["text"]) for o in conv["turns"][1]["others"]] == [(1, "A nut.")]
    assert conv["other_versions"] == 1
    # re-sending the same thread changes nothing
    _, again = await api.post(
        "/api/captures",
        capture([("user", "What is an almond?"), ("assistant", "A nut from trees…"), ("user", "Which trees?")]),
    )
    assert (again["added"], again["updated"], again["versions"], again["unchanged"]) == (0, 0, 0, 3), again
    # the person goes back to version 1 on the site: it is shown again, nothing new is stored
    _, back = await api.post("/api/captures", capture([("user", "What is an almond?"), ("assistant", "A nut.")]))
    assert (back["added"], back["versions"], back["switched"]) == (0, 0, 1), back
    assert (await shown(api))[1] == ("assistant", "A nut.", 1, 2)
    row = await api.store.fetchone("SELECT COUNT(*) FROM facts WHERE conversation_id IS NOT NULL")
    assert row is not None and row[0] == 4


async def test_a_reply_still_growing_is_one_turn_updated(api: Api) -> None:
    """Positive control for the rule above: a prefix extension of the last reply is growth."""
    await api.post("/api/captures", capture([("user", "What is an almond?"), ("assistant", "A nut")]))
    _, body = await api.post(
        "/api/captures", capture([("user", "What is an almond?"), ("assistant", "A nut from trees.")])
    )
    assert (body["updated"], body["versions"], body["added"]) == (1, 0, 0), body
    assert await shown(api) == [("user", "What is an almond?", 1, 1), ("assistant", "A nut from trees.", 1, 1)]


async def test_with_native_ids_a_new_id_at_the_same_place_is_a_version(api: Api) -> None:
    first = [
        {"role": "user", "text": "Name a nut", "native_id": "u1"},
        {"role": "assistant", "text": "Almond", "native_id": "a1"},
    ]
    await api.post("/api/captures", capture(first))
    regenerated = [first[0], {"role": "assistant", "text": "Almond", "native_id": "a2"}]  # same text, new id
    _, body = await api.post("/api/captures", capture(regenerated))
    assert body["versions"] == 1, body
    assert await shown(api) == [("user", "Name a nut", 1, 1), ("assistant", "Almond", 2, 2)]
    # it streams on under its id: an update of version 2, not a third version
    _, grown = await api.post("/api/captures", capture([first[0], {**regenerated[1], "text": "Almond, or pecan"}]))
    assert (grown["updated"], grown["versions"]) == (1, 0), grown
    assert await shown(api) == [("user", "Name a nut", 1, 1), ("assistant", "Almond, or pecan", 2, 2)]
    # the old id again: version 1 shown again
    _, back = await api.post("/api/captures", capture(first))
    assert back["switched"] == 1 and (await shown(api))[1] == ("assistant", "Almond", 1, 2)


def tree(current: str) -> list[dict[str, Any]]:
    """A ChatGPT export of one conversation whose first question was edited once: two branches
    from the root (u1 → a1 → u2 → a2, and the edit u1b → a1b); `current` picks the leaf shown."""

    def node(nid: str, parent: str | None, role: str | None, text: str, t: float, kids: list[str]) -> dict[str, Any]:
        msg = None
        if role:
            msg = {
                "id": nid,
                "author": {"role": role},
                "create_time": t,
                "content": {"content_type": "text", "parts": [text]},
                "recipient": "all",
            }
        return {"id": nid, "parent": parent, "children": kids, "message": msg}

    mapping = {
        "root": node("root", None, None, "", 0, ["sys"]),
        "sys": node("sys", "root", "system", "", 1, ["u1", "u1b"]),
        "u1": node("u1", "sys", "user", "Tell me about almonds", 10, ["a1"]),
        "a1": node("a1", "u1", "assistant", "Almonds are seeds.", 11, ["u2"]),
        "u2": node("u2", "a1", "user", "And walnuts?", 12, ["a2"]),
        "a2": node("a2", "u2", "assistant", "Walnuts too.", 13, []),
        "u1b": node("u1b", "sys", "user", "Tell me about pecans", 20, ["a1b"]),
        "a1b": node("a1b", "u1b", "assistant", "Pecans are hickory nuts.", 21, []),
    }
    return [{"id": "versions", "title": "New chat", "create_time": 5, "current_node": current, "mapping": mapping}]


def test_the_export_tree_shows_the_current_branch_and_keeps_the_others() -> None:
    parsed = chats.parse(tree("a1b"))
    conv = parsed.conversations[0]
    assert conv["title"] == "Tell me about pecans"  # untitled: its first question (on the branch shown)
    got = sorted((t["position"], t["shown"], t["text"]) for t in conv["turns"])
    assert got == [
        (0, False, "Tell me about almonds"),
        (0, True, "Tell me about pecans"),
        (1, False, "Almonds are seeds."),
        (1, True, "Pecans are hickory nuts."),
        (2, False, "And walnuts?"),
        (3, False, "Walnuts too."),
    ]
    assert parsed.messages + sum(parsed.skipped.values()) == 7  # every message accounted for


async def test_reimport_after_an_edit_moves_the_shown_branch(api: Api) -> None:
    async def send(current: str, n: int) -> dict[str, Any]:
        parsed = chats.parse(tree(current))
        status, body = await api.post(
            "/api/import", {"import_id": f"i{n}", "source": "chatgpt", "conversations": parsed.conversations}
        )
        assert status == 200, body
        return body

    first = await send("a2", 1)
    assert (first["turns"]["added"], first["turns"]["versions"]) == (4, 2), first
    assert [t[1] for t in await shown(api)] == [
        "Tell me about almonds",
        "Almonds are seeds.",
        "And walnuts?",
        "Walnuts too.",
    ]
    # the person edited the first question in ChatGPT and exported again
    again = await send("a1b", 2)
    assert again["turns"]["added"] == 0 and again["conversations"]["updated"] == 1, again
    assert await shown(api) == [
        ("user", "Tell me about pecans", 2, 2),
        ("assistant", "Pecans are hickory nuts.", 2, 2),
    ]
    rows = await api.store.fetchone("SELECT COUNT(*) FROM facts WHERE conversation_id IS NOT NULL")
    assert rows is not None and rows[0] == 6  # nothing lost, nothing doubled
    # the export's Markdown says which version is shown
    status, md = await api.get("/api/conversations/markdown", params={"url": CHAT})
    assert status == 200, md
    assert "## User · 1970-01-01T00:00:20Z · version 2 of 2" in md["markdown"]
    assert "Walnuts" not in md["markdown"] and "other_versions: 4" in md["markdown"]


async def test_two_turns_sent_as_shown_at_one_place_show_one(api: Api) -> None:
    turns = [
        {"role": "user", "text": "first", "valid_at": 10, "granularity": "instant", "position": 0, "shown": True},
        {"role": "user", "text": "second", "valid_at": 11, "granularity": "instant", "position": 0, "shown": True},
    ]
    conv = {"url": CHAT, "site": "chatgpt", "title": "t", "turns": turns}
    status, body = await api.post("/api/import", {"import_id": "dup", "source": "wherefrom", "conversations": [conv]})
    assert status == 200 and (body["turns"]["added"], body["turns"]["versions"]) == (1, 1), body
    assert await shown(api) == [("user", "first", 1, 2)]


async def test_editing_an_earlier_message_live_leaves_the_old_tail_as_versions(api: Api) -> None:
    old = [
        ("user", "q1"),
        ("assistant", "a1"),
        ("user", "q2"),
        ("assistant", "a2"),
        ("user", "q3"),
        ("assistant", "a3"),
    ]
    await api.post("/api/captures", capture(old))
    # the person edits q2 on the site: the thread now ends with the new reply to it
    _, body = await api.post(
        "/api/captures", capture([("user", "q1"), ("assistant", "a1"), ("user", "q2 edited"), ("assistant", "b2")])
    )
    assert body["versions"] == 2, body
    assert [t[1] for t in await shown(api)] == ["q1", "a1", "q2 edited", "b2"]
    row = await api.store.fetchone("SELECT COUNT(*) FROM facts WHERE conversation_id IS NOT NULL")
    assert row is not None and row[0] == 8  # q3 and a3 kept, not shown
    # positive control: a re-send of the whole thread without an edit hides nothing
    _, again = await api.post("/api/captures", capture([("user", "q1"), ("assistant", "a1")]))
    assert again["versions"] == 0 and [t[1] for t in await shown(api)] == ["q1", "a1", "q2 edited", "b2"]
