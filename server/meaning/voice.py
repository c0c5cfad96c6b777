"""A model's voice by meaning beside the static model: its vectors of the items it reads, one per
window, built in the background from its own queue (`{prefix}_queue`, filled by triggers) into its
own tables (`{prefix}_fact_vectors`, `{prefix}_chunk_vectors`), in batches off the event loop,
resumably; and its own scan of their sign bits (server.meaning.deep_scan). The second model
(server.meaning.deep) speaks for every item; the third (server.meaning.third) only for the items
the second does not read and e5 does (`third.reads`), and keeps no vector for the others (its
`embed` gives None for them: a vector it held of an item that changed is deleted).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import Any, Protocol

from server import heap
from server.meaning import deep_scan
from server.meaning import model as model_mod
from server.meaning.deep_scan import DeepScan
from server.meaning.items import COLUMN, ITEMS, Key, dequeue, item_texts, take
from server.store.db import Store

log = logging.getLogger("wherefrom")
BATCH = 16  # items a step: ~0.15 s of one core (the second model), so the static model's queue waits little behind it
# queued items a voice that speaks for few of them (`Voice.speaks`) looks at in a step: those it does
# not speak for leave its queue at once, at most BATCH of the others are embedded (an English
# store's third voice: 1,200 new notes took 74 steps, and search said "across languages is being
# built" meanwhile)
SKIM = 256


@dataclass(frozen=True)
class Voice:
    name: str  # the model's, stored with each vector
    prefix: str  # of its tables
    available: Callable[[], bool]
    load: Callable[[], object]  # what it needs to start (its model, or what decides), once per process
    embed: Callable[[list[str]], list[model_mod.Vectors | None]]  # per text its windows' vectors, or None
    # its reads, literal SQL per item (tests/test_visibility_readers.py reads them): the vectors of
    # these items (to rescore candidates whose items are read through the visibility rule), every
    # vector a page at a time (its scan's bits), and how many it holds; no item is answered from them
    vectors_sql: dict[str, str]
    load_sql: dict[str, str]
    count_sql: str
    centre: Callable[[], model_mod.Vectors | None] = lambda: None  # its scan's bits around it
    sample: int = 0  # windows its scan keeps as vectors (DeepScan)
    # whether it speaks for an item's text (cheap), for a voice that keeps no vector of most items
    # (its `embed` gives None for the others): its queue is skimmed (SKIM)
    speaks: Callable[[str], bool] | None = None

    def table(self, item: str) -> str:
        return f"{self.prefix}_{item}_vectors"

    def queue_sql(self) -> str:
        return f"SELECT id FROM {self.prefix}_queue WHERE item = ? ORDER BY id LIMIT ?"  # noqa: S608 - names of ours

    def dequeue_sql(self) -> str:
        return f"DELETE FROM {self.prefix}_queue WHERE item = ? AND id IN (SELECT value FROM json_each(?))"  # noqa: S608


class Finish(Protocol):
    """What a voice builds once its queue is empty and it holds a vector (the third voice's:
    server.meaning.scale); it is "building" meanwhile."""

    def due(self) -> bool: ...

    async def step(self, executor: Executor) -> int: ...  # a piece of it; how much (0: nothing to do)


class VoiceLane:
    """A voice's state and background build (driven by server.meaning.embedder)."""

    def __init__(
        self, store: Store, voice: Voice, *, enabled: bool = True, off_reason: str = "", finish: Finish | None = None
    ) -> None:
        self.store = store
        self.voice = voice
        self.finish = finish
        self.state = "loading"  # -> building -> ready, or failed; "off" when it does not run:
        self.off_reason = ""
        if not enabled:
            self.state, self.off_reason = "off", off_reason
        elif not voice.available():
            self.state, self.off_reason = "off", "not installed"
        self.pending = 0
        self.done = 0
        self.error: str | None = None
        self.scan = DeepScan(sample=voice.sample)  # its own candidates: the sign bits of every window it read
        # while no one is asking (server.quiet), a batch of its own on a spare thread beside each
        # step's: bench_backfill --notes 6000 [--quiet], one thread 116-118 items/s, both 171
        self._on_spare: asyncio.Task[int] | None = None
        self._claimed: set[Key] = set()  # the items of the batches being embedded
        self._taking = asyncio.Lock()

    @property
    def on(self) -> bool:
        return self.state in ("building", "ready")

    def progress(self) -> dict[str, Any]:
        return {
            "model": self.voice.name,
            "state": self.state,
            "pending": self.pending,
            "embedded": self.done,
            "own_candidates": self.scan.state,  # its own scan beside the static model's candidates
            **({"error": self.error} if self.error else {}),
            **({"off": self.off_reason} if self.off_reason else {}),
        }

    async def _start(self, executor: Executor) -> None:
        """Load the model (off the loop; the first time on a machine it is built, ~3 s). Not
        before the static model's queue is empty: a large build's memory is given back first."""
        try:
            await asyncio.get_running_loop().run_in_executor(executor, self._load)
            await self._load_scan(executor)  # (which loads the third voice's model, holding vectors of it)
        except Exception as e:  # search by the static model goes on; health says why
            log.exception("the embedding model %s did not load", self.voice.name)
            self.state, self.error = "failed", f"{type(e).__name__}: {e}"
            return
        self.pending = await self._queued()
        self.state = "building" if self.pending else "ready"

    async def _centred(self, executor: Executor) -> None:
        """Its scan's centre, asked for when it first holds a vector (the third voice's model is
        loaded only then: a store of English only never loads it)."""
        if self.scan.centre is None and self.scan.items == 0:
            self.scan.centre = await asyncio.get_running_loop().run_in_executor(executor, self.voice.centre)

    def _load(self) -> None:
        """Its model, then the memory its loading freed given back (e5's: ~77 -> ~53 MB)."""
        self.voice.load()
        heap.release()

    async def _load_scan(self, executor: Executor) -> None:
        """The bits of every window read so far (not when the store holds more than the scan keeps)."""
        counted = await self.store.fetchone(self.voice.count_sql)
        if counted and int(counted[0]) > deep_scan.MAX_ITEMS:
            self.scan.too_many()
            return
        with heap.collector_paused():
            for item in ITEMS:
                after = 0
                while rows := await self.store.fetchall(self.voice.load_sql[item], (after,)):
                    await self._centred(executor)
                    self.scan.add(item, [(int(r[0]), bytes(r[1])) for r in rows])
                    after = int(rows[-1][0])

    async def _queued(self) -> int:
        row = await self.store.fetchone(f"SELECT COUNT(*) FROM {self.voice.prefix}_queue")  # noqa: S608
        return int(row[0]) if row else 0

    async def step(self, executor: Executor, spare: Executor | None = None) -> int:
        """Embed one batch of the queue; how many queue rows it handled (0: empty, or off). Given
        `spare` while no batch runs there, another batch of its own starts on it, not waited for:
        a spare thread that gets little of a busy machine holds back its own batch only. The first
        call loads the model."""
        if self.state == "loading":
            await self._start(executor)
        if not self.on:
            return 0
        if spare is not None and self._on_spare is None:
            self._on_spare = asyncio.create_task(self._spare_step(spare), name=f"{self.voice.prefix}-spare")
        n = await self._guarded(executor)
        if not n and self._on_spare is not None:  # the queue's last batch is on the spare thread
            n = await asyncio.shield(self._on_spare)
        if not n and self.finish is not None and (self.scan.items or self.scan.over) and self.finish.due():
            n = await self._finishing(self.finish, executor)
        return n

    async def _finishing(self, finish: Finish, executor: Executor) -> int:
        self.state = "building"
        try:
            n = await finish.step(executor)
        except asyncio.CancelledError:
            raise
        except Exception:  # its vectors are built: it is ready without what would follow them
            log.exception("the embedding model %s did not finish its build", self.voice.name)
            self.finish, n = None, 0
        if self.finish is None or not self.finish.due():
            self.state = "ready"
        return n

    async def _spare_step(self, spare: Executor) -> int:
        try:
            return await self._guarded(spare)
        finally:
            self._on_spare = None

    async def stop(self) -> None:
        """Cancel the spare thread's batch (its transaction rolls back: the batch stays queued)."""
        if self._on_spare is not None:
            self._on_spare.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._on_spare

    async def _guarded(self, executor: Executor) -> int:
        try:
            return await self._step(executor)
        except asyncio.CancelledError:
            raise
        except Exception as e:  # the static model's lane goes on
            log.exception("the embedding model %s stopped", self.voice.name)
            self.state, self.error = "failed", f"{type(e).__name__}: {e}"
            return 0

    async def _step(self, executor: Executor) -> int:
        size = BATCH if self.voice.speaks is None else SKIM
        async with self._taking:  # the items of a batch running on the other thread are not taken again
            wanted = _unclaimed(
                await take(self.store, self.voice.queue_sql(), size + len(self._claimed)), self._claimed, size
            )
            texts: dict[Key, str] | None = None
            silent: set[Key] = set()
            if self.voice.speaks is not None:
                wanted, texts, silent = await self._skimmed(executor, wanted, self.voice.speaks)
            mine = {(item, i) for item, ids in wanted.items() for i in ids}
            self._claimed |= mine
        try:
            if not mine:
                if not self._claimed:
                    self.state, self.pending = "ready", 0
                return 0
            self.state = "building"
            if len(mine) > self.pending:  # items written since the count: count again (small then)
                self.pending = await self._queued()
            return await self._embed(executor, wanted, texts, silent)
        finally:
            self._claimed -= mine

    async def _skimmed(
        self, executor: Executor, wanted: dict[str, list[int]], speaks: Callable[[str], bool]
    ) -> tuple[dict[str, list[int]], dict[Key, str], set[Key]]:
        """Of `wanted`, the items it does not speak for (or gone: they leave the queue in this step)
        and the first BATCH it speaks for (embedded in it), with the texts read of them, and those it
        does not speak for (not asked again in `_embed`); the rest stay queued."""
        texts = await item_texts(self.store, wanted)
        keys = list(texts)
        flags = await asyncio.get_running_loop().run_in_executor(executor, lambda: [speaks(texts[k]) for k in keys])
        theirs = [k for k, f in zip(keys, flags, strict=True) if f][:BATCH]
        keep = {k for k, f in zip(keys, flags, strict=True) if not f} | set(theirs)
        kept = {item: [i for i in ids if (item, i) in keep or (item, i) not in texts] for item, ids in wanted.items()}
        silent = {k for k, f in zip(keys, flags, strict=True) if not f}
        return kept, {k: t for k, t in texts.items() if k in keep}, silent

    async def _embed(
        self,
        executor: Executor,
        wanted: dict[str, list[int]],
        texts: dict[Key, str] | None = None,
        silent: set[Key] | frozenset[Key] = frozenset(),
    ) -> int:
        """Embed `wanted` (their `texts` when the caller read them already; `silent`: those its skim
        found it does not speak for, which keep no vector)."""
        texts = texts if texts is not None else await item_texts(self.store, wanted)
        keys = list(texts)
        spoken = [k for k in keys if k not in silent]
        said: list[model_mod.Vectors | None] = []
        if spoken:
            spoken_texts = [texts[k] for k in spoken]
            said = await asyncio.get_running_loop().run_in_executor(executor, self.voice.embed, spoken_texts)
        by_key = dict(zip(spoken, said, strict=True))
        # an item's windows, one after another; None: it keeps no vector of this item
        blobs = [None if (w := by_key.get(k)) is None else b"".join(model_mod.to_int8(w)) for k in keys]
        async with self.store.transaction() as conn:
            now = await item_texts(self.store, wanted)
            # a changed item is still queued (its trigger re-queued it), for a later batch
            fresh = [(k, b) for k, b in zip(keys, blobs, strict=True) if now.get(k) == texts[k]]
            for item in ITEMS:
                table, column = self.voice.table(item), COLUMN[item]
                await conn.executemany(
                    f"INSERT OR REPLACE INTO {table}({column}, model, vec) VALUES (?, ?, ?)",  # noqa: S608
                    [(i, self.voice.name, blob) for (kind, i), blob in fresh if kind == item and blob is not None],
                )
                await conn.executemany(
                    f"DELETE FROM {table} WHERE {column} = ?",  # noqa: S608
                    [(i,) for (kind, i), blob in fresh if kind == item and blob is None],
                )
            done = await dequeue(conn, self.voice.dequeue_sql(), wanted, now, fresh)
        if any(b is not None for _k, b in fresh):
            await self._centred(executor)
        for item in ITEMS:
            self.scan.add(item, [(i, b) for (kind, i), b in fresh if kind == item and b is not None])
        self.done += done
        self.pending = max(0, self.pending - done)
        return sum(map(len, wanted.values()))


def _unclaimed(wanted: dict[str, list[int]], claimed: set[Key], batch: int) -> dict[str, list[int]]:
    """The first `batch` of `wanted` (facts first, then chunks) not in `claimed`."""
    out: dict[str, list[int]] = {}
    for item in ITEMS:
        room = batch - sum(map(len, out.values()))
        out[item] = [i for i in wanted.get(item, []) if (item, i) not in claimed][:room]
    return out


__all__ = ["BATCH", "Finish", "Voice", "VoiceLane"]
