"""server.heap.release gives freed heap pages back: the process's RSS falls by most of what was
freed (glibc: malloc_trim; skipped where the C library has none). server.heap.settle sets what a
loaded server holds aside from the cyclic garbage collector."""

from __future__ import annotations

import asyncio
import gc
import os
import sys

import pytest

from server import appkeys, heap
from server.app import create_app
from server.commands.serve import settled_heap
from server.serving import JsonErrorRunner
from server.settings import Settings
from tests.conftest import local_site


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
