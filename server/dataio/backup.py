"""Backup and restore of the database file (the data side of `wherefrom backup` and `restore`,
server/commands/backup.py).

`backup()` opens the database itself, read-only, beside the running server (WAL lets a second
connection read one consistent snapshot while the server keeps writing), and copies it with
SQLite's online backup API in a single step — one read transaction, so the copy is the database
as of one instant and is never restarted by the server's writes. The copy is written 0600 in a
fresh 0700 folder made beside FILE (nobody else can plant a link in it), checked (`PRAGMA
integrity_check`) and hard-linked into place, which fails on any existing name: an existing FILE,
or a link at its name, is refused and nothing is ever written through a link.

`restore()` refuses a file that fails integrity_check, that is not a Wherefrom database, whose
schema is newer than this build's migrations, or whose schema (sqlite_master) is not exactly what
those migrations make in a fresh database (server.store.schema_check: an added trigger, a
missing table); then while the caller's `serving` check names a
server holding the database, and while any process holds it open (an exclusive-lock probe,
which also catches a server on another port). The current database (with its -wal and -shm) is
kept aside as wherefrom.db.before-restore-<time>, then the backup is copied in.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from server.store.schema_check import differences_in, newer_migrations

DB_NAME = "wherefrom.db"


class RefusedError(Exception):
    pass


def backup(db: Path, dest: Path) -> dict[str, Any]:
    """Copy `db` to `dest` through the backup API from a read-only connection."""
    if not db.exists():
        raise RefusedError(f"no database at {db}")
    if os.path.lexists(dest):
        raise RefusedError(f"{dest} exists; choose a new file name")
    work = Path(tempfile.mkdtemp(prefix=".wherefrom-backup-", dir=dest.parent))  # 0700, ours alone
    try:
        return _backup_via(db, dest, work / "copy.db")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _backup_via(db: Path, dest: Path, tmp: Path) -> dict[str, Any]:
    started = time.perf_counter()
    src = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        os.close(fd)
        dst = sqlite3.connect(tmp)
        try:
            src.backup(dst)  # pages=-1: every page in one step, one read snapshot
            dst.execute("PRAGMA journal_mode=DELETE")
            copied = time.perf_counter()
            problems = integrity(dst)
        finally:
            dst.close()
    finally:
        src.close()
    if problems:
        raise RefusedError(f"the copy failed integrity_check: {problems[:3]}")
    try:
        os.link(tmp, dest, follow_symlinks=False)  # never replaces a name, a link's included
    except FileExistsError:
        raise RefusedError(f"{dest} exists; choose a new file name") from None
    done = time.perf_counter()
    return {
        "bytes": dest.stat().st_size,
        "seconds": done - started,
        "copy_seconds": copied - started,
        "check_seconds": done - copied,
    }


def integrity(con: sqlite3.Connection) -> list[str]:
    rows = [r[0] for r in con.execute("PRAGMA integrity_check")]
    return [] if rows == ["ok"] else rows


def check_restorable(path: Path) -> str:
    """The backup's schema version, or RefusedError saying why it cannot be restored."""
    if not path.is_file():
        raise RefusedError(f"{path} is not a file")
    with path.open("rb") as fh:
        if fh.read(16) != b"SQLite format 3\x00":
            raise RefusedError(f"{path} is not an SQLite database")
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        problems = integrity(con)
        if problems:
            raise RefusedError(f"{path} fails integrity_check: {problems[:3]}")
        try:
            names = {r[0] for r in con.execute("SELECT name FROM schema_migrations")}
        except sqlite3.DatabaseError:
            raise RefusedError(f"{path} is not a Wherefrom database (no schema_migrations)") from None
        newer = newer_migrations(names)
        if newer:
            raise RefusedError(
                f"{path} has a newer schema than this build ({', '.join(newer)}); update Wherefrom first"
            )
        wrong = differences_in(con)
        if wrong:
            more = f"; and {len(wrong) - 5} more" if len(wrong) > 5 else ""
            raise RefusedError(f"{path} is not a database this build made ({'; '.join(wrong[:5])}{more}); not restored")
    except sqlite3.DatabaseError as err:
        raise RefusedError(f"{path} fails integrity_check: {err}") from None
    finally:
        con.close()
    return max(names) if names else ""


def database_in_use(db: Path) -> str | None:
    """Why the database is held open by another process (an exclusive-lock probe), else None."""
    if not db.exists():
        return None
    con = sqlite3.connect(db, timeout=0, isolation_level=None)
    try:
        con.execute("PRAGMA locking_mode=EXCLUSIVE")
        con.execute("BEGIN EXCLUSIVE")
        con.execute("ROLLBACK")
    except sqlite3.OperationalError:
        return "another process has the database open (a server on another port?); stop it first"
    finally:
        con.close()
    return None


def restore(data_dir: Path, source: Path, serving: Callable[[Path], str | None]) -> dict[str, Any]:
    """Copy `source` in as the database of `data_dir`; `serving(db)` says why a running server
    holds it (or None)."""
    db = data_dir / DB_NAME
    schema_version = check_restorable(source)
    busy = serving(db) or database_in_use(db)
    if busy:
        raise RefusedError(busy)
    aside = None
    if db.exists():
        stamp = time.strftime("%Y%m%d-%H%M%S")
        aside = db.with_name(f"{DB_NAME}.before-restore-{stamp}")
        for suffix in ("", "-wal", "-shm"):
            f = db.with_name(DB_NAME + suffix)
            if f.exists():
                os.replace(f, aside.with_name(aside.name + suffix))
    data_dir.mkdir(parents=True, exist_ok=True)
    tmp = db.with_name(DB_NAME + ".restoring")
    tmp.unlink(missing_ok=True)
    os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    src = sqlite3.connect(f"file:{source}?mode=ro", uri=True)
    dst = sqlite3.connect(tmp)
    try:
        src.backup(dst)
    finally:
        dst.close()
        src.close()
    os.replace(tmp, db)
    return {"schema": schema_version, "aside": str(aside) if aside else None}
