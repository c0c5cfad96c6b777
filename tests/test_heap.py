"""server.heap.release gives freed heap pages back: the process's RSS falls by most of what was
freed (glibc: malloc_trim; skipped where the C library has none)."""

from __future__ import annotations

import os
import sys

import pytest

from server import heap

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc_trim")


def rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


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
