"""`wherefrom backup FILE` and `wherefrom restore FILE` (the copying: server.dataio.backup).

Backup reads the database beside the running server; the server need not run. Restore needs
the server stopped: it refuses while a server on --port answers /api/health for this data dir
(and, in server.dataio.backup, while any process holds the database open). The next
`wherefrom serve` opens the restored database (and applies any older-schema migrations).
"""

from __future__ import annotations

import argparse
import sqlite3
from pathlib import Path
from typing import Any

from server.commands.client import Client, ServerUnavailable, fail
from server.dataio.backup import DB_NAME, RefusedError, backup, restore
from server.settings import default_data_dir


def add_commands(sub: Any, common: Any) -> None:
    b = sub.add_parser("backup", help="copy the database to FILE (SQLite online backup; the server may run)")
    common(b)
    b.add_argument("file", type=Path, metavar="FILE")
    b.set_defaults(func=cmd_backup)
    r = sub.add_parser("restore", help="replace the database with FILE (the server must be stopped)")
    common(r)
    r.add_argument("file", type=Path, metavar="FILE")
    r.set_defaults(func=cmd_restore)


def cmd_backup(args: argparse.Namespace) -> int:
    db = (args.data_dir or default_data_dir()) / DB_NAME
    try:
        done = backup(db, args.file)
    except (RefusedError, sqlite3.Error, OSError) as err:
        return fail("backup", err)
    print(
        f"backed up {db} to {args.file}: {done['bytes'] / 1e6:.1f} MB in {done['seconds']:.2f} s "
        f"(copy {done['copy_seconds']:.2f} s, integrity check {done['check_seconds']:.2f} s), integrity ok"
    )
    return 0


def server_holding(client: Client, db: Path) -> str | None:
    """Why the server answering on the client's port has `db` open, else None."""
    try:
        status, health = client.request("GET", "/api/health", paired=False)
    except ServerUnavailable:
        return None
    try:
        if status == 200 and Path(health["db"]["path"]).resolve() == db.resolve():
            return f"the server (pid {health['build']['pid']}) on port {client.port} has it open; stop it first"
    except (KeyError, TypeError):
        pass
    return None


def cmd_restore(args: argparse.Namespace) -> int:
    data_dir = args.data_dir or default_data_dir()
    client = Client(args.port, data_dir, timeout=5)  # two round trips: the proof, then health
    try:
        done = restore(data_dir, args.file, lambda db: server_holding(client, db))
    except (RefusedError, sqlite3.Error, OSError) as err:
        return fail("restore", f"refused: {err}")
    print(f"restored {args.file} into {data_dir / DB_NAME} (schema {done['schema']})")
    if done["aside"]:
        print(f"  the previous database is kept as {done['aside']}")
    print("  start the server again: wherefrom serve")
    return 0
