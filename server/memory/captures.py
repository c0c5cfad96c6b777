"""Chat captures: a conversation upsert keyed by the normalised page URL (+ the site id).

The content script re-sends the whole visible thread as it changes, and the page it names may
be wrong (the URL follows `history.pushState`, so a capture of one chat can arrive under
another's URL). `plan()` decides, without I/O and in one pass (O(n log n) over stored +
incoming), what each incoming turn does. A turn is matched to a stored one in this order:
  1. native id: the stored turn with the same (native_id, role) — wherever it is;
  2. content: the first stored turn after the last match with the same (role, text);
  3. place: the stored turn right after the last match (before the first match, counted back
     from it; with no match at all, the same index).
and then:
  matched by id, same text or stored extends it      -> unchanged
  matched by id, other text                          -> updated (the site says it is that turn)
  matched by id to a version not shown               -> shown (the person switched back to it)
  matched by content                                 -> unchanged
  by place: stored text extends it, same role,
            ids do not disagree                      -> unchanged (a late, shorter re-send
                                                        never shrinks a turn)
  by place: it extends the stored text, same role,
            the stored turn is the LAST one and has
            no native id                             -> updated (a reply still growing)
  by place: same role, other text (or another id),
            after a turn that matched               -> a new VERSION of that turn, shown in
                                                        its place (a regenerated reply, an
                                                        edited message); an earlier version
                                                        with that text or id is shown again
  by place: anything else                            -> added at the end (never replaces: a
                                                        thread that shares nothing with the
                                                        stored one may be another chat's,
                                                        sent under this URL after pushState)
  no stored turn at that place                       -> added (before the first stored turn
                                                        when it precedes the first match,
                                                        else after the last; order kept)
When a capture makes a new version, the stored turns after its last place stop being shown
(an edited message drops the turns after it on the site; they are kept as versions). Only the
versions shown take part in matching by content and place. So a stored turn with a
native id is only ever updated by a turn with the same id; a reply re-sent as it grows updates
one turn and never adds fragments; a changed turn never becomes a turn after it, and nothing
stored is lost: every version is kept (server.memory.versions numbers them), re-sends stay
idempotent. Forgotten turns still take part in matching (a re-sent forgotten turn stays
forgotten; an undo restores it in its place, without duplicates).
"""

from __future__ import annotations

import bisect
import dataclasses
import json
import time
from collections.abc import Sequence
from typing import Any

import aiosqlite

from server import activity, ages, limits
from server.governance.policy import PolicyOwner
from server.memory.facts import (
    MAX_TITLE_CHARS,
    clean_text,
    insert_fact,
)
from server.probe_cache import ProbeCache
from server.provenance import Provenance, stamp
from server.searchtext import search_forms
from server.store.db import Store
from server.textcaps import cap, cap_markdown

MAX_TURN_CHARS = limits.TURN_CHARS
MAX_MARKDOWN_CHARS = limits.MARKDOWN_CHARS
MAX_TURNS = limits.TURNS
MAX_BODY = 8 * 1024 * 1024 - 1024
COALESCE_SECONDS = 300.0  # captures of one conversation within this share one activity row
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
    valid_at: float | None = None  # the turn's own time (an import); None: the time it is stored
    granularity: str = ages.INSTANT
    markdown: str | None = None  # the turn as GFM (code fenced, tables, math as TeX)
    position: int | None = None  # its place, when the sender knows it (an import of a tree)
    shown: bool = True  # False: a version not on the branch shown (an import of a tree)


@dataclasses.dataclass(frozen=True)
class Op:
    action: str  # add | update | unchanged | version (new, shown at `position`) | show
    incoming: int  # index into the incoming turns
    stored_id: int | None = None
    position: int | None = None


