"""Versions of a turn: every row of a conversation at one `position` is a version of the turn at
that place (a regenerated reply, an edited message); `shown` marks the one the conversation
shows (0008_turn_versions.sql). Versions are numbered 1..n by (valid_at, id).

`write_thread` is the writer for a sender that knows the places (an import of a ChatGPT tree,
our own JSON export): each incoming turn carries its position and whether it is shown, and is
matched to a stored row by the service's message id (with its role), else by (position, role,
text). An incoming shown turn becomes the version shown at its place, so re-importing after an
edit moves the shown branch; nothing stored is deleted. A capture, which does not know places,
goes through server.memory.captures.plan instead.

`number` gives each shown turn "version k of n" for the readers (GET /api/conversations, the
export, MCP).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import aiosqlite

from server.memory.facts import insert_fact, insert_facts
from server.provenance import Provenance, restamp
from server.searchtext import search_forms


async def write_thread(
    conn: aiosqlite.Connection,
    prov: Provenance,
    conversation_id: int,
    title: str,
    incoming: Sequence[Any],  # captures.Incoming, each with a position
    now: float,
) -> tuple[dict[str, int], int]:
    """Store a placed thread inside the caller's transaction: (counts, shown turns)."""
    rows = await conn.execute_fetchall(
        "SELECT id, position, role, text, native_id, markdown, shown FROM facts WHERE conversation_id = ?",
        (conversation_id,),
    )
    if not rows:
        return await _insert_all(conn, prov, conversation_id, title, incoming, now)
    by_native = {(r["native_id"], r["role"]): r for r in rows if r["native_id"]}
    by_place = {(r["position"], r["role"], r["text"]): r for r in rows}
    counts = {"add": 0, "update": 0, "unchanged": 0, "version": 0, "show": 0}
    seen: set[int] = set()
    shown_at: dict[int, int] = {}
    for turn in incoming:
        row = by_native.get((turn.native_id, turn.role)) if turn.native_id else None
        if row is None:
            row = by_place.get((turn.position, turn.role, turn.text))
            if row is not None and row["native_id"] and turn.native_id and row["native_id"] != turn.native_id:
                row = None
        if row is None:
            fact_id = await insert_fact(
                conn,
                restamp(prov, turn.native_id or title),
                kind="turn",
                title=title,
                text=turn.text,
                valid_at=now if turn.valid_at is None else turn.valid_at,
                granularity=turn.granularity,
                now=now,
                conversation_id=conversation_id,
                position=turn.position,
                role=turn.role,
                native_id=turn.native_id,
                markdown=turn.markdown,
                shown=turn.shown,
            )
            counts["add" if turn.shown else "version"] += 1
        else:
            fact_id = row["id"]
            if fact_id in seen:
                counts["unchanged"] += 1
                continue
            changed = await _refresh(conn, row, turn, now)
            counts["update" if changed else "unchanged"] += 1
        seen.add(fact_id)
        if turn.shown:
            shown_at[turn.position] = fact_id
    for position, fact_id in shown_at.items():  # the incoming branch becomes the one shown
        cur = await conn.execute(
            "UPDATE facts SET shown = (id = ?) WHERE conversation_id = ? AND position = ? AND shown != (id = ?)",
            (fact_id, conversation_id, position, fact_id),
        )
        counts["show"] += 1 if cur.rowcount else 0
    return counts, len(shown_at)


async def _insert_all(
    conn: aiosqlite.Connection,
    prov: Provenance,
    conversation_id: int,
    title: str,
    incoming: Sequence[Any],
    now: float,
) -> tuple[dict[str, int], int]:
    """A conversation new to the store: every turn inserted in as few statements as can hold
    them (an import's common case; nothing to match, nothing to hide)."""
    counts, stamped = new_thread(prov, conversation_id, title, incoming, now)
    await insert_facts(conn, stamped)
    return counts, counts["add"]


def new_thread(
    prov: Provenance, conversation_id: int, title: str, incoming: Sequence[Any], now: float
) -> tuple[dict[str, int], list[tuple[Provenance, dict[str, Any]]]]:
    """The rows of a placed thread for a conversation with no stored turns, for
    facts.insert_facts (so an import can write the new conversations of a batch together):
    (counts, rows). The same native id twice keeps the first; two turns sent as shown at one
    place: the first is shown, the next kept as another version."""
    counts = {"add": 0, "update": 0, "unchanged": 0, "version": 0, "show": 0}
    seen: set[tuple[str, str]] = set()
    taken: set[int] = set()
    stamped: list[tuple[Provenance, dict[str, Any]]] = []
    for turn in incoming:
        shown = turn.shown and turn.position not in taken
        if shown:
            taken.add(turn.position)
        if turn.native_id:
            if (turn.native_id, turn.role) in seen:
                counts["unchanged"] += 1
                continue
            seen.add((turn.native_id, turn.role))
        fields = {
            "kind": "turn",
            "title": title,
            "text": turn.text,
            "valid_at": now if turn.valid_at is None else turn.valid_at,
            "granularity": turn.granularity,
            "now": now,
            "conversation_id": conversation_id,
            "position": turn.position,
            "role": turn.role,
            "native_id": turn.native_id,
            "markdown": turn.markdown,
            "shown": shown,
        }
        stamped.append((restamp(prov, turn.native_id or title), fields))
        counts["add" if shown else "version"] += 1
    return counts, stamped


async def _refresh(conn: aiosqlite.Connection, row: aiosqlite.Row, turn: Any, now: float) -> bool:
    """Bring a matched row to the incoming turn's text, Markdown, place and shown flag."""
    text_changed = row["text"] != turn.text
    md_changed = turn.markdown is not None and row["markdown"] != turn.markdown
    moved = row["position"] != turn.position or bool(row["shown"]) != turn.shown
    if not (text_changed or md_changed or moved):
        return False
    await conn.execute(
        "UPDATE facts SET text = :text, markdown = COALESCE(:markdown, markdown), search_text = :search_text, "
        "position = :position, shown = :shown, updated_at = CASE WHEN :changed THEN :now ELSE updated_at END "
        "WHERE id = :id",
        {
            "text": turn.text,
            "markdown": turn.markdown,
            "search_text": search_forms("", turn.text)["search_text"],
            "position": turn.position,
            "shown": int(turn.shown),
            "changed": int(text_changed or md_changed),
            "now": now,
            "id": row["id"],
        },
    )
    return bool(text_changed or md_changed or moved)


def number(rows: Sequence[Any]) -> list[dict[str, Any]]:
    """Rows of one conversation in store order (each with position, valid_at, shown) -> the shown
    ones in order, each as {"row", "version", "versions", "others"}: its number among the
    versions at its place (1-based, by valid_at, then store order), how many there are, and the
    other rows in that order."""
    at: dict[int, list[tuple[float, int, Any]]] = {}
    for n, r in enumerate(rows):
        at.setdefault(r["position"], []).append((r["valid_at"], n, r))
    out = []
    for position in sorted(at):
        group = [r for _, _, r in sorted(at[position], key=lambda x: (x[0], x[1]))]
        k = next((k for k, r in enumerate(group) if r["shown"]), None)
        if k is None:
            continue  # versions of an abandoned branch beyond the branch shown: kept, not shown
        out.append({"row": group[k], "version": k + 1, "versions": len(group), "others": group[:k] + group[k + 1 :]})
    return out
