"""Keeping the full-text indexes merged, in the background.

FTS5 writes each transaction's terms as a new segment of its index and merges segments only when
enough pile up on one level (its automerge), so a store written a note at a time holds dozens of
them, and every term lookup reads each one. A query's misspelled word is looked up as ~400
spellings in the indexes' vocabulary (server.memory.typos): in bench_search_quality's store, built
through the API, ~10 ms a word, against ~1 ms once merged, and a sentence of words no item holds
took ~100 ms. Once writes have been quiet for QUIET_S, each index is merged in steps of at most
PAGES pages, each step its own short transaction on the writer, until a step finds nothing to
do. A step merges segments of the same level only, any two of them (`usermerge` 2, set on the
first step), as a log-structured merge does: a large store's big segment is rewritten only when
another of its size appears, never for each few notes (a merge with a negative count, as
'optimize', would rewrite the whole index after every quiet spell). A synthetic index of 10k
one-row writes: a 400-spelling vocabulary lookup 12.9 ms as written, 4.1 ms merged so, 3.7 ms
after 'optimize'.
"""

from __future__ import annotations

import asyncio
import logging

from server.store.db import Store, stop_background

log = logging.getLogger("wherefrom")
TABLES = ("facts_fts", "document_chunks_fts")
QUIET_S = 2.0
PAGES = 200  # pages written by one step (a short hold of the writer)


class FtsMerger:
    def __init__(self, store: Store, quiet_s: float = QUIET_S) -> None:
        self.store = store
        self.quiet_s = quiet_s
        self.wake = asyncio.Event()
        self.steps = 0  # merge steps that did work
        self._own = False  # a commit of ours is not a write to wait for
        self._configured: set[str] = set()
        self._task: asyncio.Task[None] | None = None

    def _written(self) -> None:
        if not self._own:
            self.wake.set()

    async def start(self) -> None:
        self.store.after_commit.append(self._written)
        self.wake.set()  # a store opened with segments left from before
        self._task = asyncio.create_task(self._run(), name="fts-merge")

    async def stop(self) -> None:
        await stop_background(self.store, self._written, self._task)

    async def _run(self) -> None:
        try:
            while True:
                await self.wake.wait()
                self.wake.clear()
                while True:  # until writes have been quiet for quiet_s (a plain sleep: a cancel
                    # arriving as a write wakes it is never lost, as asyncio.wait_for on 3.11 can lose it)
                    await asyncio.sleep(self.quiet_s)
                    if not self.wake.is_set():
                        break
                    self.wake.clear()
                for table in TABLES:  # each step is its own transaction: requests come in between
                    while not self.wake.is_set() and await self.step(table):
                        pass
        except asyncio.CancelledError:
            raise
        except Exception:  # search works on unmerged indexes, only slower
            log.exception("merging the full-text indexes stopped")

    async def step(self, table: str) -> bool:
        """One merge step of `table`; whether it did any work."""
        if table not in TABLES:
            raise ValueError(table)
        self._own = True
        try:
            async with self.store.transaction() as conn:
                if table not in self._configured:
                    await conn.execute(f"INSERT INTO {table}({table}, rank) VALUES ('usermerge', 2)")  # noqa: S608
                    self._configured.add(table)
                before = conn.total_changes
                await conn.execute(f"INSERT INTO {table}({table}, rank) VALUES ('merge', ?)", (PAGES,))  # noqa: S608
                done = conn.total_changes - before >= 2  # FTS5's documented sign of work done
        finally:
            self._own = False
        self.steps += int(done)
        return done