def plan(
    stored: Sequence[Stored], incoming: Sequence[Incoming], hidden: Sequence[Stored] = (), next_free: int = 0
) -> list[Op]:
    """Decide, without touching the store, what each incoming turn does (see module doc).
    `stored`: the versions shown, in order; `hidden`: the other versions; `next_free`: a
    position above every stored row."""
    # a site's id may name an exchange (Gemini's container, ChatGPT's turn key hold the prompt
    # and its reply), so a turn is identified by its id together with its role
    by_native: dict[tuple[str, str], int] = {}
    by_content: dict[tuple[str, str], list[int]] = {}
    for j, s in enumerate(stored):
        if s.native_id:
            by_native.setdefault((s.native_id, s.role), j)
        by_content.setdefault((s.role, s.text), []).append(j)
    other_native = {(h.native_id, h.role): h for h in hidden if h.native_id}
    index_of = {s.position: j for j, s in enumerate(stored)}
    other_place = {(h.position, h.role, h.text): h for h in hidden}
    anchor = _anchor(incoming, by_native, by_content)
    used: set[int] = set()
    ops: list[Op] = []
    next_position = max([next_free, *((s.position + 1) for s in stored)])
    last = -1  # the stored index of the latest match
    k: int | None
    for i, turn in enumerate(incoming):
        k = by_native.get((turn.native_id, turn.role)) if turn.native_id else None
        if k is not None:
            if k in used:
                ops.append(Op("unchanged", i))  # the same turn twice in one capture: keep one
                continue
            used.add(k)
            last = max(last, k)
            s = stored[k]
            same = s.text == turn.text or s.text.startswith(turn.text)
            ops.append(Op("unchanged" if same and s.role == turn.role else "update", i, s.id))
            continue
        h = other_native.get((turn.native_id, turn.role)) if turn.native_id else None
        if h is not None:
            at = index_of.get(h.position)
            if at is not None:
                used.add(at)
                last = max(last, at)
            ops.append(Op("show", i, h.id, h.position))
            continue
        k = _next_after(by_content.get((turn.role, turn.text), []), last)
        if k is not None and k not in used and _ids_agree(stored[k], turn):
            used.add(k)
            last = k
            ops.append(Op("unchanged", i, stored[k].id))
            continue
        c = anchor[1] - (anchor[0] - i) if last < 0 else last + 1
        if c < 0 and stored:
            ops.append(Op("add", i, position=stored[0].position + c))
            continue
        if 0 <= c < len(stored) and c not in used:
            s = stored[c]
            if s.role == turn.role and _ids_agree(s, turn) and s.text.startswith(turn.text):
                used.add(c)
                last = c
                ops.append(Op("unchanged", i, s.id))
                continue
            if c == len(stored) - 1 and s.role == turn.role and s.native_id is None and turn.text.startswith(s.text):
                used.add(c)
                last = c
                ops.append(Op("update", i, s.id))
                continue
            if s.role == turn.role and last >= 0:
                used.add(c)
                last = c
                h = other_place.get((s.position, turn.role, turn.text))
                ops.append(Op("show", i, h.id, h.position) if h else Op("version", i, s.id, s.position))
                continue
        ops.append(Op("add", i, position=next_position))
        next_position += 1
    return ops


def _anchor(
    incoming: Sequence[Incoming], by_native: dict[tuple[str, str], int], by_content: dict[tuple[str, str], list[int]]
) -> tuple[int, int]:
    """(incoming index, stored index) of the first incoming turn found in the stored thread."""
    for i, turn in enumerate(incoming):
        if turn.native_id and (turn.native_id, turn.role) in by_native:
            return i, by_native[(turn.native_id, turn.role)]
        places = by_content.get((turn.role, turn.text))
        if places:
            return i, places[0]
    return 0, 0


def _next_after(places: Sequence[int], last: int) -> int | None:
    """The first stored index in `places` (ascending) after `last`."""
    j = bisect.bisect_right(places, last)
    return places[j] if j < len(places) else None


def _ids_agree(s: Stored, turn: Incoming) -> bool:
    return s.native_id is None or turn.native_id is None or s.native_id == turn.native_id


async def upsert(
    store: Store,
    cache: ProbeCache,
    policy: PolicyOwner,
    *,
    url: str,
    title: str,
    site: str,
    turns: list[dict[str, Any]],
) -> dict[str, int]:
    """POST /api/captures."""
    prov = stamp(url, title)
    await policy.require_collect(prov.source_host)
    incoming = [
        Incoming(
            t["role"],
            clean_text(t["text"], f"turns[{n}].text"),
            t.get("native_id") or None,
            markdown=_markdown(t.get("markdown")),
        )
        for n, t in enumerate(turns)
    ]
    title = cap(title.strip(), MAX_TITLE_CHARS, ellipsis=True)
    site = site.strip().lower()
    now = time.time()
    async with store.transaction() as conn:
        conversation_id, title = await conversation_row(conn, prov, site, title, now)
        counts, total = await write_turns(conn, prov, conversation_id, title, incoming, now)
        if counts["add"] or counts["update"] or counts["version"] or counts["show"]:
            await _record(conn, prov, conversation_id, total, counts, now)
    cache.invalidate_url(prov.source_url)
    return {
        "conversation_id": conversation_id,
        "added": counts["add"],
        "updated": counts["update"],
        "unchanged": counts["unchanged"],
        "versions": counts["version"],  # new versions of a stored turn (shown in its place)
        "switched": counts["show"],  # an earlier version shown again
    }


