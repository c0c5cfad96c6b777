"""A read-only SQLite connection on its own thread: one of the store's readers (server.store.db).

`call(fn)` runs fn(connection) on the reader's thread and hands the result back to the event
loop: one thread hop for a group of statements that belong together (the meaning lane reads its
candidates' vectors, then their items, then more if it must, in one), where a statement at a
time costs a hop each (~0.1 ms) and a turn of the event loop in between. SQLite lets go of the
GIL while it works, so two readers serve two reads at once.

A job cancelled by its caller still runs (SQLite cannot be stopped half-way safely); its
result is dropped.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from queue import SimpleQueue
from typing import Any, TypeVar

T = TypeVar("T")
Job = tuple["asyncio.Future[Any]", Callable[[sqlite3.Connection], Any]] | None


class Reader:
    def __init__(self, path: Path, name: str) -> None:
        self.path = path
        self._jobs: SimpleQueue[Job] = SimpleQueue()
        self._thread = threading.Thread(target=self._work, name=name, daemon=True)
        self._con: sqlite3.Connection | None = None

    @classmethod
    async def open(cls, path: Path, cache_kb: int, name: str = "store-reader") -> Reader:
        reader = cls(path, name)
        reader._thread.start()
        try:
            await reader.call(lambda _con: reader._connect(cache_kb))
        except BaseException:
            await reader.close()
            raise
        return reader

    def _connect(self, cache_kb: int) -> None:
        con = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        try:
            con.row_factory = sqlite3.Row
            con.execute("PRAGMA query_only=ON")
            con.execute("PRAGMA busy_timeout=5000")
            # every request reads here: a page cache that holds the tables' interior b-tree pages
            # (the default 2 MB does not at 1M items; 200 random lookups went p99 7.5 -> 3.1 ms)
            con.execute(f"PRAGMA cache_size=-{int(cache_kb)}")
        except BaseException:
            con.close()
            raise
        self._con = con

    async def call(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """fn(connection), run on the reader's thread."""
        future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        self._jobs.put((future, fn))
        return await future

    async def create_function(self, name: str, num_params: int, func: Callable[..., Any]) -> None:
        await self.call(lambda con: con.create_function(name, num_params, func, deterministic=False))

    async def close(self) -> None:
        """Close the connection (after the jobs queued before) and end the thread."""
        if not self._thread.is_alive():
            return
        if self._con is not None:
            await self.call(lambda con: con.close())
        self._jobs.put(None)
        await asyncio.to_thread(self._thread.join)

    def _work(self) -> None:
        while True:
            job = self._jobs.get()
            if job is None:
                return
            future, fn = job
            try:
                result = fn(self._con)  # type: ignore[arg-type]  # None only for the first job, which connects
            except BaseException as e:  # handed to the caller, whatever it is
                _hand_back(future, _set_exception, e)
            else:
                _hand_back(future, _set_result, result)


def _hand_back(future: asyncio.Future[Any], setter: Callable[[asyncio.Future[Any], Any], None], value: Any) -> None:
    with contextlib.suppress(RuntimeError):  # the loop is closed: nobody is waiting any more
        future.get_loop().call_soon_threadsafe(setter, future, value)


def _set_result(future: asyncio.Future[Any], result: Any) -> None:
    if not future.done():
        future.set_result(result)


def _set_exception(future: asyncio.Future[Any], error: BaseException) -> None:
    if not future.done():
        future.set_exception(error)
