"""Is a database's schema exactly the one this build's migrations make? `differences(path)`
compares the file's sqlite_master (tables, indexes, triggers, views: their names and SQL) with
a fresh in-memory database migrated through the same migrations the file records, and names
every object that is extra (an added trigger that undoes forgetting), missing (a file holding
only schema_migrations) or changed. Store.open refuses such a database (StoreError: `serve`
exits 1) and restore refuses such a backup. SQLite's own internal objects (sqlite_*) are not
compared.
"""

from __future__ import annotations

import sqlite3
from importlib import resources
from pathlib import Path

MIGRATIONS_TABLE = "CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY, applied_at REAL NOT NULL)"


def migration_files() -> list[tuple[str, str]]:
    folder = resources.files("server.store") / "migrations"
    items = [(p.name.removesuffix(".sql"), p.read_text("utf-8")) for p in folder.iterdir() if p.name.endswith(".sql")]
    return sorted(items)


def statements(sql: str) -> list[str]:
    """Split a migration into statements (sqlite3.complete_statement knows about triggers)."""
    out, buf = [], ""
    for line in sql.splitlines(keepends=True):
        buf += line
        if sqlite3.complete_statement(buf):
            if buf.strip():
                out.append(buf.strip())
            buf = ""
    if buf.strip():
        out.append(buf.strip())
    return out


Objects = dict[tuple[str, str], str]  # (type, name) -> SQL with whitespace folded


def objects(con: sqlite3.Connection) -> Objects:
    rows = con.execute("SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite\\_%' ESCAPE '\\'")
    return {(t, n): " ".join((sql or "").split()) for t, n, sql in rows}


def expected(names: set[str]) -> Objects:
    """The schema a fresh database has after the migrations `names` (in name order)."""
    con = sqlite3.connect(":memory:")
    try:
        con.execute(MIGRATIONS_TABLE)
        for name, sql in migration_files():
            if name in names:
                for statement in statements(sql):
                    con.execute(statement)
        return objects(con)
    finally:
        con.close()


NEWER = "written by a newer Wherefrom"


def newer_migrations(names: set[str]) -> list[str]:
    """The recorded migrations this build does not know: a newer build wrote the database (its
    data may be in a shape this build misreads, with no schema object changed)."""
    return sorted(names - {name for name, _ in migration_files()})


def differences_in(con: sqlite3.Connection) -> list[str]:
    """What in `con`'s schema a fresh database does not have, lacks or has otherwise; first of all,
    migrations of a newer build."""
    try:
        names = {r[0] for r in con.execute("SELECT name FROM schema_migrations")}
    except sqlite3.DatabaseError:
        return ["no schema_migrations table: not a Wherefrom database"]
    newer = newer_migrations(names)
    if newer:
        return [f"{NEWER} (migrations {', '.join(newer)})"]
    known = [name for name, _ in migration_files()]
    gaps = [n for n in known[: max((known.index(n) + 1 for n in names if n in known), default=0)] if n not in names]
    if gaps:
        return [f"migrations recorded out of order (missing {', '.join(gaps)})"]
    have, want = objects(con), expected(names & set(known))
    out = [f"extra {t} {n}" for (t, n) in sorted(have.keys() - want.keys())]
    out += [f"missing {t} {n}" for (t, n) in sorted(want.keys() - have.keys())]
    out += [f"changed {t} {n}" for (t, n) in sorted(have.keys() & want.keys()) if have[(t, n)] != want[(t, n)]]
    return out


def differences(path: Path) -> list[str]:
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return differences_in(con)
    finally:
        con.close()
