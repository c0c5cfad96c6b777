"""Idempotency-Key against the real server: a key is one write. The same key with the same body
replays the first answer; with another body it is 422 `idempotency_key_reused` and nothing is
written; requests with one key never run side by side, even after the first one fails."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

from server import appkeys
from tests.conftest import Api


async def count_notes(api: Api, text: str) -> int:
    row = await api.store.fetchone("SELECT COUNT(*) FROM facts WHERE text = ?", (text,))
    assert row is not None
    return int(row[0])


async def test_same_key_same_body_replays_the_first_answer(api: Api) -> None:
    body = {"url": "https://example.com/a", "title": "t", "text": "once-only-5520"}
    s1, a1 = await api.post("/api/notes", body, headers={"Idempotency-Key": "k-same"})
    s2, a2 = await api.post("/api/notes", body, headers={"Idempotency-Key": "k-same"})
    assert (s1, s2) == (201, 201) and a1 == a2
    assert await count_notes(api, "once-only-5520") == 1


async def test_a_key_reused_with_another_body_is_refused_and_writes_nothing(api: Api) -> None:
    s1, _ = await api.put(
        "/api/site-mode", {"host": "example.org", "mode": "collect"}, headers={"Idempotency-Key": "k-mode"}
    )
    assert s1 == 200
    status, body = await api.put(
        "/api/site-mode", {"host": "example.org", "mode": "off"}, headers={"Idempotency-Key": "k-mode"}
    )
    assert status == 422, body
    assert body["error"]["code"] == "idempotency_key_reused"
    _, mode = await api.get("/api/site-mode", params={"host": "example.org"})
    assert mode["mode"] == "collect"  # nothing written...
    status, _ = await api.put(
        "/api/site-mode", {"host": "example.org", "mode": "off"}, headers={"Idempotency-Key": "k-mode-2"}
    )
    assert status == 200  # ...and a new key does the new write
    _, mode = await api.get("/api/site-mode", params={"host": "example.org"})
    assert mode["mode"] == "off"

    n1 = {"url": "https://example.com/n", "title": "t", "text": "first-body-1182"}
    n2 = {**n1, "text": "second-body-1182"}
    assert (await api.post("/api/notes", n1, headers={"Idempotency-Key": "k-note"}))[0] == 201
    status, body = await api.post("/api/notes", n2, headers={"Idempotency-Key": "k-note"})
    assert (status, body["error"]["code"]) == (422, "idempotency_key_reused")
    assert await count_notes(api, "second-body-1182") == 0


async def _slow_body(parts: list[bytes], gate: asyncio.Event) -> AsyncIterator[bytes]:
    yield parts[0]
    await gate.wait()
    for part in parts[1:]:
        yield part


async def _post_slowly(api: Api, key: str, parts: list[bytes], gate: asyncio.Event) -> tuple[int, Any]:
    headers = {"Authorization": f"Bearer {api.token}", "Idempotency-Key": key, "Content-Type": "application/json"}
    async with api.session.post(api.base + "/api/notes", data=_slow_body(parts, gate), headers=headers) as r:
        return r.status, await r.json()


async def test_a_waiter_keeps_the_lock_after_the_first_request_fails(api: Api) -> None:
    """A holds the key and fails; B was waiting and now runs; C arrives while B runs. Before the
    fix C found no lock (A's exit dropped it) and wrote beside B: one key, two notes."""
    text = "stored-once-8841"
    good = json.dumps({"url": "https://example.com/k", "title": "t", "text": text}).encode()
    gate_a, gate_b = asyncio.Event(), asyncio.Event()
    a = asyncio.create_task(_post_slowly(api, "k-race", [b'{"url": ', b"not json"], gate_a))
    await asyncio.sleep(0.3)  # A holds the key's lock, reading its body
    b = asyncio.create_task(_post_slowly(api, "k-race", [good[:10], good[10:]], gate_b))
    await asyncio.sleep(0.3)  # B waits on the lock
    gate_a.set()
    assert (await a)[0] == 400  # A fails: B takes the lock, reads slowly
    await asyncio.sleep(0.3)
    c = asyncio.create_task(api.post("/api/notes", json.loads(good), headers={"Idempotency-Key": "k-race"}))
    await asyncio.sleep(0.3)
    assert not c.done()  # C waits for B (before the fix it wrote)
    gate_b.set()
    b_status, b_body = await b
    c_status, c_body = await c
    assert (b_status, c_status) == (201, 201) and b_body == c_body
    assert await count_notes(api, text) == 1
    assert len(api.app[appkeys.IDEMPOTENCY_LOCKS]) == 0  # nothing kept once nobody holds or waits
