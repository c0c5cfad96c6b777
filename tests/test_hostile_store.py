"""A tampered backup and a store that cannot open: restore compares the backup's schema with a
freshly migrated database and refuses anything extra or missing (an added trigger that undoes
forgetting is never restored); `serve` on a database without this build's schema exits 1 with
one line instead of hanging."""

from __future__ import annotations

import asyncio
import sqlite3
import subprocess
from pathlib import Path

import pytest

from server.settings import Settings
from server.store.db import migration_files
from testkit.server_process import free_port, serve_args
from tests.conftest import running_api
from tests.dataio.test_dataio_import import wherefrom

UNDO_FORGET = (
    "CREATE TRIGGER facts_unforget AFTER UPDATE OF invalid_at ON facts WHEN new.invalid_at IS NOT NULL "
    "BEGIN UPDATE facts SET invalid_at = NULL WHERE id = new.id; END"
)


async def made_backup(settings: Settings, tmp_path: Path) -> Path:
    async with running_api(settings) as api:
        status, body = await api.post(
            "/api/notes", {"url": "https://example.com/a", "title": "A", "text": "walnut note"}
        )
        assert status == 201, body
    backup = tmp_path / "backup.db"
    code, out, err = await wherefrom(settings, "backup", str(backup))
    assert code == 0, err
    return backup


def tampered(backup: Path, dest: Path, *sql: str) -> Path:
    dest.write_bytes(backup.read_bytes())
    con = sqlite3.connect(dest)
    for statement in sql:
        con.execute(statement)
    con.commit()
    con.close()
    return dest


@pytest.mark.parametrize(
    ("case", "sql", "needle"),
    [
        ("a trigger that undoes forgetting", (UNDO_FORGET,), "extra trigger facts_unforget"),
        ("a dropped index", ("DROP INDEX documents_host",), "missing index documents_host"),
        ("an extra table", ("CREATE TABLE stash (x)",), "extra table stash"),
        ("a view", ("CREATE VIEW v AS SELECT 1",), "extra view v"),
        (
            "a changed trigger",
            ("DROP TRIGGER facts_ad", "CREATE TRIGGER facts_ad AFTER DELETE ON facts BEGIN SELECT 1; END"),
            "changed trigger facts_ad",
        ),
    ],
)
async def test_restore_refuses_a_backup_whose_schema_is_not_this_builds(
    settings: Settings, tmp_path: Path, case: str, sql: tuple[str, ...], needle: str
) -> None:
    backup = await made_backup(settings, tmp_path)
    bad = tampered(backup, tmp_path / "bad.db", *sql)
    before = (settings.data_dir / "wherefrom.db").read_bytes()
    code, out, err = await wherefrom(settings, "restore", str(bad))
    assert code == 1 and needle in err, (case, out, err)
    assert "Traceback" not in err
    assert (settings.data_dir / "wherefrom.db").read_bytes() == before  # nothing replaced
    assert not list(settings.data_dir.glob("*before-restore*"))


async def test_control_the_untampered_backup_restores_and_forgetting_holds(settings: Settings, tmp_path: Path) -> None:
    backup = await made_backup(settings, tmp_path)
    code, out, err = await wherefrom(settings, "restore", str(backup))
    assert code == 0, err
    async with running_api(settings) as api:
        status, body = await api.post("/api/forget", {"host": "example.com", "dry_run": True})
        status, body = await api.post("/api/forget", {"host": "example.com", "confirm": body["confirm"]})
        assert status == 200 and body["facts"] == 1, body
        status, body = await api.get("/api/search", params={"q": "walnut"})
        assert status == 200 and body["results"] == [], body


def only_schema_migrations(db: Path) -> None:
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE schema_migrations (name TEXT PRIMARY KEY, applied_at REAL NOT NULL)")
    con.executemany("INSERT INTO schema_migrations VALUES (?, 0)", [(n,) for n, _ in migration_files()])
    con.commit()
    con.close()


@pytest.mark.parametrize("case", ["only schema_migrations", "an added trigger", "a newer build's store"])
def test_serve_exits_1_in_one_line_when_the_store_cannot_open(tmp_path: Path, case: str) -> None:
    data = tmp_path / "data"
    data.mkdir(mode=0o700)
    db = data / "wherefrom.db"
    advice = "restore a good backup"
    if case == "only schema_migrations":
        only_schema_migrations(db)
    elif case == "a newer build's store":
        # a migration that changes only data (as 0015 changed the second model's blobs): no schema
        # object tells; read by this build it answered 500s (seen: a build before 0015 on a store after)
        from server.store.db import Store

        async def fresh() -> None:
            await (await Store.open(db)).close()

        asyncio.run(fresh())
        con = sqlite3.connect(db)
        con.execute("INSERT INTO schema_migrations VALUES ('9999_from_the_future', 0)")
        con.commit()
        con.close()
        advice = "written by a newer Wherefrom (migrations 9999_from_the_future)); update Wherefrom to open it"
    else:
        from server.store.schema_check import MIGRATIONS_TABLE, statements

        con = sqlite3.connect(db)
        con.execute(MIGRATIONS_TABLE)
        for name, sql in migration_files():
            for statement in statements(sql):
                con.execute(statement)
            con.execute("INSERT INTO schema_migrations VALUES (?, 0)", (name,))
        con.execute(UNDO_FORGET)
        con.commit()
        con.close()
    proc = subprocess.run(serve_args(free_port(), data), capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr and "does not have this build's schema" in proc.stderr, proc.stderr
    assert advice in proc.stderr, proc.stderr


def test_control_serve_opens_a_good_store(tmp_path: Path) -> None:
    """The same start on a fresh data dir keeps running (killed after it answered)."""
    from testkit.server_process import ServerProcess

    server = ServerProcess(tmp_path / "data").start()
    try:
        status, body = server.call("GET", "/api/health")
        assert status == 200, body
    finally:
        server.stop()
