"""GET /api/health: the build that is actually running."""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path
from typing import Any

from aiohttp import web

import server
from server import appkeys
from server.api import Api

api = Api()
CODE_DIR = Path(server.__file__).resolve().parent


def code_mtime() -> float:
    return max(p.stat().st_mtime for p in CODE_DIR.rglob("*.py"))


@api.route("GET", "/api/health", summary="Liveness; build and database details with the token", auth=False)
async def health(request: web.Request, body: dict[str, Any], query: dict[str, Any]) -> dict[str, Any]:
    store = request.app[appkeys.STORE]
    try:
        row = await store.fetchone("PRAGMA quick_check")
        db_ok = row is not None and row[0] == "ok"
        schema = await store.schema_version()
    except Exception:  # noqa: BLE001 - health reports, it does not raise
        db_ok, schema = False, ""
    answer: dict[str, Any] = {"ok": db_ok, "version": server.__version__}
    if request.get(appkeys.AUTHED):
        answer["build"] = {
            "version": server.__version__,
            "code_path": str(CODE_DIR),
            "code_mtime": code_mtime(),
            "pid": os.getpid(),
            "started_at": request.app[appkeys.STARTED_AT],
            "uptime_s": round(time.time() - request.app[appkeys.STARTED_AT], 3),
        }
        answer["db"] = {
            "path": str(store.path),
            "schema_version": schema,
            "sqlite": sqlite3.sqlite_version,
            "ok": db_ok,
        }
    return answer
