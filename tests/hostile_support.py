"""What the hostile-request tests share: the write routes with a valid body each, the tables
that must stay empty, and requests sent with exactly the headers given."""

from __future__ import annotations

import json
from typing import Any

from tests.conftest import Api

TABLES = (
    "facts",
    "conversations",
    "documents",
    "document_chunks",
    "activity",
    "idempotency",
    "site_rules",
    "forget_batches",
)

WRITES: dict[str, dict[str, Any]] = {
    "/api/notes": {"url": "https://example.com/a", "title": "A page", "text": "a note about the page"},
    "/api/clips": {"url": "https://example.com/a", "title": "A page", "text": "a selected sentence"},
    "/api/captures": {
        "url": "https://chatgpt.com/c/hostile",
        "title": "Chat",
        "site": "chatgpt",
        "turns": [{"role": "user", "text": "hello"}, {"role": "assistant", "text": "hi there"}],
    },
    "/api/library/add_text": {
        "url": "https://example.com/doc",
        "title": "A document",
        "text": "A paragraph of readable text that is long enough to keep. " * 5,
    },
}
ROUTES = list(WRITES)


async def counts(api: Api) -> dict[str, int]:
    out = {}
    for table in TABLES:
        row = await api.store.fetchone(f"SELECT count(*) AS n FROM {table}")  # noqa: S608 - fixed names
        out[table] = int(row["n"]) if row else 0
    return out


async def assert_nothing_stored(api: Api, before: dict[str, int] | None = None) -> None:
    now = await counts(api)
    if before is None:
        assert not any(now[t] for t in TABLES if t != "site_rules"), now
    else:
        assert now == before


async def raw(
    api: Api,
    method: str,
    path: str,
    *,
    data: Any = None,
    headers: dict[str, str] | None = None,
    params: dict[str, str] | None = None,
) -> tuple[int, Any]:
    """A request with exactly these headers (no Authorization unless given)."""
    async with api.session.request(method, api.base + path, data=data, headers=headers or {}, params=params) as r:
        text = await r.text()
        try:
            return r.status, json.loads(text) if text else None
        except ValueError:
            return r.status, text


def bearer(api: Api) -> dict[str, str]:
    return {"Authorization": f"Bearer {api.token}"}


def as_json(route: str) -> str:
    return json.dumps(WRITES[route])


async def open_local(api: Api) -> None:
    status, _ = await api.put("/api/site-mode", {"host": "127.0.0.1", "mode": "collect"})
    assert status == 200
