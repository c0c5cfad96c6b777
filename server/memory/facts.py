"""Facts: notes and clips (a selection), and the shape every fact has in an answer.

A write is: stamp the URL (400 on a bad one), gate on the host's mode (403 unless collect),
then one transaction holding the row and its activity row, then drop the page's probe answer.
Captured chat turns are facts too (server.memory.captures) and use the same INSERT.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import sqlite3
import time
from collections.abc import Sequence
from typing import Any

import aiosqlite

from server import activity, ages, limits
from server.errors import BadRequest
from server.governance.policy import PolicyOwner
from server.probe_cache import ProbeCache
from server.provenance import Provenance, stamp
from server.searchtext import search_forms
from server.store.db import Store
from server.textcaps import cap, cap_markdown

MAX_TEXT_CHARS = limits.NOTE_CHARS
MAX_TITLE_CHARS = limits.STORED_TITLE_CHARS  # a page title is cut (on a character boundary), never refused
VIA = ("mcp",)  # who else may write a note: an agent through `wherefrom mcp --allow-writes`
ANSWER_TEXT_CHARS = 600  # a fact's text in page-match tiers and search results
ANSWER_MARKDOWN_CHARS = 20_000  # a turn's Markdown in those answers (cut by cap_markdown)

INSERT_FACT = """
INSERT INTO facts(kind, title, text, source_url, source_host, source_ref, valid_at, granularity,
                  created_at, updated_at, conversation_id, position, role, native_id,
                  search_title, search_text, markdown, via, shown)
VALUES (:kind, :title, :text, :source_url, :source_host, :source_ref, :valid_at, :granularity,
        :created_at, :updated_at, :conversation_id, :position, :role, :native_id,
        :search_title, :search_text, :markdown, :via, :shown)
"""


def fact_row(
    prov: Provenance,
    *,
    kind: str,
    title: str,
    text: str,
    valid_at: float,
    granularity: str,
    now: float,
    conversation_id: int | None = None,
    position: int | None = None,
    role: str | None = None,
    native_id: str | None = None,
    markdown: str | None = None,
    via: str | None = None,
    shown: bool = True,
) -> dict[str, Any]:
    """The parameters of INSERT_FACT; the source columns come only from a Provenance. `via`:
    who wrote it when not the person (VIA: an agent through MCP)."""
    return {
        "kind": kind,
        "title": title,
        "text": text,
        **prov.columns(),
        "valid_at": valid_at,
        "granularity": granularity,
        "created_at": now,
        "updated_at": now,
        "conversation_id": conversation_id,
        "position": position,
        "role": role,
        "native_id": native_id,
        "markdown": markdown,
        "via": via,
        "shown": int(shown),
        **search_forms(title, text),
    }


async def insert_fact(conn: aiosqlite.Connection, prov: Provenance, **fields: Any) -> int:
    cur = await conn.execute(INSERT_FACT, fact_row(prov, **fields))
    assert cur.lastrowid is not None
    return cur.lastrowid


FACT_COLUMNS = tuple(c.strip() for c in INSERT_FACT.split("(", 1)[1].split(")", 1)[0].split(","))
# one statement's rows: as many as its parameters allow (32,766 from SQLite 3.32 on, else 999)
ROWS_PER_INSERT = (32_766 if sqlite3.sqlite_version_info >= (3, 32) else 999) // len(FACT_COLUMNS)


async def insert_facts(conn: aiosqlite.Connection, stamped: Sequence[tuple[Provenance, dict[str, Any]]]) -> None:
    """Many facts, each (its Provenance, the other fields of insert_fact), in as few statements
    as the parameter limit allows: rows exactly as insert_fact writes them (fact_row), built off
    the event loop in one worker call. A statement of many rows updates the FTS5 index once;
    one statement per row (executemany too) flushes FTS5's pending terms at every statement,
    about 2.5x the work of storing them."""
    if not stamped:
        return
    params = await asyncio.to_thread(_flat_rows, stamped)
    width = len(FACT_COLUMNS)
    for start in range(0, len(params), ROWS_PER_INSERT * width):
        chunk = params[start : start + ROWS_PER_INSERT * width]
        groups = ", ".join(["(" + ", ".join("?" * width) + ")"] * (len(chunk) // width))
        sql = f"INSERT INTO facts({', '.join(FACT_COLUMNS)}) VALUES {groups}"  # noqa: S608 - placeholders only
        await conn.execute(sql, chunk)


def _flat_rows(stamped: Sequence[tuple[Provenance, dict[str, Any]]]) -> list[Any]:
    out: list[Any] = []
    for prov, fields in stamped:
        row = fact_row(prov, **fields)
        out.extend(row[c] for c in FACT_COLUMNS)
    return out


def clean_text(text: str, field: str) -> str:
    if not text.strip():
        raise BadRequest(f"{field} is empty", code="bad_value", field=f"body.{field}")
    return text


def day_valid_at(day: str) -> float:
    """A day-granular fact's valid_at: local noon of that day (the renderer reads only the date)."""
    try:
        d = dt.date.fromisoformat(day)
    except ValueError:
        raise BadRequest("valid_day must be a date YYYY-MM-DD", code="bad_value", field="body.valid_day") from None
    if len(day) != 10 or not 1970 <= d.year <= 9999:
        raise BadRequest("valid_day must be a date YYYY-MM-DD from 1970 on", code="bad_value", field="body.valid_day")
    try:
        return dt.datetime(d.year, d.month, d.day, 12, 0).astimezone().timestamp()
    except (OverflowError, OSError, ValueError):
        raise BadRequest("valid_day is out of range", code="bad_value", field="body.valid_day") from None


