"""Reading the activity log (rows are written by server.activity.record inside each write)."""

from __future__ import annotations

from typing import Any

from server import ages
from server.governance.visibility import visible
from server.store.db import Store


async def recent(store: Store, limit: int) -> list[dict[str, Any]]:
    rows = await store.fetchall(
        "SELECT a.id, a.at, a.kind, a.summary, a.source_url, a.source_host FROM activity a "  # noqa: S608
        f"WHERE {visible('activity', 'a')} ORDER BY a.at DESC, a.id DESC LIMIT ?",
        (limit,),
    )
    return [
        {
            "id": r["id"],
            "at": r["at"],
            "kind": r["kind"],
            "summary": r["summary"],
            "source_url": r["source_url"],
            "source_host": r["source_host"],
            "age": ages.age(r["at"], ages.INSTANT),
        }
        for r in rows
    ]
