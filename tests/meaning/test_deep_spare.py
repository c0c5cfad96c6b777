"""The second model's build on two threads while no one is asking (server.quiet), through the real
server: batches run on the spare thread too, each item is read once and its stored vectors are
its own text's, byte for byte; a spare thread that gets no CPU holds back its own batch only;
while requests keep coming the build keeps to one thread (control: the spare given nothing)."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import numpy as np
import pytest

from server import appkeys
from server.meaning import minilm, voice
from server.meaning import model as model_mod
from server.meaning.items import item_text
from server.quiet import Quiet
from server.settings import Settings
from tests.conftest import Api, running_api

pytestmark = pytest.mark.usefixtures("second_model")

SUBJECTS = [
    "The puppy",
    "Our landlord",
    "A violinist",
    "The bakery",
    "My accountant",
    "The glacier guide",
    "Grandma",
    "The mechanic",
]
ACTS = ["moved the meeting to", "complained about", "recommended", "forgot to pay for", "repaired"]
NOTES = [f"{SUBJECTS[n % 8]} {ACTS[n // 8]} {n * 37 % 101} items on day {n}." for n in range(40)]


class Counting(ThreadPoolExecutor):
    """A one-thread executor that counts the texts it was given to embed."""

    def __init__(self) -> None:
        super().__init__(max_workers=1)
        self.texts = 0

    def count(self, args: tuple[Any, ...]) -> None:
        self.texts += len(args[0]) if args and isinstance(args[0], list) else 0

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        self.count(args)
        return super().submit(fn, *args, **kwargs)


async def build(api: Api) -> tuple[Counting, dict[int, str]]:
    """Store NOTES with the embedder's spare thread counted; wait until both models read them."""
    embedder = api.app[appkeys.EMBEDDER]
    spare = embedder.spare = Counting()
    ids = {}
    for n, text in enumerate(NOTES):
        status, body = await api.post("/api/notes", {"url": f"https://notes.example/{n}", "text": text})
        assert status == 201, body
        ids[int(body["id"])] = text
    await asyncio.wait_for(embedder.idle.wait(), 120)
    deep_progress = embedder.progress()["deep"]
    assert (deep_progress["state"], deep_progress["embedded"]) == ("ready", len(NOTES))  # each read once
    return spare, ids


async def assert_each_item_has_its_own_vectors(api: Api, ids: dict[int, str]) -> None:
    """Each stored blob is its own item's text read alone, byte for byte (a window's vector does
    not depend on what was read beside it: server.meaning.minilm)."""
    rows = await api.store.fetchall(
        "SELECT v.fact_id, v.vec, f.title, f.text FROM deep_fact_vectors v JOIN facts f ON f.id = v.fact_id"
    )
    assert sorted(int(r[0]) for r in rows) == sorted(ids)
    for r in rows:
        (alone,) = minilm.model().embed_windows([item_text(r[2], r[3])])
        assert bytes(r[1]) == b"".join(model_mod.to_int8(alone)), ids[int(r[0])]


async def test_while_no_one_asks_half_of_each_batch_runs_on_the_spare_thread(settings: Settings) -> None:
    async with running_api(settings, Quiet(quiet_s=0.0)) as api:  # quiet whenever no request is open
        spare, ids = await build(api)
        assert spare.texts > 0  # the second half of at least one double batch
        await assert_each_item_has_its_own_vectors(api, ids)


async def test_while_requests_keep_coming_the_build_keeps_to_one_thread(settings: Settings) -> None:
    async with running_api(settings, Quiet(quiet_s=3600.0)) as api:  # the notes' own requests: never quiet again
        spare, ids = await build(api)
        assert spare.texts == 0
        await assert_each_item_has_its_own_vectors(api, ids)


class Held(Counting):
    """A spare thread that gets no CPU until `go` is set (a machine busy with other work)."""

    def __init__(self) -> None:
        super().__init__()
        self.go = threading.Event()

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        def held() -> Any:
            self.go.wait(60)
            return fn(*args, **kwargs)

        self.count(args)
        return ThreadPoolExecutor.submit(self, held)


async def test_a_spare_thread_that_gets_no_cpu_holds_back_its_own_batch_only(settings: Settings) -> None:
    async with running_api(settings, Quiet(quiet_s=0.0)) as api:
        embedder = api.app[appkeys.EMBEDDER]
        spare = embedder.spare = Held()
        for n, text in enumerate(NOTES):
            status, body = await api.post("/api/notes", {"url": f"https://notes.example/{n}", "text": text})
            assert status == 201, body

        async def read() -> int:
            row = await api.store.fetchone("SELECT COUNT(*) FROM deep_fact_vectors")
            return int(row[0]) if row else 0

        for _ in range(1200):  # until every item but the held batch's is read (60 s at most)
            if spare.texts and await read() == len(NOTES) - spare.texts:
                break
            await asyncio.sleep(0.05)
        held = spare.texts
        assert 0 < held <= voice.BATCH
        assert await read() == len(NOTES) - held
        await asyncio.sleep(0.5)
        assert await read() == len(NOTES) - held  # the held batch is not read by the other thread meanwhile
        assert not embedder.idle.is_set() and embedder.progress()["deep"]["state"] == "building"
        spare.go.set()
        await asyncio.wait_for(embedder.idle.wait(), 60)
        assert await read() == len(NOTES)
        assert embedder.progress()["deep"]["embedded"] == len(NOTES)


def test_a_window_s_vector_is_the_same_whatever_is_read_beside_it() -> None:
    model = minilm.model()
    (alone,) = model.embed_windows([NOTES[0]])
    beside = model.embed_windows([NOTES[1], NOTES[0] * 30, NOTES[0], "x"])
    assert np.array_equal(beside[2], alone)
    assert len(beside[1]) > 1  # read in windows: a longer batch-mate than any note
    assert not np.array_equal(beside[0], alone)  # control: another text's vector differs


def test_quiet_is_no_request_open_and_none_ended_within_quiet_s() -> None:
    quiet = Quiet(quiet_s=0.2)
    assert quiet.now()  # nothing asked yet
    with quiet.asking():
        assert not quiet.now()
    assert not quiet.now()  # just ended
    time.sleep(0.25)
    assert quiet.now()


async def test_every_request_marks_the_server_asked(settings: Settings) -> None:
    async with running_api(settings, Quiet(quiet_s=3600.0)) as api:
        quiet = api.app[appkeys.QUIET]
        assert quiet.now()  # control: no request yet
        status, _body = await api.get("/api/health", auth=False)
        assert status in (200, 401)
        assert not quiet.now()
