"""Captured turns keep their Markdown beside the text: stored, answered, capped without
leaving a code fence open, never indexed for search, and older rows fall back to their text."""

from __future__ import annotations

import sqlite3

from server import limits
from server.memory import facts
from server.textcaps import open_fence
from tests.conftest import Api
from tests.memory.test_memory_captures import CHAT, capture

CODE = "def f():\n    return {'a': 1}\n\n\nprint(f())"
MD = f"Here:\n\n```python\n{CODE}\n```\n\n| a | b |\n| --- | --- |\n| 1 | 2 |"
TEXT = "Here: def f(): return {'a': 1} print(f()) a b 1 2"


async def conversation(api: Api) -> list[dict[str, str]]:
    status, body = await api.get("/api/conversations", params={"url": CHAT})
    assert status == 200
    return [{k: t[k] for k in ("role", "text", "markdown")} for t in body["turns"]]


async def test_markdown_is_stored_and_answered_byte_exact(api: Api) -> None:
    status, _ = await api.post(
        "/api/captures",
        capture(
            [
                {"role": "user", "text": "write f", "markdown": "write f\nplease"},
                {"role": "assistant", "text": TEXT, "markdown": MD},
            ]
        ),
    )
    assert status == 200
    turns = await conversation(api)
    assert turns == [
        {"role": "user", "text": "write f", "markdown": "write f\nplease"},
        {"role": "assistant", "text": TEXT, "markdown": MD},
    ]
    assert f"```python\n{CODE}\n```" in turns[1]["markdown"]


async def test_a_turn_without_markdown_answers_its_text(api: Api) -> None:
    await api.post("/api/captures", capture([("user", "hello there"), ("assistant", "hi")]))
    assert await conversation(api) == [
        {"role": "user", "text": "hello there", "markdown": "hello there"},
        {"role": "assistant", "text": "hi", "markdown": "hi"},
    ]


async def test_same_text_new_markdown_updates_the_markdown_only(api: Api) -> None:
    await api.post("/api/captures", capture([("user", "q"), ("assistant", TEXT)]))
    status, body = await api.post(
        "/api/captures",
        capture(
            [
                {"role": "user", "text": "q"},
                {"role": "assistant", "text": TEXT, "markdown": MD},
            ]
        ),
    )
    assert status == 200 and body["added"] == 0
    assert (await conversation(api))[1]["markdown"] == MD


async def test_search_indexes_the_text_not_the_markdown(api: Api) -> None:
    md = "Plain words here.\n\n```\nzebracorn_marker = 1\n```"
    await api.post(
        "/api/captures",
        capture(
            [
                {"role": "user", "text": "q"},
                {"role": "assistant", "text": "Plain words here.", "markdown": md},
            ]
        ),
    )
    status, body = await api.get("/api/search", params={"q": "zebracorn_marker"})
    assert status == 200 and body["results"] == []
    status, body = await api.get("/api/search", params={"q": "plain words"})
    assert status == 200 and [r["markdown"] for r in body["results"] if r["kind"] == "turn"] == [md]


async def test_markdown_over_the_limit_is_refused_whole(api: Api) -> None:
    big = "x" * (limits.MARKDOWN_CHARS + 1)
    status, body = await api.post(
        "/api/captures",
        capture(
            [
                {"role": "user", "text": "q", "markdown": big},
            ]
        ),
    )
    assert status == 413 and body["error"]["code"]
    assert await conversation(api) == []


async def test_page_match_cuts_markdown_without_leaving_a_fence_open(api: Api) -> None:
    long_code = "\n".join(f"    line_{n} = {n}" for n in range(4000))
    md = f"Intro\n\n```python\n{long_code}\n```\n\nafter"
    assert len(md) > facts.ANSWER_MARKDOWN_CHARS
    await api.post(
        "/api/captures",
        capture(
            [
                {"role": "user", "text": "q"},
                {"role": "assistant", "text": "Intro code after", "markdown": md},
            ]
        ),
    )
    status, match = await api.get("/api/page-match", params={"url": CHAT, "title": "Dog names"})
    assert status == 200
    shown = [f["markdown"] for f in match["tiers"]["exact"] if f.get("role") == "assistant"]
    assert len(shown) == 1 and len(shown[0]) <= facts.ANSWER_MARKDOWN_CHARS
    assert open_fence(shown[0]) is None and shown[0].endswith("\n```")
    assert open_fence(md[: facts.ANSWER_MARKDOWN_CHARS]) == "```"  # a plain cut would leave it open


def test_the_migration_keeps_existing_rows() -> None:
    from server.store.db import _statements, migration_files

    con = sqlite3.connect(":memory:")
    files = migration_files()
    names = [n for n, _ in files]
    assert "0005_turn_markdown" in names
    for name, sql in files:
        if name == "0005_turn_markdown":
            con.execute(
                "INSERT INTO facts(kind, text, source_url, source_host, source_ref, valid_at, granularity,"
                " created_at, updated_at) VALUES ('turn', 'old text', 'https://a.example/', 'a.example', 'x',"
                " 0, 'instant', 0, 0)"
            )
        for statement in _statements(sql):
            con.execute(statement)
    assert con.execute("SELECT text, markdown FROM facts").fetchall() == [("old text", None)]
