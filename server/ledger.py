"""An opt-in request ledger (`wherefrom serve --ledger FILE`): one JSON line per request the
server received — time, method, path, query, header names (values of Authorization never),
Content-Length, the sha256 of the JSON body a route read, status. The farm cross-checks its wire tap against it."""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from aiohttp import web
from aiohttp.typedefs import Middleware

from server import appkeys

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def middleware(path: Path) -> Middleware:
    @web.middleware
    async def ledger_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
        status = 500
        try:
            response = await handler(request)
            status = response.status
            return response
        except web.HTTPException as exc:
            status = exc.status
            raise
        finally:
            body = request.get(appkeys.RAW_BODY, b"")
            entry = {
                "at": time.time(),
                "method": request.method,
                "path": request.path,
                "query": request.query_string,
                "headers": sorted(request.headers.keys()),
                "origin": request.headers.get("Origin"),
                "content_length": request.content_length,
                "body_sha256": hashlib.sha256(body).hexdigest() if body else None,
                "status": status,
            }
            with path.open("a", encoding="utf-8") as fh:
                fh.write(json.dumps(entry) + "\n")

    return ledger_middleware
