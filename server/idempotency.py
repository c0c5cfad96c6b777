"""Idempotent writes: a request carrying `Idempotency-Key` is carried out once; a repeat
gets the first answer back (with `Idempotent-Replay: true`). The extension's outbox relies
on it to deliver a write exactly once after the server was down."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

from aiohttp import web

from server import appkeys
from server.errors import BadRequest

HEADER = "Idempotency-Key"
MAX_KEY_CHARS = 128
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
LOCKS: web.AppKey[dict[str, asyncio.Lock]] = web.AppKey("idempotency_locks")


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
    async with lock:
        row = await store.fetchone("SELECT route, status, response FROM idempotency WHERE key = ?", (key,))
        if row is not None:
            if row["route"] != route:
                raise BadRequest(f"{HEADER} was already used for another route", code="idempotency_reuse")
            return web.Response(
                text=row["response"], status=row["status"], content_type="application/json",
                headers={"Idempotent-Replay": "true"},
            )
        response = await handler(request)
        if isinstance(response, web.Response) and response.status < 300 and response.text is not None:
            async with store.transaction() as conn:
                await conn.execute(
                    "INSERT OR IGNORE INTO idempotency(key, route, status, response, at) VALUES (?, ?, ?, ?, ?)",
                    (key, route, response.status, response.text, time.time()),
                )
        locks.pop(key, None)
        return response
