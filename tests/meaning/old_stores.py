"""Stores as an older build left them, for the upgrade tests: the migrations before a given one."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

from server.provenance import stamp
from server.store.db import _statements, migration_files


def migrated_before(db: Path, first_left_out: str) -> sqlite3.Connection:
    """A new database at `db` holding every migration before `first_left_out` (its name, e.g.
    "0011"), recorded as applied; open, for the caller to fill and close."""
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE schema_migrations (name TEXT PRIMARY KEY, applied_at REAL NOT NULL)")
    for name, sql in migration_files():
        if name >= first_left_out:
            break
        for statement in _statements(sql):
            con.execute(statement)
        con.execute("INSERT INTO schema_migrations VALUES (?, ?)", (name, time.time()))
    return con


def add_notes(con: sqlite3.Connection, notes: list[tuple[str, str, str]]) -> list[int]:
    """Notes (url, ref, text) written as that build wrote them, through the provenance stamp; their
    ids, in order."""
    now = time.time()
    rows = []
    for url, ref, text in notes:
        p = stamp(url, ref)
        rows.append((text, p.source_url, p.source_host, p.source_ref, now, now, now))
    first = con.execute("SELECT COALESCE(MAX(id), 0) FROM facts").fetchone()[0]
    con.executemany(
        "INSERT INTO facts(kind, title, text, source_url, source_host, source_ref, valid_at, granularity, "
        "created_at, updated_at) VALUES ('note', '', ?, ?, ?, ?, ?, 'instant', ?, ?)",
        rows,
    )
    return [int(r[0]) for r in con.execute("SELECT id FROM facts WHERE id > ? ORDER BY id", (first,))]
