"""Idempotent writes: a request carrying `Idempotency-Key` is carried out once; a repeat gets
the first answer back (with `Idempotent-Replay: true`). The extension's outbox relies on it to
deliver a write exactly once after the server was down.

The key is claimed inside the write's own transaction (Store.transaction reads CLAIM), so a
write and its key commit together: after a crash between the commit and the answer, a retry
finds the claim and is answered `200 {"replayed": true}` instead of writing twice.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import time
from collections.abc import Awaitable, Callable

import aiosqlite
from aiohttp import web

from server import appkeys
from server.errors import BadRequest

HEADER = "Idempotency-Key"
MAX_KEY_CHARS = 128
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
LOCKS: web.AppKey[dict[str, asyncio.Lock]] = web.AppKey("idempotency_locks")


class Claim:
    def __init__(self, key: str, route: str) -> None:
        self.key, self.route, self.claimed = key, route, False


CLAIM: contextvars.ContextVar[Claim | None] = contextvars.ContextVar("idempotency_claim", default=None)


async def claim_in(conn: aiosqlite.Connection) -> None:
    """Called by Store.transaction before COMMIT: record the request's key with its write."""
    claim = CLAIM.get()
    if claim is not None and not claim.claimed:
        await conn.execute(
            "INSERT OR IGNORE INTO idempotency(key, route, status, response, at) VALUES (?, ?, 0, '', ?)",
            (claim.key, claim.route, time.time()),
        )
        claim.claimed = True


@web.middleware
async def idempotency_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    key = request.headers.get(HEADER)
    if key is None or request.method not in ("POST", "PUT", "DELETE"):
        return await handler(request)
    if not key or len(key) > MAX_KEY_CHARS or not key.isprintable():
        raise BadRequest(f"{HEADER} must be 1..{MAX_KEY_CHARS} printable characters", code="bad_idempotency_key")
    locks = request.app[LOCKS]
    lock = locks.setdefault(key, asyncio.Lock())
    store = request.app[appkeys.STORE]
    route = f"{request.method} {request.path}"
    try:
        async with lock:
            row = await store.fetchone("SELECT route, status, response FROM idempotency WHERE key = ?", (key,))
            if row is not None:
                if row["route"] != route:
                    raise BadRequest(f"{HEADER} was already used for another route", code="idempotency_reuse")
                if row["status"] == 0:  # committed, answer lost in a crash
                    return web.json_response({"replayed": True}, headers={"Idempotent-Replay": "true"})
                return web.Response(
                    text=row["response"], status=row["status"], content_type="application/json",
                    headers={"Idempotent-Replay": "true"},
                )
            token = CLAIM.set(Claim(key, route))
            try:
                response = await handler(request)
            finally:
                CLAIM.reset(token)
            if isinstance(response, web.Response) and response.status < 300 and response.text is not None:
                text = response.text
                json.loads(text)  # only JSON answers are replayed
                async with store.transaction() as conn:
                    await conn.execute(
                        "INSERT INTO idempotency(key, route, status, response, at) VALUES (?, ?, ?, ?, ?) "
                        "ON CONFLICT(key) DO UPDATE SET status = excluded.status, response = excluded.response",
                        (key, route, response.status, text, time.time()),
                    )
            return response
    finally:
        if not lock.locked():
            locks.pop(key, None)
