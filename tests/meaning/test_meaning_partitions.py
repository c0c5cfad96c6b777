"""Partitions of the vectors (server.meaning.partitions, index): once a store holds enough
vectors, k-means centroids are written and every vector gets its nearest one, read back from
the file; a query by meaning then scans a few partitions, not everything, and still finds its
item; hidden items filling the nearest partitions never crowd a visible one out; a store whose
vectors predate the partitions gets them in the background, resumably. The thresholds are
lowered here so a few hundred notes stand for a million."""

from __future__ import annotations

import asyncio
import sqlite3
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from server import ages, appkeys
from server.meaning import index as index_mod
from server.meaning import lane, partitions
from server.meaning import model as model_mod
from server.meaning.embedder import Embedder
from server.meaning.index import FACT
from server.memory.facts import insert_fact
from server.provenance import stamp
from server.settings import Settings
from tests.conftest import Api, running_api
from tests.meaning.test_meaning import CRATE, PARAPHRASE, search
from tests.memory.test_memory_pagematch import note

TOPICS = (
    "violin bow rosin strings concert",
    "sourdough starter flour oven crust",
    "glacier ice moraine valley climate",
    "tax return deduction receipt accountant",
    "marathon training shoes knee pace",
    "tomato seedlings greenhouse compost soil",
    "kernel scheduler thread mutex latency",
    "watercolour paper brush pigment wash",
)


