"""The store's reads see every commit made before they start, whatever other reads are in flight.

The reader connections are shared by every request. A read statement left open across an await
keeps that connection's read snapshot, and any read that starts meanwhile on it sees the database
as it was then, missing a commit that happened in between. (A library save read back the document
it had just committed and got nothing: a 500 seen once in four full runs.) And a request's
independent reads run at once, each on a reader of its own.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from pathlib import Path

import pytest

from server.store import db
from server.store.db import Store


async def test_a_read_started_after_a_commit_sees_it_while_another_read_is_in_flight(tmp_path: Path) -> None:
    store = await Store.open(tmp_path / "db.sqlite")
    try:
        async with store.transaction() as conn:
            await conn.execute("CREATE TABLE t(x INTEGER)")
        missed = 0
        stop = False

        async def other_reader() -> None:  # other requests' reads, always in flight on the reader
            while not stop:
                await store.fetchone("SELECT COUNT(*) FROM t")

        others = [asyncio.ensure_future(other_reader()) for _ in range(4)]
        for i in range(60):
            async with store.transaction() as conn:
                await conn.execute("INSERT INTO t(x) VALUES (?)", (i,))
            row = await store.fetchone("SELECT COUNT(*) FROM t WHERE x = ?", (i,))
            if row is None or row[0] != 1:
                missed += 1
        stop = True
        await asyncio.gather(*others)
        # positive control: the same read inside no race sees the rows
        all_rows = await store.fetchone("SELECT COUNT(*) FROM t")
        assert all_rows is not None and all_rows[0] == 60
        assert missed == 0, f"{missed} of 60 reads missed a commit made before they started"
    finally:
        await store.close()


async def _meet_in_sql(store: Store) -> list[int]:
    """Two reads started together, each waiting inside SQLite (in a SQL function) for the other:
    they meet only if they run at the same time, on two connections' threads."""
    barrier = threading.Barrier(2, timeout=1)
    met: list[int] = []

    def meet() -> int:
        try:
            barrier.wait()
        except threading.BrokenBarrierError:
            return 0
        met.append(threading.get_ident())
        return 1

    await store.create_function("meet", 0, meet)
    await asyncio.gather(store.fetchone("SELECT meet()"), store.fetchone("SELECT meet()"))
    return met


async def test_two_reads_of_one_request_run_at_once(tmp_path: Path) -> None:
    store = await Store.open(tmp_path / "db.sqlite")
    try:
        met = await _meet_in_sql(store)
        assert len(met) == 2 and met[0] != met[1], "the two reads were served one after the other"
    finally:
        await store.close()


async def test_control_one_reader_serves_reads_one_after_the_other(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(db, "READERS", 1)
    store = await Store.open(tmp_path / "db.sqlite")
    try:
        assert await _meet_in_sql(store) == []  # the observer sees a serial store
    finally:
        await store.close()


async def test_read_with_runs_a_group_of_statements_on_one_reader_and_sees_the_latest_commit(tmp_path: Path) -> None:
    store = await Store.open(tmp_path / "db.sqlite")
    try:
        async with store.transaction() as conn:
            await conn.execute("CREATE TABLE t(x INTEGER)")
            await conn.execute("INSERT INTO t(x) VALUES (1), (2)")

        def group(con: sqlite3.Connection) -> tuple[str, int, int]:
            first = con.execute("SELECT COUNT(*) FROM t").fetchone()[0]
            second = con.execute("SELECT SUM(x) FROM t").fetchone()[0]
            return threading.current_thread().name, first, second

        name, count, total = await store.read_with(group)
        assert (count, total) == (2, 3) and name.startswith("store-reader-")
        async with store.transaction() as conn:
            await conn.execute("INSERT INTO t(x) VALUES (3)")
        assert (await store.read_with(group))[1:] == (3, 6)
        # a reader is read-only: a write through it fails, and the store is left as it was
        with pytest.raises(sqlite3.OperationalError):
            await store.read_with(lambda con: con.execute("INSERT INTO t(x) VALUES (4)"))
        assert (await store.read_with(group))[1:] == (3, 6)
    finally:
        await store.close()


async def test_read_with_inside_a_transaction_is_refused_and_the_transaction_undone(tmp_path: Path) -> None:
    store = await Store.open(tmp_path / "db.sqlite")
    try:
        async with store.transaction() as conn:
            await conn.execute("CREATE TABLE t(x INTEGER)")
        with pytest.raises(db.StoreError, match="transaction"):
            async with store.transaction() as conn:
                await conn.execute("INSERT INTO t(x) VALUES (1)")
                await store.read_with(lambda con: con.execute("SELECT COUNT(*) FROM t").fetchone())
        row = await store.fetchone("SELECT COUNT(*) FROM t")
        assert row is not None and row[0] == 0
        # control: outside a transaction the same read is served
        assert tuple(await store.read_with(lambda con: con.execute("SELECT COUNT(*) FROM t").fetchone())) == (0,)
    finally:
        await store.close()


async def test_close_ends_the_readers_threads(tmp_path: Path) -> None:
    def readers() -> list[threading.Thread]:
        return [t for t in threading.enumerate() if t.name.startswith("store-reader-")]

    before = set(readers())
    store = await Store.open(tmp_path / "db.sqlite")
    assert len(set(readers()) - before) == db.READERS  # control: the threads are seen while open
    await store.close()
    assert set(readers()) - before == set()
