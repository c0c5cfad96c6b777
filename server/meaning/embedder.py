"""The embedder: one background task per server that empties `embed_queue` (0006_vectors.sql).

Batches of BATCH items are read, embedded off the event loop (its own one-thread executor, so a
search's query embedding never waits behind a batch), and written in one transaction that also
removes them from the queue — only for items whose text is still the text embedded (a turn that
grew meanwhile keeps its queue row). A store from before the vectors table has every item queued
by the migration, so the first start builds the vectors in the background, resumably; lexical
search works meanwhile. Writes wake it (Store.after_commit); it sleeps when the queue is empty.
While import batches keep arriving it holds back (`defer`: the batches' own writes first, each
turn searchable by its words at once), and a search that waits for fresh vectors ends the hold.
When its own queue is empty it builds the second model's vectors (server.meaning.deep), a small
batch at a time, so a new item waits at most one of those batches for its static vector; while
no one is asking (server.quiet) another beside it, on a spare thread that yields its core to any
other (server.threads).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import aiosqlite

from server import heap
from server.meaning import model as model_mod
from server.meaning import partitions
from server.meaning.deep import DeepLane
from server.meaning.index import CHUNK, FACT, UNASSIGNED, BitIndex
from server.meaning.items import dequeue, item_texts, json_ids, take
from server.meaning.scale import ScaleSample
from server.meaning.third import ThirdLane
from server.quiet import Quiet
from server.store.db import Store, stop_background
from server.threads import lowest_priority

log = logging.getLogger("wherefrom")
BATCH = 256
LOAD_ROWS = 50_000
SETTLE_S = 0.5
HOLD_S = 2.0  # an import batch holds the build back this long (the next batch comes sooner)
RELEASE_AFTER = 10_000  # items embedded since the last time the freed memory went back (server.heap)

# facts first, then chunks, oldest first: each by the queue's primary key (item, id), so a batch
# reads and deletes its rows without scanning the rest of a long queue (a 1M backfill)
_QUEUE_SQL = "SELECT id FROM embed_queue WHERE item = ? ORDER BY id LIMIT ?"
_DEQUEUE_SQL = "DELETE FROM embed_queue WHERE item = ? AND id IN (SELECT value FROM json_each(?))"
_INSERT_SQL = "INSERT INTO vectors(id, fact_id, chunk_id, seq, model, bits, vec, part) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
_LOAD_SQL = (
    "SELECT id, fact_id IS NULL AS chunk, COALESCE(fact_id, chunk_id), bits, part FROM vectors"
    " WHERE id > ? ORDER BY id LIMIT ?"
)


class Embedder:
    def __init__(
        self, store: Store, settle_s: float = SETTLE_S, *, second_model: bool = True, quiet: Quiet | None = None
    ) -> None:
        self.store = store
        self.settle_s = settle_s
        self.index = BitIndex()
        self.deep = DeepLane(store, enabled=second_model)  # the second model: its build follows this one's queue
        self.scale = ScaleSample(store, self.index)  # a query's scale by meaning, taken by the third voice
        self.third = ThirdLane(store, self.scale, enabled=second_model)  # the third voice: after the second's queue
        self.executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="embedder")
        # the second model's batches beside the executor's, while no one is asking (`quiet`; never
        # without one), on a thread that yields its core to any other, so a request that comes
        # meanwhile waits little for a core
        self.quiet = quiet
        self.spare = ThreadPoolExecutor(max_workers=1, thread_name_prefix="embedder-spare", initializer=lowest_priority)
        self.wake = asyncio.Event()
        self.state = "loading"  # loading -> building -> ready (building again while a queue drains)
        self.pending = 0
        self.done = 0
        self.released_at = 0  # `done` when freed memory last went back to the system
        self.started_at = time.time()
        self.error: str | None = None
        self.idle = asyncio.Event()  # set while the queue is empty and no batch is in flight
        self.loaded = asyncio.Event()  # set once the index holds every vector the store had
        self.written = 0  # commits seen (Store.after_commit)
        self.caught_up = 0  # every commit up to this one is embedded
        self._stepped = asyncio.Event()  # pulsed after each batch
        self._held_until = 0.0  # time.monotonic() until which the build waits (defer)
        self._unheld = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def progress(self) -> dict[str, Any]:
        return {
            "model": model_mod.NAME,
            "state": self.state,
            "pending": self.pending,
            "embedded": self.done,
            "vectors": len(self.index),
            "index": self._index_state(),
            "partitions": 0 if self.index.centroids is None else len(self.index.centroids),
            "deep": self.deep.progress(),
            "third": {**self.third.progress(), "scale": self.scale.progress()},
            **({"error": self.error} if self.error else {}),
        }

    def _index_state(self) -> str:
        state = self.index.state()
        if state == "flat" and len(self.index) >= max(partitions.TRAIN_AT, self.index.train_after):
            return "partitioning"  # the partitions are due: trained at the next step
        return state

    @property
    def ready(self) -> bool:
        return self.state in ("building", "ready")

    def defer(self, seconds: float | None = None) -> None:
        """Hold the build back for `seconds` (HOLD_S) more: an import batch, more are coming."""
        hold = HOLD_S if seconds is None else seconds
        self._held_until = max(self._held_until, time.monotonic() + hold)

    def _unhold(self) -> None:
        self._held_until = 0.0
        self._unheld.set()

    async def _wait_while_held(self) -> None:
        while (left := self._held_until - time.monotonic()) > 0:
            self._unheld.clear()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(left):  # not wait_for: on 3.11 it can swallow a cancel
                    await self._unheld.wait()

    def _written(self) -> None:
        self.written += 1
        self.idle.clear()
        self.wake.set()

    async def start(self) -> None:
        """Load the model (off the loop, ~0.3 s, once per process), then build in the background."""
        try:
            await asyncio.get_running_loop().run_in_executor(self.executor, model_mod.model)
        except Exception as e:  # no model: search by words still works, and health says why
            log.exception("the embedding model did not load")
            self.state, self.error = "failed", f"{type(e).__name__}: {e}"
            return
        self.store.after_commit.append(self._written)
        self._task = asyncio.create_task(self._run(), name="embedder")

    async def stop(self) -> None:
        await stop_background(self.store, self._written, self._task)
        await self.deep.stop()
        await self.third.stop()
        self.executor.shutdown(wait=True, cancel_futures=True)
        self.spare.shutdown(wait=True, cancel_futures=True)

    async def _run(self) -> None:
        try:
            await self._load()
            self.loaded.set()
            row = await self.store.fetchone("SELECT COUNT(*) FROM embed_queue")
            self.pending = int(row[0]) if row else 0
            self.state = "building" if self.pending else "ready"
            while True:
                self.wake.clear()
                await self._wait_while_held()
                n = await self.step()
                if n == 0:
                    self.state, self.pending = "ready", 0
                if await partitions.step(self.store, self.index, self.executor, idle=n == 0):
                    continue  # the queue first, then the next piece of partitioning
                if n == 0:
                    if self.done - self.released_at >= RELEASE_AFTER:  # a build ended: give back its batches
                        self.released_at = self.done
                        await asyncio.get_running_loop().run_in_executor(self.executor, heap.release)
                    spare = self.spare if self.quiet is not None and self.quiet.now() else None
                    if await self.deep.step(self.executor, spare):
                        continue  # then the second model's queue, a batch at a time
                    if await self.third.step(self.executor, spare):
                        continue  # then the third voice's
                    if not self.wake.is_set():
                        self.idle.set()
                        await self.wake.wait()
                    self.idle.clear()
        except asyncio.CancelledError:
            raise
        except Exception as e:  # the lexical lane keeps working; say why the meaning lane stopped
            log.exception("embedder stopped")
            self.state, self.error = "failed", f"{type(e).__name__}: {e}"

    async def settled(self) -> None:
        """Wait (at most settle_s) for the few items written just now to be embedded, so that a
        note is found by meaning as soon as it is stored; never during a long backfill."""
        if self.state not in ("loading", "ready", "building") or self.pending > BATCH or self.idle.is_set():
            return
        self._unhold()  # a person is asking: the build goes on now
        target = self.written  # the commits made before this search, not the ones after it
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.settle_s
        while self.caught_up < target and not self.idle.is_set() and loop.time() < deadline:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout_at(deadline):
                    await self._stepped.wait()

    async def _load(self) -> None:
        with heap.collector_paused():
            await self._read_vectors()
        await partitions.load(self.store, self.index)

    async def _read_vectors(self) -> None:
        """Every stored vector's bits into the index, LOAD_ROWS a page."""
        after = 0
        while rows := await self.store.fetchall(_LOAD_SQL, (after, LOAD_ROWS)):
            self.index.add(
                [r[0] for r in rows],
                [CHUNK if r[1] else FACT for r in rows],
                [r[2] for r in rows],
                [r[3] for r in rows],
                [UNASSIGNED if r[4] is None else r[4] for r in rows],
            )
            after = rows[-1][0]

    async def step(self) -> int:
        """Embed one batch from the queue; how many queue rows it handled (0: the queue is empty)."""
        seen = self.written
        wanted = await take(self.store, _QUEUE_SQL, BATCH)
        queued = sum(map(len, wanted.values()))
        if not queued:
            self._pulse(seen)
            return 0
        self.state = "building"
        texts = await item_texts(self.store, wanted)
        keys = list(texts)
        m = await asyncio.get_running_loop().run_in_executor(self.executor, model_mod.model)
        windows = await asyncio.get_running_loop().run_in_executor(
            self.executor, m.embed_windows, [texts[k] for k in keys]
        )
        async with self.store.transaction() as conn:
            now = await item_texts(self.store, wanted)
            fresh = [(k, v) for k, v in zip(keys, windows, strict=True) if now.get(k) == texts[k]]
            # a changed item is still queued (its trigger re-queued it), for the next batch
            added = await self._write(conn, fresh)
            done = await dequeue(conn, _DEQUEUE_SQL, wanted, now, fresh)
        committed = self.written  # counting this commit
        self.index.add(*added)
        self.done += done
        self.pending = max(0, self.pending - done)
        if queued < BATCH:  # everything queued when the batch was read is now embedded
            if not self.pending and committed == seen + 1:  # no commit but ours since: ready now (a
                # search that waited for this batch reports it so)
                self.state = "ready"
            self._pulse(seen)
        return queued

    def _pulse(self, seen: int) -> None:
        self.caught_up = max(self.caught_up, seen)
        self._stepped.set()
        self._stepped = asyncio.Event()

    async def _write(
        self, conn: aiosqlite.Connection, fresh: list[tuple[tuple[str, int], model_mod.Vectors]]
    ) -> tuple[list[int], list[int], list[int], list[bytes], list[int]]:
        """Replace the vectors of these items (inside the writer's transaction: the ids are
        given here, after the largest one, so one executemany writes them all)."""
        for item, column in (("fact", "fact_id"), ("chunk", "chunk_id")):
            ids = [i for (kind, i), _v in fresh if kind == item]
            if ids:
                await conn.execute(
                    f"DELETE FROM vectors WHERE {column} IN (SELECT value FROM json_each(?))",  # noqa: S608
                    (json_ids(ids),),
                )
        async with conn.execute("SELECT COALESCE(MAX(id), 0) FROM vectors") as cur:
            row = await cur.fetchone()
        next_id = int(row[0]) + 1 if row else 1
        rows: list[tuple[Any, ...]] = []
        added: tuple[list[int], list[int], list[int], list[bytes], list[int]] = ([], [], [], [], [])
        for (item, item_id), vectors in fresh:
            bits, int8 = model_mod.sign_bits(vectors), model_mod.to_int8(vectors)
            parts = self.index.part_of(vectors)
            owner = (item_id, None) if item == "fact" else (None, item_id)
            for seq in range(len(vectors)):
                part = None if parts[seq] == UNASSIGNED else parts[seq]
                rows.append((next_id, *owner, seq, model_mod.NAME, bits[seq], int8[seq], part))
                added[0].append(next_id)
                added[1].append(FACT if item == "fact" else CHUNK)
                added[2].append(item_id)
                added[3].append(bits[seq])
                added[4].append(parts[seq])
                next_id += 1
        await conn.executemany(_INSERT_SQL, rows)
        return added

    async def drain(self) -> None:
        """Embed until the queue is empty (tests and tools; the server's task does this itself)."""
        while await self.step():
            pass
