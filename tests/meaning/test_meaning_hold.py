"""While import batches keep arriving the embedder holds back (their writes first: every turn is
searchable by its words at once), and a search that waits for fresh vectors ends the hold."""

from __future__ import annotations

import asyncio

import pytest

from server import appkeys
from server.meaning import embedder as embedder_mod
from tests.conftest import Api
from tests.meaning.test_meaning import CRATE, PARAPHRASE, search, texts

CHAT = "https://claude.ai/chat/hold-test"


def batch(text: str) -> dict[str, object]:
    turn = {"role": "user", "text": text, "native_id": "n1", "valid_at": 1_700_000_000, "granularity": "instant"}
    conv = {"url": CHAT, "site": "claude", "title": "Puppy", "turns": [turn]}
    return {"import_id": "hold", "source": "claude", "conversations": [conv]}


async def counts(api: Api) -> tuple[int, int]:
    queued = await api.store.fetchone("SELECT COUNT(*) FROM embed_queue")
    vectors = await api.store.fetchone("SELECT COUNT(*) FROM vectors")
    assert queued is not None and vectors is not None
    return int(queued[0]), int(vectors[0])


async def wait_idle(api: Api) -> None:
    await asyncio.wait_for(api.app[appkeys.EMBEDDER].idle.wait(), 60)


async def test_an_import_batch_holds_the_build_back_and_a_search_ends_the_hold(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    await wait_idle(api)
    # positive control: without an import, a written item gets its vector by itself
    status, _ = await api.post("/api/notes", {"url": "https://bread.example/s", "text": "Feed the starter daily."})
    assert status == 201
    await wait_idle(api)
    assert await counts(api) == (0, 1)

    monkeypatch.setattr(embedder_mod, "HOLD_S", 600.0)
    status, answer = await api.post("/api/import", batch(CRATE))
    assert status == 200 and answer["turns"]["added"] == 1, answer
    await asyncio.sleep(1.5)  # the embedder had time to run; it is held
    assert await counts(api) == (1, 1)
    # the turn is found by its words at once, while its vector waits
    assert CRATE in texts(await search(api, "crate training puppy", lanes="words"))
    # a search by meaning ends the hold and waits (settle_s) for the vector
    assert CRATE in texts(await search(api, PARAPHRASE, lanes="meaning"))
    assert await counts(api) == (0, 2)
