"""`serve` runs numpy's BLAS on the calling thread only (server.threads): its own pool of threads
would wait for the cores the server's threads keep busy. The background build's spare thread
runs at the lowest priority."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
from threadpoolctl import threadpool_info, threadpool_limits  # type: ignore[import-untyped]

from server.meaning.embedder import Embedder
from server.store.db import Store
from server.threads import LOWEST, one_blas_thread


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


@pytest.mark.skipif(sys.platform != "linux", reason="a thread's own nice value is Linux's")
def test_the_background_build_s_spare_thread_yields_its_core_to_every_other(tmp_path: Path) -> None:
    def own_nice() -> int:
        return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())

    with ThreadPoolExecutor(max_workers=1) as plain:  # control: a thread as it starts
        assert plain.submit(own_nice).result() == own_nice() < LOWEST

    async def spare_nice() -> int:
        store = await Store.open(tmp_path / "wherefrom.db")
        try:
            embedder = Embedder(store)
            try:
                return embedder.spare.submit(own_nice).result()
            finally:
                await embedder.stop()
        finally:
            await store.close()

    assert asyncio.run(spare_nice()) == LOWEST
    assert own_nice() < LOWEST  # the caller's is its own


_NICED_POOL = """
import glob, sys, threading
from server.meaning import model as model_mod
from server.threads import lowest_priority, tokenize_on_the_calling_thread
if sys.argv[1] == "serve":
    tokenize_on_the_calling_thread()
model = model_mod.model()
niced = []
def first_use():
    lowest_priority()
    niced.append(threading.get_native_id())
    model.embed(["the build's spare thread reads an item"] * 64)
thread = threading.Thread(target=first_use)
thread.start()
thread.join()
model.embed(["a query"])
others = []
for stat in glob.glob("/proc/self/task/*/stat"):
    tid = int(stat.split("/")[4])
    if tid not in niced and int(open(stat).read().rsplit(")", 1)[1].split()[16]) == 19:
        others.append(tid)
print(len(others))
"""


@pytest.mark.skipif(sys.platform != "linux", reason="a thread's own nice value is Linux's")
@pytest.mark.parametrize(("how", "pool_niced"), [("serve", False), ("default", True)])
def test_no_tokenizer_thread_takes_the_spare_thread_s_priority(how: str, pool_niced: bool) -> None:
    """As `serve` runs, the tokenizers encode on the calling thread, so none of their threads is made
    by the spare thread at its priority (control, the library's default: its pool is)."""
    env = {k: v for k, v in os.environ.items() if k != "TOKENIZERS_PARALLELISM"}
    out = subprocess.run(
        [sys.executable, "-c", _NICED_POOL, how],
        cwd=Path(__file__).resolve().parent.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert (int(out.stdout.strip()) > 0) == pool_niced, out.stdout + out.stderr
