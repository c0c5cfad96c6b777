"""The embedder's queue: a batch takes facts first, then chunks, oldest first, and reads and
deletes its rows by the queue's primary key. A plan that scans the queue (or sorts it) made each
batch cost the length of the queue: a 1M backfill slowed to ~300 items/s (bench_backfill.py)."""

from __future__ import annotations

import asyncio

from server import appkeys
from server.meaning import embedder as embedder_mod
from tests.conftest import Api


async def plan(api: Api, sql: str, args: tuple[object, ...]) -> list[str]:
    rows = await api.store.fetchall("EXPLAIN QUERY PLAN " + sql, args)
    return [str(r[3]) for r in rows]


async def test_queue_reads_and_deletes_by_primary_key(api: Api) -> None:
    read = await plan(api, embedder_mod._QUEUE_SQL, ("fact", 256))
    delete = await plan(api, embedder_mod._DEQUEUE_SQL, ("fact", "[1,2]"))
    assert read == ["SEARCH embed_queue USING PRIMARY KEY (item=?)"], read
    assert "SEARCH embed_queue USING PRIMARY KEY (item=? AND id=?)" in delete, delete
    # the observer sees a scan where there is one: the statement this replaced
    old = await plan(api, "SELECT item, id FROM embed_queue ORDER BY item DESC, id LIMIT ?", (256,))
    assert any(p.startswith("SCAN embed_queue") for p in old), old


async def test_facts_and_chunks_both_leave_the_queue_with_their_vectors(api: Api) -> None:
    embedder = api.app[appkeys.EMBEDDER]
    await asyncio.wait_for(embedder.idle.wait(), 60)
    page = {"url": "https://dogs.example/crate", "title": "Crate training", "text": "Leave the crate door open."}
    status, _ = await api.post("/api/library/add_text", page)
    assert status in (200, 201)
    status, _ = await api.post("/api/notes", {"url": "https://dogs.example/n", "text": "Treats by the crate."})
    assert status in (200, 201)
    await asyncio.wait_for(embedder.idle.wait(), 60)
    queued = await api.store.fetchone("SELECT COUNT(*) FROM embed_queue")
    kinds = await api.store.fetchall(
        "SELECT fact_id IS NOT NULL, COUNT(*) FROM vectors GROUP BY fact_id IS NOT NULL ORDER BY 1"
    )
    assert queued is not None and int(queued[0]) == 0
    assert [(bool(r[0]), int(r[1]) > 0) for r in kinds] == [(False, True), (True, True)], kinds
