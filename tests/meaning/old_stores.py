"""Stores as an older build left them, for the upgrade tests: the migrations before a given one."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

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
