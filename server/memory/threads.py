"""The reader of one stored conversation: GET /api/conversations (the panel's Conversation view,
MCP, scripts) and the item the one renderer (server.render.conversation) turns into Markdown.

Every row passes the one visibility rule. The turns shown come in order, each with its date
(ISO beside the age label) and which version it is ("version 2 of 3", server.memory.versions);
`versions=True` also gives each turn its other versions, so a reader can show them.
"""

from __future__ import annotations

from typing import Any

from server import ages
from server.governance.visibility import visible
from server.memory.versions import number
from server.render import conversation as render_conversation
from server.store.db import Store
from server.urls import normalise_url


async def conversation_item(store: Store, url: str, site: str | None = None) -> dict[str, Any] | None:
    """The conversation stored for a page in the export's shape (server.dataio.schema
    .CONVERSATION: every visible version, with its place), plus `source_host` and `captured_at`;
    None when nothing visible is stored there."""
    sql = (
        "SELECT f.role, f.text, f.markdown, f.native_id, f.valid_at, f.granularity, f.position, f.shown, "  # noqa: S608
        "c.id AS cid, c.site, c.source_url, c.source_host, c.source_ref, c.created_at, c.updated_at "
        "FROM conversations c JOIN facts f ON f.conversation_id = c.id "
        f"WHERE c.source_url = ? AND {visible('conversations', 'c')} AND {visible('facts', 'f')}"
    )
    params: list[Any] = [normalise_url(url)]
    if site is not None:
        sql += " AND c.site = ?"
        params.append(site.strip().lower())
    rows = await store.fetchall(sql + " ORDER BY c.id, f.position, f.valid_at, f.id", params)
    if not rows:
        return None
    head = rows[0]
    rows = [r for r in rows if r["cid"] == head["cid"]]
    return {
        "url": head["source_url"],
        "site": head["site"],
        "title": head["source_ref"],
        "created_at": head["created_at"],
        "native_id": None,
        "source_host": head["source_host"],
        "captured_at": head["updated_at"],
        "turns": [
            {
                "role": r["role"],
                "text": r["text"],
                "markdown": r["markdown"],
                "native_id": r["native_id"],
                "valid_at": r["valid_at"],
                "granularity": r["granularity"],
                "position": r["position"],
                "shown": bool(r["shown"]),
            }
            for r in rows
        ],
    }


def _turn(t: dict[str, Any]) -> dict[str, Any]:
    return {
        "role": t["role"],
        "text": t["text"],
        "markdown": t["markdown"] if t["markdown"] else t["text"],
        "date": ages.iso(t["valid_at"], t["granularity"]),
        "age": ages.age(t["valid_at"], t["granularity"]),
        "native_id": t["native_id"],
    }


async def conversation_turns(
    store: Store, url: str, site: str | None = None, *, with_versions: bool = False
) -> dict[str, Any]:
    """GET /api/conversations: the turns shown for a page, in order, with what the panel shows
    above them: title, site, host, when it started and was last captured, ISO dates beside the
    age labels (nulls when nothing is stored for the page)."""
    item = await conversation_item(store, url, site)
    if item is None:
        return {
            "url": normalise_url(url),
            "title": None,
            "site": None,
            "source_host": None,
            "created": None,
            "captured_at": None,
            "captured": None,
            "age": None,
            "other_versions": 0,
            "turns": [],
        }
    shown = number(item["turns"])
    turns = []
    for e in shown:
        turn = {**_turn(e["row"]), "position": e["row"]["position"], "version": e["version"], "versions": e["versions"]}
        if with_versions and e["others"]:
            turn["others"] = [{**_turn(o), "version": k} for k, o in _numbered(e)]
        turns.append(turn)
    return {
        "url": item["url"],
        "title": render_conversation.title_of(item),  # the saved file's (an untitled chat: its question)
        "site": item["site"],
        "source_host": item["source_host"],
        "created": ages.iso(item["created_at"]),
        "captured_at": item["captured_at"],
        "captured": ages.iso(item["captured_at"]),
        "age": ages.age(item["captured_at"], ages.INSTANT),
        "other_versions": len(item["turns"]) - len(shown),
        "turns": turns,
    }


def _numbered(entry: dict[str, Any]) -> list[tuple[int, dict[str, Any]]]:
    """The other versions of a shown turn with their numbers (the shown one's is skipped)."""
    numbers = [k for k in range(1, entry["versions"] + 1) if k != entry["version"]]
    return list(zip(numbers, entry["others"], strict=True))