async def write_turns(
    conn: aiosqlite.Connection,
    prov: Provenance,
    conversation_id: int,
    title: str,
    incoming: Sequence[Incoming],
    now: float,
) -> tuple[dict[str, int], int]:
    """Apply `plan()` to a conversation inside the caller's transaction: (counts, stored turns)."""
    rows = await conn.execute_fetchall(
        "SELECT id, position, role, text, native_id, markdown, shown FROM facts WHERE conversation_id = ? "
        "ORDER BY position, valid_at, id",
        (conversation_id,),
    )
    stored = [Stored(r["id"], r["position"], r["role"], r["text"], r["native_id"]) for r in rows if r["shown"]]
    hidden = [Stored(r["id"], r["position"], r["role"], r["text"], r["native_id"]) for r in rows if not r["shown"]]
    stored_md = {r["id"]: (r["text"], r["markdown"]) for r in rows}
    next_free = max((r["position"] for r in rows), default=-1) + 1
    ops = plan(stored, incoming, hidden, next_free)
    rewritten = 0  # versions shown again with a new text (the site's id says it is that turn)
    for op in ops:
        turn = incoming[op.incoming]
        if op.action in ("add", "version"):
            if op.action == "version":
                await show_only(conn, conversation_id, op.position, None)
            await insert_fact(
                conn,
                stamp(prov.source_url, turn.native_id or title),
                kind="turn",
                title=title,
                text=turn.text,
                valid_at=now if turn.valid_at is None else turn.valid_at,
                granularity=turn.granularity,
                now=now,
                conversation_id=conversation_id,
                position=op.position,
                role=turn.role,
                native_id=turn.native_id,
                markdown=turn.markdown,
            )
        elif op.action == "update" or (op.action == "show" and stored_md[op.stored_id or 0][0] != turn.text):
            rewritten += op.action == "show"
            await conn.execute(
                "UPDATE facts SET text = :text, role = :role, native_id = COALESCE(:native_id, native_id), "
                "markdown = :markdown, search_text = :search_text, updated_at = :now WHERE id = :id",
                {
                    "text": turn.text,
                    "role": turn.role,
                    "native_id": turn.native_id,
                    "now": now,
                    "markdown": turn.markdown,
                    "id": op.stored_id,
                    "search_text": search_forms("", turn.text)["search_text"],
                },
            )
        elif op.stored_id is not None and turn.markdown is not None:
            text, markdown = stored_md.get(op.stored_id, ("", None))
            if text == turn.text and markdown != turn.markdown:
                # the same text, its structure newly seen (a turn stored before Markdown was kept)
                await conn.execute("UPDATE facts SET markdown = ? WHERE id = ?", (turn.markdown, op.stored_id))
        if op.action == "show":
            await show_only(conn, conversation_id, op.position, op.stored_id)
    counts = {a: sum(1 for op in ops if op.action == a) for a in ("add", "update", "unchanged", "version", "show")}
    counts["update"] += rewritten
    if counts["version"] and ops:
        # an edited message: the site drops the turns after it, so the stored turns after the
        # capture's last place belong to the branch left behind — kept, no longer shown
        place = {s.id: s.position for s in stored}
        ends = max((op.position if op.position is not None else place.get(op.stored_id or -1, -1)) for op in ops)
        await conn.execute(
            "UPDATE facts SET shown = 0 WHERE conversation_id = ? AND shown = 1 AND position > ?",
            (conversation_id, ends),
        )
    return counts, len(stored) + counts["add"]