@pytest.fixture
def small(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(partitions, "TRAIN_AT", 200)
    monkeypatch.setattr(partitions, "ASSIGN_BATCH", 64)
    monkeypatch.setattr(index_mod, "SCAN_MIN", 20)
    monkeypatch.setattr(index_mod, "RELAYOUT_AT", 50)
    monkeypatch.setattr(lane, "FIRST_REACH", 0.1)


async def add_notes(api: Api, n: int, host: str = "notes.example", text: str = "") -> None:
    now = time.time()
    async with api.store.transaction() as conn:
        for i in range(n):
            body = text or f"{TOPICS[i % len(TOPICS)]} {TOPICS[(i * 3) % len(TOPICS)].split()[i % 5]} note {i}"
            await insert_fact(
                conn, stamp(f"https://{host}/{i}", "t"), kind="note", title="", text=f"{body} {i}",
                valid_at=now, granularity=ages.INSTANT, now=now,
            )  # fmt: skip


async def partitioned(embedder: Embedder) -> None:
    """Wait until every vector is embedded and assigned to a partition."""
    deadline = time.monotonic() + 120
    while not (embedder.idle.is_set() and embedder.index.centroids is not None and not embedder.index.unassigned(1)):
        assert time.monotonic() < deadline and embedder.state != "failed", embedder.progress()
        await asyncio.sleep(0.05)


def stored_partitions(db: Path) -> tuple[np.ndarray, dict[int, int | None], dict[int, bytes]]:
    with sqlite3.connect(db) as con:
        rows = con.execute("SELECT centroid FROM vector_partitions WHERE model = ? ORDER BY part", (model_mod.NAME,))
        centroids = np.frombuffer(b"".join(r[0] for r in rows), np.float32).reshape(-1, model_mod.DIMS)
        vectors = con.execute("SELECT id, part, vec FROM vectors").fetchall()
    return centroids, {r[0]: r[1] for r in vectors}, {r[0]: r[2] for r in vectors}


@pytest.mark.usefixtures("small")
async def test_vectors_are_partitioned_and_a_query_scans_a_few_partitions(api: Api, settings: Settings) -> None:
    embedder = api.app[appkeys.EMBEDDER]
    await add_notes(api, 400)
    target = await note(api, "https://dogs.example/crate", CRATE)
    await partitioned(embedder)
    centroids, parts, vecs = stored_partitions(settings.data_dir / "wherefrom.db")
    assert len(centroids) == partitions.parts_for(401) == 64
    assert len(parts) == 401 and None not in parts.values()
    for vid, part in parts.items():  # each vector's partition is its nearest centroid
        v = model_mod.from_int8([vecs[vid]])[0]
        assert np.dot(centroids[part], v) >= (centroids @ v).max() - 1e-3
    assert embedder.progress()["partitions"] == 64
    query = lane._embed_one(PARAPHRASE).astype(np.float32)
    ids, _bits, everything = embedder.index.scanned(query, FACT, lane.FIRST_REACH)
    assert not everything and len(ids) < 401 / 2  # a few partitions
    ids, _bits, everything = embedder.index.scanned(query, FACT, 1.0)
    assert everything and sorted(ids.tolist()) == sorted(parts)  # control: a full reach is every vector
    body = await search(api, CRATE, lanes="meaning", limit=1)  # the item's own words: its vector
    assert [r["id"] for r in body["results"]] == [target]
    new = await note(api, "https://dogs.example/crate2", "a glacier moraine note written after training")
    await partitioned(embedder)
    assert stored_partitions(settings.data_dir / "wherefrom.db")[1][max(parts) + 1] is not None  # at write
    body = await search(api, "a glacier moraine note written after training", lanes="meaning", limit=1)
    assert [r["id"] for r in body["results"]] == [new]


@pytest.mark.usefixtures("small")
async def test_hidden_items_in_the_nearest_partitions_do_not_crowd_visible_ones_out(api: Api) -> None:
    await add_notes(api, 300, host="hidden.example", text=PARAPHRASE)
    await add_notes(api, 100)
    await note(api, "https://dogs.example/crate", CRATE)
    await partitioned(api.app[appkeys.EMBEDDER])
    status, _ = await api.put("/api/site-mode", {"host": "hidden.example", "mode": "off"})
    assert status == 200
    body = await search(api, PARAPHRASE, lanes="meaning", limit=5)
    assert CRATE in [r["text"] for r in body["results"]]
    assert all(r["source_host"] != "hidden.example" for r in body["results"])
    status, _ = await api.put("/api/site-mode", {"host": "hidden.example", "mode": "collect"})
    body = await search(api, PARAPHRASE, lanes="meaning", limit=5)  # control: they are nearer
    assert len(body["results"]) == 5 and all(r["source_host"] == "hidden.example" for r in body["results"])


async def test_vectors_from_before_the_partitions_are_assigned_resumably(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = settings.data_dir / "wherefrom.db"
    monkeypatch.setattr(partitions, "TRAIN_AT", 10**9)
    async with running_api(settings) as api:
        await add_notes(api, 400)
        await asyncio.wait_for(api.app[appkeys.EMBEDDER].idle.wait(), 120)
    centroids, parts, _ = stored_partitions(db)
    assert len(centroids) == 0 and len(parts) == 400 and set(parts.values()) == {None}  # as an old store
    monkeypatch.setattr(partitions, "TRAIN_AT", 200)
    monkeypatch.setattr(partitions, "ASSIGN_BATCH", 64)
    real_step, steps, stopped = partitions.step, [], asyncio.Event()

    async def two_batches_then_stop(*args: object, **kw: bool) -> bool:
        if len(steps) == 3:  # trained, then two batches assigned: stop here, as a kill would
            stopped.set()
            await asyncio.Event().wait()
        did = await real_step(*args, **kw)  # type: ignore[arg-type]
        steps.extend([did] if did else [])
        return did

    monkeypatch.setattr(partitions, "step", two_batches_then_stop)
    async with running_api(settings) as api:
        await asyncio.wait_for(stopped.wait(), 60)
    monkeypatch.setattr(partitions, "step", real_step)
    first_centroids, first, _ = stored_partitions(db)
    done = {i: p for i, p in first.items() if p is not None}
    assert len(done) == 2 * 64 and len(first_centroids) == 64  # each batch committed whole
    async with running_api(settings) as api:
        await partitioned(api.app[appkeys.EMBEDDER])
    centroids, parts, _ = stored_partitions(db)
    assert np.array_equal(centroids, first_centroids)  # not trained again
    assert None not in parts.values() and all(parts[i] == p for i, p in done.items())


async def test_a_restart_loads_the_partitions_and_never_trains_again(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each start used to train new centroids and keep the vectors' numbers from the old ones."""
    monkeypatch.setattr(partitions, "TRAIN_AT", 200)
    monkeypatch.setattr(partitions, "ASSIGN_BATCH", 64)
    db = settings.data_dir / "wherefrom.db"
    async with running_api(settings) as api:
        await add_notes(api, 300)
        target = await note(api, "https://dogs.example/crate", CRATE)
        await partitioned(api.app[appkeys.EMBEDDER])
    centroids, parts, _ = stored_partitions(db)
    assert len(centroids) == 64 and None not in parts.values()
    trained: list[int] = []
    real_train = partitions.train

    async def counted(*args: Any) -> None:
        trained.append(1)
        await real_train(*args)

    monkeypatch.setattr(partitions, "train", counted)
    async with running_api(settings) as api:
        embedder = api.app[appkeys.EMBEDDER]
        await asyncio.wait_for(embedder.idle.wait(), 60)
        for _ in range(20):  # a few idle steps, where a training would happen
            await asyncio.sleep(0.05)
        assert embedder.index.centroids is not None and np.array_equal(embedder.index.centroids, centroids)
        assert embedder.progress()["index"] == "partitioned"
        body = await search(api, CRATE, lanes="meaning", limit=1)
        assert [r["id"] for r in body["results"]] == [target]
    assert trained == []
    assert stored_partitions(db)[1] == parts  # every vector keeps its partition
    # control: a store without centroids (as migration 0013 leaves one) trains at its next start
    with sqlite3.connect(db) as con:
        con.execute("DELETE FROM vector_partitions")
    async with running_api(settings) as api:
        await partitioned(api.app[appkeys.EMBEDDER])
    assert trained == [1]
