"""The activity log: every write appends a row (the side panel's Activity view reads it)."""

from __future__ import annotations

import json
import time
from typing import Any

import aiosqlite

from server.textcaps import cap

KINDS = ("note", "clip", "capture", "document", "document_removed", "rule", "forget", "undo", "import")


async def record(
    conn: aiosqlite.Connection,
    kind: str,
    summary: str,
    *,
    source_url: str | None = None,
    source_host: str | None = None,
    detail: dict[str, Any] | None = None,
) -> None:
    """Append one row; call inside the write's own transaction so both land or neither."""
    if kind not in KINDS:
        raise ValueError(f"unknown activity kind {kind}")
    await conn.execute(
        "INSERT INTO activity(at, kind, summary, source_url, source_host, detail) VALUES (?, ?, ?, ?, ?, ?)",
        (time.time(), kind, cap(summary, 200, ellipsis=True), source_url, source_host, json.dumps(detail or {})),
    )
