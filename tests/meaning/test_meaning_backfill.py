"""An existing store gets its vectors on the first start after the upgrade: in the background,
with lexical search answering meanwhile, progress in GET /api/health, and resumable after a
kill -9 (a real server subprocess), finishing with every item embedded exactly once."""

from __future__ import annotations

import asyncio
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest

from testkit.server_process import ServerProcess
from tests.meaning.old_stores import add_notes, migrated_before

pytestmark = pytest.mark.slow
NOTES = 12_000
WORDS = "walnut harbour lantern meadow copper violin glacier orchard thunder saffron".split()


def old_store(data_dir: Path) -> Path:
    """A store as the version before the vectors table left it: migrations 0001-0005, notes."""
    data_dir.mkdir(parents=True)
    db = data_dir / "wherefrom.db"
    con = migrated_before(db, "0006")
    words = [(WORDS[i % 10], WORDS[(i * 7) % 10], WORDS[(i * 3) % 10]) for i in range(NOTES)]
    add_notes(
        con,
        [
            (f"https://site{i % 50}.example/page/{i}", f"page {i}", f"{a} {b} note number {i} about {c}")
            for i, (a, b, c) in enumerate(words)
        ],
    )
    con.commit()
    con.close()
    return db


def meaning(server: ServerProcess) -> dict[str, Any]:
    status, health = server.call("GET", "/api/health", headers={"Authorization": f"Bearer {server.token}"})
    assert status == 200, health
    return dict(health["meaning"])


def test_backfill_after_upgrade_survives_kill_9(tmp_path: Path) -> None:
    db = old_store(tmp_path / "data")
    server = ServerProcess(tmp_path / "data").start()
    try:
        deadline = time.monotonic() + 120
        while (m := meaning(server))["vectors"] == 0:
            assert time.monotonic() < deadline, m
            time.sleep(0.02)
        assert m["state"] == "building" and m["pending"] > 0, m  # killed mid-build, not after
        auth = {"Authorization": f"Bearer {server.token}"}
        status, found = server.call("GET", "/api/search?q=saffron+violin&lanes=words", headers=auth)
        assert status == 200 and found["results"], found  # lexical search works meanwhile
        server.kill9()
        with sqlite3.connect(db) as con:
            partial = con.execute("SELECT COUNT(*) FROM vectors").fetchone()[0]
            queued = con.execute("SELECT COUNT(*) FROM embed_queue").fetchone()[0]
        assert 0 < partial < NOTES and queued == NOTES - partial  # committed with its queue rows
        server = ServerProcess(tmp_path / "data").start()
        deadline = time.monotonic() + 300
        while (m := meaning(server))["state"] != "ready":
            assert time.monotonic() < deadline and m["state"] != "failed", m
            time.sleep(0.1)
        assert m["pending"] == 0 and m["vectors"] == NOTES
    finally:
        server.stop()
    with sqlite3.connect(db) as con:
        assert con.execute("SELECT COUNT(*) FROM embed_queue").fetchone()[0] == 0
        per_fact = con.execute("SELECT COUNT(*), COUNT(DISTINCT fact_id) FROM vectors").fetchone()
        assert per_fact == (NOTES, NOTES)  # every note once, none twice
        missing = con.execute(
            "SELECT COUNT(*) FROM facts f WHERE NOT EXISTS (SELECT 1 FROM vectors v WHERE v.fact_id = f.id)"
        )
        assert missing.fetchone()[0] == 0


async def test_restore_brings_the_vectors_back_and_builds_what_is_missing(settings: Any, tmp_path: Path) -> None:
    from tests.conftest import running_api
    from tests.dataio.test_dataio_import import wherefrom

    crate = "Crate training: let the puppy sleep in the crate with a blanket, short stays at first."
    backup = tmp_path / "b.db"
    async with running_api(settings) as api:
        assert (await api.post("/api/notes", {"url": "https://dogs.example/c", "text": crate}))[0] == 201
        await api.get("/api/search", params={"q": "crate"})  # embedded before the backup
        assert (await wherefrom(settings, "backup", str(backup)))[0] == 0
    with sqlite3.connect(backup) as con:  # as if taken while the item still waited in the queue
        assert con.execute("SELECT COUNT(*) FROM vectors").fetchone()[0] == 1  # the backup holds vectors
        con.execute("DELETE FROM vectors")
        con.execute("INSERT INTO embed_queue(item, id) SELECT 'fact', id FROM facts")
    assert (await wherefrom(settings, "restore", str(backup)))[0] == 0
    async with running_api(settings) as api:
        # the restored queue is a backlog (the embedder builds it in the background, a search does
        # not wait for it): wait until health says it is built
        deadline = asyncio.get_running_loop().time() + 60
        meaning: dict[str, Any] = {}
        while asyncio.get_running_loop().time() < deadline:
            meaning = (await api.get("/api/health"))[1]["meaning"]
            if meaning["state"] == "ready" and meaning["pending"] == 0:
                break
            await asyncio.sleep(0.1)
        assert meaning["state"] == "ready" and meaning["pending"] == 0, meaning
        status, body = await api.get("/api/search", params={"q": "teaching a young dog to rest in its box"})
        assert status == 200 and [(r["text"], r["why"]) for r in body["results"]] == [(crate, "meaning")]
        row = await api.store.fetchone("SELECT (SELECT COUNT(*) FROM vectors), (SELECT COUNT(*) FROM embed_queue)")
        assert row is not None and tuple(row) == (1, 0)
