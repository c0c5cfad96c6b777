"""The data dir is private: under a normal umask (022) the data dir is 0700 and the database, its -wal
and -shm, and the token are 0600 — created so, and fixed at start when an older version (or a
hand) left them readable."""

from __future__ import annotations

import os
import sqlite3
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from server.settings import Settings
from server.store.schema_check import MIGRATIONS_TABLE
from tests.conftest import running_api


@pytest.fixture
def umask_022() -> Iterator[None]:
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def modes(data: Path) -> dict[str, int]:
    return {p.name: mode(p) for p in data.iterdir()}


@pytest.mark.usefixtures("umask_022")
def test_control_this_umask_makes_files_readable_by_others(tmp_path: Path) -> None:
    """Without our care, a file and a directory made here are readable by every local user."""
    (tmp_path / "d").mkdir()
    con = sqlite3.connect(tmp_path / "d" / "x.db")
    con.execute("PRAGMA journal_mode=WAL")
    con.execute("CREATE TABLE t(x)")
    assert mode(tmp_path / "d") == 0o755
    assert mode(tmp_path / "d" / "x.db") == 0o644
    assert mode(tmp_path / "d" / "x.db-wal") == 0o644
    con.close()


@pytest.mark.usefixtures("umask_022")
async def test_a_new_data_dir_is_private(settings: Settings) -> None:
    assert not settings.data_dir.exists()
    async with running_api(settings) as api:
        status, _ = await api.post("/api/notes", {"url": "https://example.com/a", "title": "A", "text": "a note"})
        assert status == 201
        found = modes(settings.data_dir)
        assert {"wherefrom.db", "wherefrom.db-wal", "wherefrom.db-shm", "token"} <= set(found), found
        assert all(m == 0o600 for m in found.values()), {k: oct(v) for k, v in found.items()}
    assert mode(settings.data_dir) == 0o700


@pytest.mark.usefixtures("umask_022")
async def test_a_readable_data_dir_is_fixed_at_start(settings: Settings) -> None:
    data = settings.data_dir
    data.mkdir(mode=0o755)
    os.chmod(data, 0o755)  # noqa: S103 - the readable dir an older version left
    con = sqlite3.connect(data / "wherefrom.db")
    con.execute("PRAGMA journal_mode=WAL")
    con.execute(MIGRATIONS_TABLE)  # an older version's file (anything else in it is refused at start)
    (data / "token").write_text("t" * 43 + "\n")
    os.chmod(data / "token", 0o644)
    assert mode(data / "wherefrom.db-wal") == 0o644  # control: left readable
    async with running_api(settings):
        found = modes(data)
        assert all(m == 0o600 for m in found.values()), {k: oct(v) for k, v in found.items()}
        assert mode(data) == 0o700
    con.close()
