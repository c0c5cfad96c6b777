"""`wherefrom backup` while the server keeps writing, and `wherefrom restore` with its refusals."""

from __future__ import annotations

import asyncio
import shutil
import sqlite3
from pathlib import Path

from server.settings import Settings
from tests.conftest import free_port, running_api
from tests.dataio.test_dataio_import import wherefrom


def note_counts(db: Path) -> tuple[int, int, list[str]]:
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        facts = con.execute("SELECT COUNT(*) FROM facts WHERE kind = 'note'").fetchone()[0]
        rows = con.execute("SELECT COUNT(*) FROM activity WHERE kind = 'note'").fetchone()[0]
        check = [r[0] for r in con.execute("PRAGMA integrity_check")]
    finally:
        con.close()
    return facts, rows, check


async def test_backup_is_consistent_while_the_server_writes(settings: Settings, tmp_path: Path) -> None:
    async with running_api(settings) as api:
        body = {"url": "https://quince.example/a", "title": "t", "text": "quince " * 400}
        for _ in range(300):
            assert (await api.post("/api/notes", body))[0] == 201
        written = 0
        stop = asyncio.Event()

        async def writer() -> None:
            nonlocal written
            while not stop.is_set():
                status, _ = await api.post("/api/notes", body)
                assert status == 201
                written += 1

        task = asyncio.create_task(writer())
        await asyncio.sleep(0.3)
        during = written
        target = tmp_path / "backup.db"
        code, out, err = await wherefrom(settings, "backup", str(target))
        after = written
        stop.set()
        await task
        assert code == 0 and "integrity ok" in out, err
        assert after > during  # writes were in flight while the copy was taken
        facts, rows, check = note_counts(target)
        assert check == ["ok"]
        # each note and its activity row are one transaction: a consistent copy has both or neither
        assert facts == rows and 300 <= facts < 300 + written + 1
        assert oct(target.stat().st_mode & 0o777) == "0o600"
        # an existing file is never overwritten
        code, out, err = await wherefrom(settings, "backup", str(target))
        assert code == 1 and "exists" in err


async def test_restore_refuses_while_the_database_is_open_then_restores_and_keeps_the_old_one(
    settings: Settings, tmp_path: Path
) -> None:
    backup = tmp_path / "b.db"
    async with running_api(settings) as api:
        assert (await api.post("/api/notes", {"url": "https://a.example/", "text": "in the backup"}))[0] == 201
        assert (await wherefrom(settings, "backup", str(backup)))[0] == 0
        assert (await api.post("/api/notes", {"url": "https://a.example/", "text": "after the backup"}))[0] == 201
        code, out, err = await wherefrom(settings, "restore", str(backup))
        assert code == 1 and "stop it first" in err and "pid" in err, err
        # a server this command cannot see on its port still holds the file open: refused too
        other_port = Settings(data_dir=settings.data_dir, port=free_port())
        code, out, err = await wherefrom(other_port, "restore", str(backup))
        assert code == 1 and "has the database open" in err, err
        rows = await api.store.fetchall("SELECT text FROM facts ORDER BY id")
        assert [r[0] for r in rows] == ["in the backup", "after the backup"]  # untouched
    code, out, err = await wherefrom(settings, "restore", str(backup))
    assert code == 0, err
    aside = list(settings.data_dir.glob("wherefrom.db.before-restore-*"))
    assert [p.name.endswith(("-wal", "-shm")) for p in aside].count(False) == 1
    async with running_api(settings) as api:
        rows = await api.store.fetchall("SELECT text FROM facts ORDER BY id")
        assert [r[0] for r in rows] == ["in the backup"]
    kept = next(p for p in aside if not p.name.endswith(("-wal", "-shm")))
    con = sqlite3.connect(kept)
    assert [r[0] for r in con.execute("SELECT text FROM facts ORDER BY id")] == ["in the backup", "after the backup"]
    con.close()


async def test_restore_refuses_a_damaged_foreign_or_newer_file(settings: Settings, tmp_path: Path) -> None:
    backup = tmp_path / "b.db"
    async with running_api(settings) as api:
        for i in range(200):
            assert (await api.post("/api/notes", {"url": "https://a.example/", "text": f"note {i} " * 50}))[0] == 201
        assert (await wherefrom(settings, "backup", str(backup)))[0] == 0
    newer = tmp_path / "newer.db"
    shutil.copy(backup, newer)
    con = sqlite3.connect(newer)
    con.execute("INSERT INTO schema_migrations(name, applied_at) VALUES ('9999_from_the_future', 0)")
    con.commit()
    con.close()
    damaged = tmp_path / "damaged.db"
    data = bytearray(backup.read_bytes())
    page = 4096
    for p in range(2, len(data) // page):  # scribble over every page but the first
        data[p * page + 8 : p * page + 64] = b"\xff" * 56
    damaged.write_bytes(bytes(data))
    foreign = tmp_path / "foreign.db"
    con = sqlite3.connect(foreign)
    con.execute("CREATE TABLE t(x)")
    con.commit()
    con.close()
    text = tmp_path / "notes.txt"
    text.write_text("not a database")
    before = (settings.data_dir / "wherefrom.db").read_bytes()
    for path, reason in [
        (newer, "newer schema"),
        (damaged, "integrity_check"),
        (foreign, "not a Wherefrom database"),
        (text, "not an SQLite database"),
    ]:
        code, out, err = await wherefrom(settings, "restore", str(path))
        assert code == 1 and reason in err, (path.name, err)
    assert (settings.data_dir / "wherefrom.db").read_bytes() == before
    assert not list(settings.data_dir.glob("*before-restore*"))
    # positive control: the intact backup restores
    code, out, err = await wherefrom(settings, "restore", str(backup))
    assert code == 0, err
