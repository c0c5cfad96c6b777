"""Giving freed memory back to the system after a large piece of work, and keeping what lives as
long as the process out of the cyclic garbage collector's walks.

glibc keeps what a process frees in its heaps (one per thread that allocated) for reuse; after
the meaning index of a large store is built (batches of texts, token ids and vectors, freed
again) that is tens of MB at 300k items that the server's RSS goes on counting. `release()`
asks glibc to return the free pages (malloc_trim). Elsewhere (macOS, musl) it does nothing.
Call it off the event loop: it walks every heap.
"""

from __future__ import annotations

import ctypes
import functools
import gc
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


def settle() -> int:
    """Collect the cyclic garbage, then set every object alive now aside from the cyclic collector
    (gc.freeze), for a server whose startup is over: its modules, its app and what the store's
    load made. A full collection walks all of them, and nothing else runs meanwhile: ~20 ms at 1M
    items here, every few hundred searches; set aside, ~1 ms. What is made later is collected as
    before. How many objects were set aside."""
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()
