"""The full-text indexes are merged in the background once writes are quiet (server.store.fts_merge):
a store written a note at a time holds a segment per write, and each term lookup reads them all."""

from __future__ import annotations

import asyncio

from server import appkeys
from server.store.fts_merge import FtsMerger
from tests.conftest import Api


async def data_rows(api: Api) -> int:
    row = await api.store.fetchone("SELECT COUNT(*) FROM facts_fts_data")
    assert row is not None
    return int(row[0])


async def test_segments_written_one_note_at_a_time_are_merged_and_nothing_is_lost(api: Api) -> None:
    merger = api.app[appkeys.FTS_MERGER]
    await asyncio.wait_for(api.app[appkeys.EMBEDDER].idle.wait(), 60)
    for n in range(40):
        status, _ = await api.post("/api/notes", {"url": f"https://notes.example/{n}", "text": f"walnut harvest {n}"})
        assert status == 201
    written = await data_rows(api)  # a segment per write: ~one row of index data each
    before = merger.steps
    deadline = asyncio.get_running_loop().time() + 60
    while merger.steps == before or merger.wake.is_set():
        assert asyncio.get_running_loop().time() < deadline, "no merge in 60 s"
        await asyncio.sleep(0.2)
    while await merger.step("facts_fts"):  # whatever the background had left
        pass
    merged = await data_rows(api)
    assert merged * 2 < written, (written, merged)
    status, body = await api.get("/api/search", params={"q": "walnut harvest", "limit": 100, "lanes": "words"})
    assert status == 200 and len(body["results"]) == 40
    assert not await merger.step("facts_fts")  # nothing left: a step says so


async def test_stopping_as_a_write_wakes_it_never_hangs(api: Api) -> None:
    """A stop that lands while a write wakes the merger's quiet wait (as at a server's shutdown
    right after a request) ends it: asyncio.wait_for on Python 3.11 could swallow that cancel and
    leave the task waiting forever (seen as an app teardown that hung)."""
    for spins in range(6):  # the cancel lands 0..5 loop turns after the wake
        merger = FtsMerger(api.store, quiet_s=30)
        await merger.start()
        await asyncio.sleep(0.05)  # in its quiet wait (start wakes it: segments left from before)
        merger.wake.set()  # what a commit does
        for _ in range(spins):
            await asyncio.sleep(0)
        stopping = asyncio.ensure_future(merger.stop())
        done, _ = await asyncio.wait({stopping}, timeout=5)
        task = merger._task
        assert task is not None
        if not done:  # it swallowed the cancel: end it for good before failing
            task.cancel()
            await asyncio.wait({stopping}, timeout=5)
        assert stopping in done and task.cancelled(), f"stop hung when it landed {spins} turns after a write"
