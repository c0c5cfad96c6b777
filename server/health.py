"""GET /api/health: the build that is actually running."""

from __future__ import annotations

import asyncio
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


def probe_database(path: Path) -> tuple[bool, str]:
    """Open the file afresh (not the server's cached pages) and read the schema version."""
    try:
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=2)
        try:
            row = con.execute("SELECT name FROM schema_migrations ORDER BY name DESC LIMIT 1").fetchone()
        finally:
            con.close()
    except sqlite3.Error:
        return False, ""
    return (row is not None), (row[0] if row else "")


def code_mtime() -> float:
    return max(p.stat().st_mtime for p in CODE_DIR.rglob("*.py"))


@api.route("GET", "/api/health", summary="Liveness; build and database details with the token", auth=False)
async def health(request: web.Request, body: dict[str, Any], query: dict[str, Any]) -> dict[str, Any]:
    store = request.app[appkeys.STORE]
    db_ok, schema = await asyncio.to_thread(probe_database, store.path)
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
        answer["meaning"] = request.app[appkeys.EMBEDDER].progress()
    return answer
