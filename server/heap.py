"""Giving freed memory back to the system after a large piece of work, and keeping what lives as
long as the process out of the cyclic garbage collector's walks.

glibc keeps what a process frees in its heaps (one per thread that allocated) for reuse; after
the meaning index of a large store is built (batches of texts, token ids and vectors, freed
again) that is tens of MB at 300k items that the server's RSS goes on counting. `release()`
asks glibc to return the free pages (malloc_trim). Elsewhere (macOS, musl) it does nothing.
Call it off the event loop: it walks every heap.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import gc
import threading
from collections.abc import Iterator
from typing import Any


@functools.cache
def _libc() -> Any:
    """The C library already loaded in this process (no search for it: that runs ldconfig)."""
    try:
        libc = ctypes.CDLL(None)
    except OSError:
        return None
    return libc if hasattr(libc, "malloc_trim") else None


def release() -> bool:
    """Return the heaps' free pages to the system; whether anything was released (False where
    the C library has no malloc_trim)."""
    libc = _libc()
    return bool(libc.malloc_trim(0)) if libc is not None else False


_pause_lock = threading.Lock()
_paused = 0  # bulk loads under way (`collector_paused`)
_resume = False  # whether the collector was on when the first of them began


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic garbage collector held off while a store's vectors are read into memory in
    pages (50k rows each, alive while they are added: each page outlives two collections, and
    every ~50k rows so promoted set off a full one, a walk of everything alive). At 1M items 21
    of those ran in a start's load, ~1 s of CPU; held off, a restart over bench_memory's 1M store
    has search by meaning ready in 2.81-2.82 s, not 3.73-3.76 (bench/bench_startup.py, four runs
    each). Rows are freed by their reference counts either way; the collector runs again when the
    last load ends. Process-wide (so nested and concurrent loads count)."""
    global _paused, _resume
    with _pause_lock:
        if _paused == 0:
            _resume = gc.isenabled()
            gc.disable()
        _paused += 1
    try:
        yield
    finally:
        with _pause_lock:
            _paused -= 1
            if _paused == 0 and _resume:
                gc.enable()


def settle() -> int:
    """Collect the cyclic garbage, then set every object alive now aside from the cyclic collector
    (gc.freeze), for a server whose startup is over: its modules, its app and what the store's
    load made. A full collection walks all of them, and nothing else runs meanwhile: ~20 ms at 1M
    items here, every few hundred searches; set aside, ~1 ms. What is made later is collected as
    before. How many objects were set aside."""
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()
