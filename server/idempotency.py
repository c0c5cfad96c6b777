"""Idempotent writes: a request carrying `Idempotency-Key` is carried out once; a repeat with the
same body gets the first answer back (with `Idempotent-Replay: true`). The extension's outbox
relies on it to deliver a write exactly once after the server was down.

- The key is claimed inside the write's own transaction (server.store.claims), so a write and
  its key commit together: after a crash between the commit and the answer, a retry finds the
  claim and is answered `200 {"replayed": true}` instead of writing twice.
- Requests with one key run one at a time: the key's lock lives while anyone holds or waits on
  it (KeyLocks), so a waiter never gets a fresh lock while another request runs with that key.
- The key remembers the SHA-256 of the body it was first used with: the same key with another
  body is 422 `idempotency_key_reused` (nothing is written, nothing replayed).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

from aiohttp import web

from server import appkeys
from server.api import DEFAULT_MAX_BODY, read_capped
from server.errors import BadRequest, UnprocessableContent
from server.store.claims import CLAIM, Claim

HEADER = "Idempotency-Key"
MAX_KEY_CHARS = 128
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class KeyLocks:
    """One asyncio.Lock per key, kept while any request holds or waits on it."""

    def __init__(self) -> None:
        self._items: dict[str, tuple[asyncio.Lock, int]] = {}

    @asynccontextmanager
    async def hold(self, key: str) -> AsyncIterator[None]:
        lock, users = self._items.get(key) or (asyncio.Lock(), 0)
        self._items[key] = (lock, users + 1)
        try:
            async with lock:
                yield
        finally:
            lock, users = self._items[key]
            if users <= 1:
                del self._items[key]
            else:
                self._items[key] = (lock, users - 1)

    def __len__(self) -> int:
        return len(self._items)


def fingerprint(raw: bytes) -> str:
    return hashlib.sha256(raw).hexdigest()


def _max_body(request: web.Request) -> int:
    spec = getattr(request.match_info.handler, "__wherefrom_spec__", None)
    return int(getattr(spec, "max_body", DEFAULT_MAX_BODY))


@web.middleware
async def idempotency_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    key = request.headers.get(HEADER)
    if key is None or request.method not in ("POST", "PUT", "DELETE"):
        return await handler(request)
    if not key or len(key) > MAX_KEY_CHARS or not key.isprintable():
        raise BadRequest(f"{HEADER} must be 1..{MAX_KEY_CHARS} printable characters", code="bad_idempotency_key")
    store = request.app[appkeys.STORE]
    route = f"{request.method} {request.path}"
    async with request.app[appkeys.IDEMPOTENCY_LOCKS].hold(key):
        row = await store.fetchone("SELECT route, status, response, body_sha256 FROM idempotency WHERE key = ?", (key,))
        if row is not None:
            if row["route"] != route:
                raise BadRequest(f"{HEADER} was already used for another route", code="idempotency_reuse")
            if row["body_sha256"] is not None:
                body = await read_capped(request, _max_body(request))
                if fingerprint(body) != row["body_sha256"]:
                    raise UnprocessableContent(
                        f"{HEADER} was already used with another body; use a new key for a new write",
                        code="idempotency_key_reused",
                    )
            if row["status"] == 0:  # committed, answer lost in a crash
                return web.json_response({"replayed": True}, headers={"Idempotent-Replay": "true"})
            return web.Response(
                text=row["response"],
                status=row["status"],
                content_type="application/json",
                headers={"Idempotent-Replay": "true"},
            )

        def body_hash() -> str | None:
            raw = request.get(appkeys.RAW_BODY)
            return fingerprint(raw if raw is not None else b"")

        token = CLAIM.set(Claim(key, route, body_hash))
        try:
            response = await handler(request)
        finally:
            CLAIM.reset(token)
        if isinstance(response, web.Response) and response.status < 300 and response.text is not None:
            text = response.text
            json.loads(text)  # only JSON answers are replayed
            async with store.transaction() as conn:
                await conn.execute(
                    "INSERT INTO idempotency(key, route, status, response, at, body_sha256) VALUES (?, ?, ?, ?, ?, ?) "
                    "ON CONFLICT(key) DO UPDATE SET status = excluded.status, response = excluded.response",
                    (key, route, response.status, text, time.time(), body_hash()),
                )
        return response
