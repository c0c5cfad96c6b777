"""The database: opened once per app, migrations applied in order, one writer.

Migrations are the files `server/store/migrations/NNNN_name.sql`, applied in name order;
each runs in one transaction together with the row in `schema_migrations` that records it (and
its Python steps, server.store.upgrades, when SQL cannot compute what it writes).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import sqlite3
import time
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TypeVar

import aiosqlite

from server.store.claims import claim_in
from server.store.reader import Reader
from server.store.schema_check import MIGRATIONS_TABLE, NEWER, differences
from server.store.schema_check import migration_files as migration_files  # re-exported
from server.store.schema_check import statements as statements  # re-exported
from server.store.upgrades import AFTER

READ_CACHE_KB = 32_768  # the readers' page cache (KiB), all of them together: each holds its share
READERS = 2  # reader connections: one a core here, so a request's independent reads run at once


T = TypeVar("T")


class StoreError(RuntimeError):
    pass


def fts5_available() -> bool:
    con = sqlite3.connect(":memory:")
    try:
        con.execute("CREATE VIRTUAL TABLE t USING fts5(x)")
        return True
    except sqlite3.OperationalError:
        return False
    finally:
        con.close()


# True inside Store.transaction: reads there must see the transaction's own writes.
_IN_TX: contextvars.ContextVar[bool] = contextvars.ContextVar("in_transaction", default=False)


class Store:
    """Connections: `conn`, the one writer (aiosqlite, behind `write_lock`), and `readers`
    (server.store.reader), which serve reads outside transactions (WAL lets them read while a
    write is open, and they never see another request's uncommitted rows). A read goes to the
    least busy reader, so a request's independent reads (search's two lanes, page-match's
    tiers) run at once: each connection has its own thread, and SQLite lets go of the GIL while
    it works."""

    def __init__(self, path: Path, conn: aiosqlite.Connection, readers: list[Reader]) -> None:
        self.path = path
        self.conn = conn
        self.readers = readers
        self._busy = [0] * len(readers)  # reads in flight on each reader
        self.write_lock = asyncio.Lock()
        # called after each commit of Store.transaction (the embedder's wake-up: server.meaning)
        self.after_commit: list[Callable[[], None]] = []

    async def _read(self, sql: str, params: Params) -> Iterable[aiosqlite.Row]:
        args = _params(params)
        if _IN_TX.get():
            return await self.conn.execute_fetchall(sql, args)
        return await self.read_with(lambda con: con.execute(sql, args).fetchall())

    async def read_with(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """fn(connection) on the least busy reader, in one thread hop: statements that belong
        together (each read whole before the next; outside a transaction, so each sees the
        latest commit). Not inside Store.transaction: a reader would not see its writes."""
        if _IN_TX.get():
            raise StoreError("read_with inside a transaction would not see the transaction's writes")
        i = min(range(len(self.readers)), key=self._busy.__getitem__)
        self._busy[i] += 1
        try:
            return await self.readers[i].call(fn)
        finally:
            self._busy[i] -= 1

    @classmethod
    async def open(cls, path: Path) -> Store:
        if not fts5_available():
            raise StoreError(
                f"this Python's SQLite has no FTS5; install a Python built with FTS5 (sqlite {sqlite3.sqlite_version})"
            )
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = await aiosqlite.connect(path, isolation_level=None)
        conn.row_factory = aiosqlite.Row
        await conn.execute("PRAGMA journal_mode=WAL")
        await conn.execute("PRAGMA synchronous=NORMAL")
        await conn.execute("PRAGMA foreign_keys=ON")
        await conn.execute("PRAGMA busy_timeout=5000")
        try:
            await _migrate(conn)
            wrong = differences(path)
        except BaseException:
            await conn.close()
            raise
        if wrong:
            await conn.close()
            shown = "; ".join(wrong[:5]) + (f"; and {len(wrong) - 5} more" if len(wrong) > 5 else "")
            advice = "update Wherefrom to open it" if wrong[0].startswith(NEWER) else "restore a good backup"
            raise StoreError(f"{path} does not have this build's schema ({shown}); {advice}")
        readers: list[Reader] = []
        try:
            for n in range(READERS):
                readers.append(await Reader.open(path, READ_CACHE_KB // READERS, f"store-reader-{n}"))
        except BaseException:
            for reader in readers:
                await reader.close()
            await conn.close()
            raise
        return cls(path, conn, readers)

    async def create_function(self, name: str, num_params: int, func: Callable[..., Any]) -> None:
        """Register a Python SQL function on every connection (the readers and the writer)."""
        await self.conn.create_function(name, num_params, func, deterministic=False)
        for reader in self.readers:
            await reader.create_function(name, num_params, func)

    async def close(self) -> None:
        for reader in self.readers:
            await reader.close()
        await self.conn.close()

    async def schema_version(self) -> str:
        rows = await self.fetchall("SELECT name FROM schema_migrations ORDER BY name DESC LIMIT 1")
        return rows[0][0] if rows else ""

    async def fetchall(self, sql: str, params: Params = ()) -> list[aiosqlite.Row]:
        return list(await self._read(sql, params))

    async def fetchone(self, sql: str, params: Params = ()) -> aiosqlite.Row | None:
        """The first row, read in one call on the connection's thread (for one-row queries).

        A statement left open across an await would hold the shared reader's snapshot, and a read
        started meanwhile would miss a commit made in between (tests/store/test_store_reads.py).
        """
        return next(iter(await self._read(sql, params)), None)

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[aiosqlite.Connection]:
        """One writer at a time; all or nothing."""
        async with self.write_lock:
            await self.conn.execute("BEGIN IMMEDIATE")
            token = _IN_TX.set(True)
            try:
                yield self.conn
            except BaseException:
                await self.conn.execute("ROLLBACK")
                raise
            else:
                await claim_in(self.conn)
                await self.conn.execute("COMMIT")
                for notify in self.after_commit:
                    notify()
            finally:
                _IN_TX.reset(token)


async def stop_background(store: Store, written: Callable[[], None], task: asyncio.Task[None] | None) -> None:
    """End a background task that the store's commits wake (`written`, in Store.after_commit):
    unhook it, cancel the task and wait for it to end."""
    if written in store.after_commit:
        store.after_commit.remove(written)
    if task is not None:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


Params = Iterable[Any] | Mapping[str, Any]


def _params(params: Params) -> tuple[Any, ...] | Mapping[str, Any]:
    return params if isinstance(params, Mapping) else tuple(params)


async def _migrate(conn: aiosqlite.Connection) -> None:
    """Apply the migrations not yet recorded, each in one transaction with its record."""
    await conn.execute(MIGRATIONS_TABLE)
    done = {r[0] for r in await conn.execute_fetchall("SELECT name FROM schema_migrations")}
    for name, sql in migration_files():
        if name in done:
            continue
        await conn.execute("BEGIN IMMEDIATE")
        try:
            for statement in statements(sql):
                await conn.execute(statement)
            for step in AFTER.get(name, ()):
                await step(conn)
            await conn.execute("INSERT INTO schema_migrations(name, applied_at) VALUES (?, ?)", (name, time.time()))
            await conn.execute("COMMIT")
        except BaseException:
            await conn.execute("ROLLBACK")
            raise


_statements = statements  # the name tests read migrations with
