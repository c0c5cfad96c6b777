"""`serve` runs numpy's BLAS on the calling thread only (server.threads): its own pool of threads
would wait for the cores the server's threads keep busy."""

from __future__ import annotations

import numpy as np
from threadpoolctl import threadpool_info, threadpool_limits  # type: ignore[import-untyped]

from server.threads import one_blas_thread


def blas_threads() -> list[int]:
    return [int(info["num_threads"]) for info in threadpool_info() if info.get("user_api") == "blas"]


def test_numpy_s_blas_runs_on_one_thread() -> None:
    before = blas_threads()
    try:
        threadpool_limits(limits=2, user_api="blas")  # control: the observer sees a pool of two
        assert blas_threads() and set(blas_threads()) == {2}
        reported = one_blas_thread()
        assert blas_threads() == [1] * len(before)
        assert [int(info["num_threads"]) for info in reported] == [1] * len(before)
        a = np.ones((300, 300), np.float32)
        assert float((a @ a)[0, 0]) == 300.0  # products still run
    finally:
        threadpool_limits(limits=max(before), user_api="blas")