async def show_only(
    conn: aiosqlite.Connection, conversation_id: int, position: int | None, fact_id: int | None
) -> None:
    """Make `fact_id` the version shown at `position` (None: hide them all, a new one follows)."""
    await conn.execute(
        "UPDATE facts SET shown = (id IS ?) WHERE conversation_id = ? AND position = ? AND shown != (id IS ?)",
        (fact_id, conversation_id, position, fact_id),
    )


async def conversation_row(
    conn: aiosqlite.Connection, prov: Provenance, site: str, title: str, now: float, created_at: float | None = None
) -> tuple[int, str]:
    """The conversation row (created on first capture); a new non-empty title renames it.
    `created_at` is the conversation's own start (an import); an earlier one replaces a later."""
    row = await (
        await conn.execute(
            "SELECT id, source_ref FROM conversations WHERE source_url = ? AND site = ?", (prov.source_url, site)
        )
    ).fetchone()
    if row is None:
        cur = await conn.execute(
            "INSERT INTO conversations(site, source_url, source_host, source_ref, created_at, updated_at) "
            "VALUES (:site, :source_url, :source_host, :source_ref, :created_at, :now)",
            {"site": site, **prov.columns(), "now": now, "created_at": now if created_at is None else created_at},
        )
        assert cur.lastrowid is not None
        return cur.lastrowid, title
    conversation_id: int = row["id"]
    if created_at is not None:
        await conn.execute(
            "UPDATE conversations SET created_at = MIN(created_at, ?) WHERE id = ?", (created_at, conversation_id)
        )
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
        {
            "title": title,
            "search_title": search_forms(title, "")["search_title"],
            "source_ref": renamed.source_ref,
            "id": conversation_id,
        },
    )
    return conversation_id, title


async def new_conversations(
    conn: aiosqlite.Connection, rows: Sequence[tuple[Provenance, str, float]], now: float
) -> dict[tuple[str, str], int]:
    """Conversations not yet stored, each (its Provenance, site, created_at), as conversation_row
    creates them but in one statement: {(source_url, site): id}."""
    out: dict[tuple[str, str], int] = {}
    for start in range(0, len(rows), 5000):
        chunk = rows[start : start + 5000]
        values = ", ".join(["(?, ?, ?, ?, ?, ?)"] * len(chunk))
        cur = await conn.execute(
            "INSERT INTO conversations(site, source_url, source_host, source_ref, created_at, updated_at) "  # noqa: S608 - placeholders only
            f"VALUES {values} RETURNING id, source_url, site",
            [v for p, site, at in chunk for v in (site, p.source_url, p.source_host, p.source_ref, at, now)],
        )
        out.update({(r["source_url"], r["site"]): r["id"] for r in await cur.fetchall()})
    return out


async def _record(
    conn: aiosqlite.Connection,
    prov: Provenance,
    conversation_id: int,
    total: int,
    counts: dict[str, int],
    now: float,
) -> None:
    """One activity row per conversation while it streams: a capture within COALESCE_SECONDS of
    the previous capture of the same conversation (and nothing logged between) updates that row."""
    summary = f"Chat on {prov.source_host}: {total} turns"
    last = await (
        await conn.execute("SELECT id, kind, at, detail, invalid_at FROM activity ORDER BY id DESC LIMIT 1")
    ).fetchone()
    fresh = last is not None and last["invalid_at"] is None and now - last["at"] < COALESCE_SECONDS
    if last is not None and fresh and last["kind"] == "capture":
        detail = json.loads(last["detail"])
        if detail.get("conversation_id") == conversation_id:
            detail["added"] = detail.get("added", 0) + counts["add"]
            detail["updated"] = detail.get("updated", 0) + counts["update"] + counts["version"]
            await conn.execute(
                "UPDATE activity SET at = ?, summary = ?, detail = ? WHERE id = ?",
                (now, summary, json.dumps(detail), last["id"]),
            )
            return
    await activity.record(
        conn,
        "capture",
        summary,
        source_url=prov.source_url,
        source_host=prov.source_host,
        detail={
            "conversation_id": conversation_id,
            "added": counts["add"],
            "updated": counts["update"] + counts["version"],
        },
    )


def _markdown(value: Any) -> str | None:
    """A turn's Markdown as stored: cut to MAX_MARKDOWN_CHARS without leaving a code fence open."""
    if not isinstance(value, str) or not value.strip():
        return None
    return cap_markdown(value, MAX_MARKDOWN_CHARS)
