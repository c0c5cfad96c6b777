"""server.heap.release gives freed heap pages back: the process's RSS falls by most of what was
freed (glibc: malloc_trim; skipped where the C library has none). server.heap.settle sets what a
loaded server holds aside from the cyclic garbage collector."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
import sqlite3
import sys
import traceback
from pathlib import Path

import pytest

from server import appkeys, heap
from server.app import create_app
from server.commands.serve import settled_heap
from server.governance.visibility import govern
from server.meaning import embedder as embedder_mod
from server.meaning.embedder import Embedder
from server.serving import JsonErrorRunner
from server.settings import Settings
from server.store.db import Store
from tests.conftest import local_site
from tests.meaning.old_stores import add_notes


def rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc_trim")
def test_freed_blocks_leave_the_rss_after_release() -> None:
    if heap._libc() is None:
        pytest.skip("no malloc_trim in this C library")
    # 64 MB in 4 KB blocks (malloc'd, below the mmap threshold), the last one kept so the heap's
    # top cannot simply shrink: only a trim of the free pages inside the heap gives them back
    blocks = [bytearray(4096) for _ in range(16_384)]
    keep = blocks[-1]
    before_free = rss_mb()
    del blocks
    freed = rss_mb()
    assert before_free - freed < 16, "control: freeing alone leaves the pages in the heap (RSS)"
    assert heap.release() is True
    assert freed - rss_mb() > 32, "most of the 64 MB freed went back to the system"
    assert len(keep) == 4096


async def test_serve_sets_the_loaded_server_aside_from_the_garbage_collector(settings: Settings) -> None:
    """`serve` (server.commands.serve.settled_heap): once the store's load is over, what was alive
    then is out of a full collection's walk (server.heap.settle); what is made later is not."""
    before = [object()]  # a container the cyclic collector tracks
    gc.collect()
    assert any(o is before for o in gc.get_objects(2)), "control: a full collection walks it"
    app = create_app(settings)
    app.cleanup_ctx.append(settled_heap)
    try:
        async with local_site(app, port=settings.port, runner_class=JsonErrorRunner):
            settling = next(t for t in asyncio.all_tasks() if t.get_name() == "settle-heap")
            async with asyncio.timeout(30):
                await settling  # it waits for the store's load
            assert app[appkeys.EMBEDDER].loaded.is_set() and gc.get_freeze_count() > 0
            assert not any(o is before for o in gc.get_objects(2))
            after = [object()]
            gc.collect()
            assert any(o is after for o in gc.get_objects(2))
    finally:
        gc.unfreeze()  # this test process runs other apps after this one


def test_the_collector_is_held_off_for_a_load_and_comes_back_after_the_last() -> None:
    assert gc.isenabled(), "control: the collector is on in this process"
    with heap.collector_paused():
        assert not gc.isenabled()
        with heap.collector_paused():  # a second load at once (the second model's scan beside the index)
            assert not gc.isenabled()
        assert not gc.isenabled(), "still off while the first load runs"
    assert gc.isenabled()
    with pytest.raises(RuntimeError), heap.collector_paused():
        raise RuntimeError("a load that failed")
    assert gc.isenabled(), "back on after a failed load"
    gc.disable()
    try:
        with heap.collector_paused():
            pass
        assert not gc.isenabled(), "a collector someone else switched off stays off"
    finally:
        gc.enable()


async def test_reading_a_stores_vectors_runs_no_collection(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The index's load (server.meaning.embedder) reads the store's vectors a page at a time:
    with the collector set to run at every allocation, none runs in that read; with the pause
    taken out (the control), collections do."""
    store = await Store.open(tmp_path / "wherefrom.db")
    try:
        await govern(store)
        con = sqlite3.connect(tmp_path / "wherefrom.db")
        add_notes(con, [(f"https://site.example/{n}", "note", f"note {n} about sourdough") for n in range(40)])
        con.commit()
        con.close()
        embedder = Embedder(store)
        try:
            await embedder.drain()
        finally:
            await embedder.stop()
        monkeypatch.setattr(embedder_mod, "LOAD_ROWS", 4)  # ten pages

        async def collections_in_the_read() -> int:
            loader = Embedder(store)
            inside: list[bool] = []  # per collection, whether it started in the read of the vectors

            def seen(phase: str, _info: dict[str, int]) -> None:
                if phase == "start":
                    inside.append(any(f.name == "_read_vectors" for f in traceback.extract_stack()))

            thresholds = gc.get_threshold()
            gc.callbacks.append(seen)
            gc.set_threshold(1, 1, 1)
            try:
                await loader._load()
            finally:
                gc.set_threshold(*thresholds)
                gc.callbacks.remove(seen)
                await loader.stop()
            assert len(loader.index) == 40  # every vector was read
            return sum(inside)

        assert await collections_in_the_read() == 0
        monkeypatch.setattr(heap, "collector_paused", contextlib.nullcontext)
        assert await collections_in_the_read() > 0, "control: without the pause they run in it"
    finally:
        await store.close()
