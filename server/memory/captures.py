"""Chat captures: a conversation upsert keyed by the normalised page URL (+ the site id).

The content script re-sends the whole visible thread as it changes. Each incoming turn is
matched to a stored one — by `native_id` when the site gives one, else by position (after
aligning the incoming window on a turn both sides share) — and then:
  same text                        -> unchanged
  stored text is a prefix of it    -> updated (a reply that grew while streaming)
  incoming is a prefix of stored   -> unchanged (a late, shorter re-send never shrinks a turn)
  other text at that place         -> updated (the page is the truth for that place)
  no stored turn at that place     -> added (before the first or after the last, order kept)
So a reply re-sent as it grows updates one turn and never adds fragments. Forgotten turns
still take part in matching (a re-sent forgotten turn stays forgotten; an undo restores it
in its place, without duplicates).
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Sequence
from typing import Any

import aiosqlite

from server import activity, ages, limits
from server.governance.policy import PolicyOwner
from server.governance.visibility import visible
from server.memory.facts import (
    MAX_TITLE_CHARS,
    clean_text,
    insert_fact,
    search_forms,
    turn_markdown,
)
from server.probe_cache import ProbeCache
from server.provenance import Provenance, stamp
from server.store.db import Store
from server.textcaps import cap, cap_markdown
from server.urls import normalise_url

MAX_TURN_CHARS = limits.TURN_CHARS
MAX_MARKDOWN_CHARS = limits.MARKDOWN_CHARS
MAX_TURNS = limits.TURNS
MAX_BODY = 8 * 1024 * 1024 - 1024
COALESCE_SECONDS = 300.0     # captures of one conversation within this share one activity row
ROLES = ("user", "assistant", "system", "tool")


@dataclasses.dataclass(frozen=True)
class Stored:
    id: int
    position: int
    role: str
    text: str
    native_id: str | None


@dataclasses.dataclass(frozen=True)
class Incoming:
    role: str
    text: str
    native_id: str | None = None
    markdown: str | None = None


@dataclasses.dataclass(frozen=True)
class Op:
    action: str          # add | update | unchanged
    incoming: int        # index into the incoming turns
    stored_id: int | None = None
    position: int | None = None


def plan(stored: Sequence[Stored], incoming: Sequence[Incoming]) -> list[Op]:
    """Decide, without touching the store, what each incoming turn does (see module doc)."""
    # a site's id may name an exchange (Gemini's container, ChatGPT's turn key hold the prompt
    # and its reply), so a turn is identified by its id together with its role
    by_native = {(s.native_id, s.role): k for k, s in enumerate(stored) if s.native_id}
    offset = _offset(stored, incoming, by_native)
    used: set[int] = set()
    ops: list[Op] = []
    next_position = (max(s.position for s in stored) + 1) if stored else 0
    for i, turn in enumerate(incoming):
        k: int | None = None
        if turn.native_id and (turn.native_id, turn.role) in by_native:
            k = by_native[(turn.native_id, turn.role)]
        elif 0 <= i + offset < len(stored):
            k = i + offset
        if k is not None and k in used:
            ops.append(Op("unchanged", i))  # the same turn twice in one capture: keep one
            continue
        if k is not None:
            used.add(k)
            s = stored[k]
            same = s.text == turn.text or s.text.startswith(turn.text)
            if same and s.role == turn.role and (turn.native_id is None or turn.native_id == s.native_id):
                ops.append(Op("unchanged", i, s.id))
            else:
                ops.append(Op("update", i, s.id))
            continue
        c = i + offset
        if c < 0 and stored:
            ops.append(Op("add", i, position=stored[0].position + c))
        else:
            ops.append(Op("add", i, position=next_position))
            next_position += 1
    return ops


def _offset(stored: Sequence[Stored], incoming: Sequence[Incoming], by_native: dict[tuple[str, str], int]) -> int:
    """Where the incoming window sits in the stored thread (stored index - incoming index)."""
    for i, turn in enumerate(incoming):
        if turn.native_id and (turn.native_id, turn.role) in by_native:
            return by_native[(turn.native_id, turn.role)] - i
    for i, turn in enumerate(incoming):
        places = [k for k, s in enumerate(stored) if s.role == turn.role and s.text == turn.text]
        if places:
            return min(places, key=lambda k: abs(k - i)) - i
    return 0


async def upsert(
    store: Store, cache: ProbeCache, policy: PolicyOwner, *, url: str, title: str, site: str,
    turns: list[dict[str, Any]],
) -> dict[str, int]:
    """POST /api/captures."""
    prov = stamp(url, title)
    await policy.require_collect(prov.source_host)
    incoming = [
        Incoming(t["role"], clean_text(t["text"], f"turns[{n}].text"), t.get("native_id") or None,
                 _markdown(t.get("markdown")))
        for n, t in enumerate(turns)
    ]
    title = cap(title.strip(), MAX_TITLE_CHARS, ellipsis=True)
    site = site.strip().lower()
    now = time.time()
    async with store.transaction() as conn:
        conversation_id, title = await _conversation(conn, prov, site, title, now)
        rows = await conn.execute_fetchall(
            "SELECT id, position, role, text, native_id, markdown FROM facts WHERE conversation_id = ? ORDER BY position",
            (conversation_id,),
        )
        stored = [Stored(r["id"], r["position"], r["role"], r["text"], r["native_id"]) for r in rows]
        stored_md = {r["id"]: r["markdown"] for r in rows}
        ops = plan(stored, incoming)
        for op in ops:
            turn = incoming[op.incoming]
            if op.action == "add":
                await insert_fact(
                    conn, stamp(prov.source_url, turn.native_id or title), kind="turn", title=title,
                    text=turn.text, valid_at=now, granularity=ages.INSTANT, now=now,
                    conversation_id=conversation_id, position=op.position, role=turn.role,
                    native_id=turn.native_id, markdown=turn.markdown,
                )
            elif op.action == "update":
                await conn.execute(
                    "UPDATE facts SET text = :text, role = :role, native_id = COALESCE(:native_id, native_id), "
                    "markdown = :markdown, search_text = :search_text, updated_at = :now WHERE id = :id",
                    {"text": turn.text, "role": turn.role, "native_id": turn.native_id, "now": now,
                     "markdown": turn.markdown, "id": op.stored_id,
                     "search_text": search_forms("", turn.text)["search_text"]},
                )
            elif (op.stored_id is not None and turn.markdown is not None
                  and stored_md.get(op.stored_id) != turn.markdown
                  and any(s.id == op.stored_id and s.text == turn.text for s in stored)):
                # the same text, its structure newly seen (a turn stored before Markdown was kept)
                await conn.execute("UPDATE facts SET markdown = ? WHERE id = ?", (turn.markdown, op.stored_id))
        counts = {a: sum(1 for op in ops if op.action == a) for a in ("add", "update", "unchanged")}
        if counts["add"] or counts["update"]:
            await _record(conn, prov, conversation_id, len(stored) + counts["add"], counts, now)
    cache.invalidate_url(prov.source_url)
    return {
        "conversation_id": conversation_id,
        "added": counts["add"],
        "updated": counts["update"],
        "unchanged": counts["unchanged"],
    }


async def _conversation(
    conn: aiosqlite.Connection, prov: Provenance, site: str, title: str, now: float
) -> tuple[int, str]:
    """The conversation row (created on first capture); a new non-empty title renames it."""
    row = await (await conn.execute(
        "SELECT id, source_ref FROM conversations WHERE source_url = ? AND site = ?", (prov.source_url, site)
    )).fetchone()
    if row is None:
        cur = await conn.execute(
            "INSERT INTO conversations(site, source_url, source_host, source_ref, created_at, updated_at) "
            "VALUES (:site, :source_url, :source_host, :source_ref, :now, :now)",
            {"site": site, **prov.columns(), "now": now},
        )
        assert cur.lastrowid is not None
        return cur.lastrowid, title
    conversation_id: int = row["id"]
    if not title or title == row["source_ref"]:
        await conn.execute("UPDATE conversations SET updated_at = ? WHERE id = ?", (now, conversation_id))
        return conversation_id, title or row["source_ref"]
    renamed = stamp(prov.source_url, title)
    await conn.execute(
        "UPDATE conversations SET source_ref = :source_ref, updated_at = :now WHERE id = :id",
        {"source_ref": renamed.source_ref, "now": now, "id": conversation_id},
    )
    await conn.execute(
        "UPDATE facts SET title = :title, search_title = :search_title, "
        "source_ref = CASE WHEN native_id IS NULL THEN :source_ref ELSE source_ref END "
        "WHERE conversation_id = :id",
        {"title": title, "search_title": search_forms(title, "")["search_title"],
         "source_ref": renamed.source_ref, "id": conversation_id},
    )
    return conversation_id, title


async def _record(
    conn: aiosqlite.Connection, prov: Provenance, conversation_id: int, total: int,
    counts: dict[str, int], now: float,
) -> None:
    """One activity row per conversation while it streams: a capture within COALESCE_SECONDS of
    the previous capture of the same conversation (and nothing logged between) updates that row."""
    summary = f"Chat on {prov.source_host}: {total} turns"
    last = await (await conn.execute(
        "SELECT id, kind, at, detail, invalid_at FROM activity ORDER BY id DESC LIMIT 1"
    )).fetchone()
    fresh = last is not None and last["invalid_at"] is None and now - last["at"] < COALESCE_SECONDS
    if last is not None and fresh and last["kind"] == "capture":
        detail = json.loads(last["detail"])
        if detail.get("conversation_id") == conversation_id:
            detail["added"] = detail.get("added", 0) + counts["add"]
            detail["updated"] = detail.get("updated", 0) + counts["update"]
            await conn.execute(
                "UPDATE activity SET at = ?, summary = ?, detail = ? WHERE id = ?",
                (now, summary, json.dumps(detail), last["id"]),
            )
            return
    await activity.record(
        conn, "capture", summary, source_url=prov.source_url, source_host=prov.source_host,
        detail={"conversation_id": conversation_id, "added": counts["add"], "updated": counts["update"]},
    )


async def conversation_turns(store: Store, url: str, site: str | None = None) -> dict[str, Any]:
    """GET /api/conversations: the live turns stored for a page, in order."""
    source_url = normalise_url(url)
    sql = (
        "SELECT f.role, f.text, f.markdown FROM conversations c JOIN facts f ON f.conversation_id = c.id "  # noqa: S608
        f"WHERE c.source_url = ? AND {visible('conversations', 'c')} AND {visible('facts', 'f')}"
    )
    params: list[Any] = [source_url]
    if site is not None:
        sql += " AND c.site = ?"
        params.append(site.strip().lower())
    rows = await store.fetchall(sql + " ORDER BY c.id, f.position", params)
    return {
        "url": source_url,
        "turns": [{"role": r["role"], "text": r["text"], "markdown": turn_markdown(r)} for r in rows],
    }


def _markdown(value: Any) -> str | None:
    """A turn's Markdown as stored: cut to MAX_MARKDOWN_CHARS without leaving a code fence open."""
    if not isinstance(value, str) or not value.strip():
        return None
    return cap_markdown(value, MAX_MARKDOWN_CHARS)
