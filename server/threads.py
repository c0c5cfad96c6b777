"""How the server's threads share the cores: numpy's BLAS and the tokenizers on the calling thread
only (in `serve`), and the background build's spare thread last in line (`lowest_priority`).

numpy's OpenBLAS keeps a pool of threads, one a core, splits a large enough product among them,
and its idle threads spin while they wait. The server already keeps the cores busy with threads
of its own (the event loop, the store's readers, the second model's query), so a product split
across them waits for a core that is busy. With one BLAS thread (bench_search_quality's 10k
store, alternating, two rounds each) search p95 went 32.3-32.8 -> 28.3-29.6 ms and its max
43-60 -> 36-38 ms; page-match p99 at 1M items (bench_memory) 4.9-9.0 -> 4.5-4.6 ms. The limit is
asked of threadpoolctl (the maintained library for it) once numpy is loaded.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from typing import Any

LOWEST = 19  # the nice value of a thread that runs only on what no other thread wants


def one_blas_thread() -> list[dict[str, Any]]:
    """Limit every BLAS library loaded in this process to one thread; what threadpoolctl then
    reports of them (`num_threads`)."""
    import numpy  # noqa: F401 - loads its BLAS, which threadpoolctl finds among the loaded libraries
    from threadpoolctl import threadpool_info, threadpool_limits  # type: ignore[import-untyped]

    threadpool_limits(limits=1, user_api="blas")
    return [info for info in threadpool_info() if info.get("user_api") == "blas"]


def tokenize_on_the_calling_thread() -> None:
    """The tokenizers library encodes on the thread that asks, not on a pool of its own
    (TOKENIZERS_PARALLELISM=false; call it before any thread starts). The pool's threads take the
    nice value of the thread that first uses it: a first use from the spare thread
    (`lowest_priority`), as on a restart in the middle of the second model's build, would put
    every later query's tokenization last in line. Search at 10k items was the same without the
    pool (bench_search_quality, p50 / p95 19.0-19.2 / 30.2-30.7 ms against 18.8-20.5 / 29.6-31.4)."""
    os.environ["TOKENIZERS_PARALLELISM"] = "false"


def lowest_priority() -> None:
    """The calling thread yields its core to every other thread of the machine (nice LOWEST; an
    executor's `initializer`). On Linux each thread has a nice value of its own; elsewhere this
    does nothing (setpriority there would set the whole process's)."""
    if sys.platform == "linux":
        with contextlib.suppress(OSError):  # not allowed: the thread runs at the usual priority
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), LOWEST)