async def write_fact(
    store: Store,
    cache: ProbeCache,
    policy: PolicyOwner,
    *,
    kind: str,
    url: str,
    title: str,
    text: str,
    valid_day: str | None = None,
    via: str | None = None,
) -> int:
    """POST /api/notes and /api/clips: one fact, one activity row, one transaction."""
    prov = stamp(url, title)
    await policy.require_collect(prov.source_host)
    text = clean_text(text, "text")
    title = cap(title.strip(), MAX_TITLE_CHARS, ellipsis=True)
    now = time.time()
    if valid_day is None:
        valid_at, granularity = now, ages.INSTANT
    else:
        valid_at, granularity = day_valid_at(valid_day), ages.DAY
    async with store.transaction() as conn:
        fact_id = await insert_fact(
            conn, prov, kind=kind, title=title, text=text, valid_at=valid_at, granularity=granularity, now=now, via=via
        )
        label = ("Note" if kind == "note" else "Clip") + (f" (via {via})" if via else "")
        await activity.record(
            conn,
            kind,
            f"{label} on {prov.source_host}: {cap(text, 80, ellipsis=True)}",
            source_url=prov.source_url,
            source_host=prov.source_host,
            detail={"id": fact_id},
        )
    cache.invalidate_url(prov.source_url)
    return fact_id


# the columns fact_answer reads, as every reader of answered facts selects them (alias f)
ANSWER_COLUMNS = (
    "f.id, f.kind, f.title, f.text, f.source_url, f.source_host, f.source_ref, f.valid_at, f.granularity, "
    "f.role, f.conversation_id, f.markdown, f.via"
)


def fact_answer(row: aiosqlite.Row, *, now: float | None = None) -> dict[str, Any]:
    """A fact as every answer shows it: provenance, kind and age at the fact's granularity."""
    out: dict[str, Any] = {
        "id": row["id"],
        "kind": row["kind"],
        "text": cap(row["text"], ANSWER_TEXT_CHARS, ellipsis=True),
        "title": row["title"],
        "source_url": row["source_url"],
        "source_host": row["source_host"],
        "source_ref": row["source_ref"],
        "age": ages.age(row["valid_at"], row["granularity"], now=now),
    }
    if "via" in row.keys() and row["via"]:
        out["via"] = row["via"]  # written by an agent (MCP), not the person
    if row["kind"] == "turn":
        out["role"] = row["role"]
        out["conversation_id"] = row["conversation_id"]
        out["markdown"] = cap_markdown(turn_markdown(row), ANSWER_MARKDOWN_CHARS)
    return out


def turn_markdown(row: aiosqlite.Row) -> str:
    """A turn's Markdown; a row stored before turns had Markdown answers its text."""
    keys = row.keys()
    md = row["markdown"] if "markdown" in keys else None
    return md if isinstance(md, str) and md else str(row["text"])
