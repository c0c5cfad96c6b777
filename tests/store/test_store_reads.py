"""The store's reads see every commit made before they start, whatever other reads are in flight.

The reader connections are shared by every request. A read statement left open across an await
keeps that connection's read snapshot, and any read that starts meanwhile on it sees the database
as it was then, missing a commit that happened in between. (A library save read back the document
it had just committed and got nothing: a 500 seen once in four full runs.) And a request's
independent reads run at once, each on a reader of its own.
"""

from __future__ import annotations

import asyncio
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
