"""What the library route tests share: an article page, a local site whose pages a test sets,
settings that let add_url reach that site (tests only), and read-backs of what was stored."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from server.settings import Settings
from tests.conftest import Api, free_port

PARAS = [
    f"Paragraph {i} of the walnut lantern article explains provenance, the axis memory systems forget. "
    + " ".join(["Each stored chunk knows where it came from, and the panel shows each document once."] * 3)
    for i in range(12)
]
ARTICLE_TEXT = "\n".join(PARAS)


def article(title: str = "Walnut lantern", canonical: str | None = None, paras: list[str] | None = None) -> str:
    link = f'<link rel="canonical" href="{canonical}">' if canonical else ""
    body = "".join(f"<p>{p}</p>" for p in (paras or PARAS))
    return (
        f'<!doctype html><html lang="en"><head><title>{title}</title>{link}'
        '<meta name="author" content="Ada Lovelace"></head><body>'
        '<nav><a href="/">Home</a> <a href="/about">About us</a></nav>'
        f"<main><article><h1>{title}</h1>{body}</article></main>"
        "<footer>Copyright footer text that is not content</footer></body></html>"
    )


# A page trafilatura returns nothing for: the kind of fragment an extension may post (a
# page's app root without <html>/<head>); trafilatura's loader rejects a one-child fragment
# as "not valid HTML", the BeautifulSoup fallback reads its <main> without the navigation.
FALLBACK_PAGE = (
    '<div id="app"><main><nav>Menu Home About</nav><h1>Quince orchards</h1>'
    "<p>Quince orchards grow in the valley.</p><p>They flower in May.</p></main></div>"
)


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(data_dir=tmp_path / "data", port=free_port(), allow_private_fetch=True)


class Site:
    """A local web site whose pages tests change between requests."""

    def __init__(self) -> None:
        self.pages: dict[str, tuple[int, str, bytes, dict[str, str]]] = {}
        self.base = ""
        self.hits: dict[str, int] = {}

    def page(
        self,
        path: str,
        body: str | bytes,
        *,
        status: int = 200,
        ctype: str = "text/html; charset=utf-8",
        headers: dict[str, str] | None = None,
    ) -> str:
        raw = body.encode("utf-8") if isinstance(body, str) else body
        self.pages[path] = (status, ctype, raw, headers or {})
        return self.base + path

    async def handle(self, request: web.Request) -> web.StreamResponse:
        self.hits[request.path] = self.hits.get(request.path, 0) + 1
        if request.path not in self.pages:
            return web.Response(status=404, text="not found")
        status, ctype, raw, headers = self.pages[request.path]
        resp = web.Response(status=status, body=raw, headers=headers)
        if ctype:
            resp.headers["Content-Type"] = ctype
        return resp


async def table_counts(api: Api) -> dict[str, int]:
    out = {}
    for table in ("documents", "document_chunks", "document_chunks_fts"):
        out[table] = (await api.store.fetchall(f"SELECT COUNT(*) FROM {table}"))[0][0]  # noqa: S608
    out["activity"] = (
        await api.store.fetchall("SELECT COUNT(*) FROM activity WHERE kind IN ('document', 'document_removed')")
    )[0][0]
    return out


async def chunk_rows(api: Api, doc_id: int) -> list[Any]:
    return await api.store.fetchall(
        "SELECT seq, text, source_url, source_host, source_ref FROM document_chunks WHERE document_id = ? ORDER BY seq",
        (doc_id,),
    )


async def post_big(api: Api, route: str, body: dict[str, Any]) -> tuple[int, Any]:
    """POST raw UTF-8 JSON from a stream (a large body as bytes makes aiohttp warn)."""
    raw = json.dumps(body, ensure_ascii=False).encode("utf-8")
    return await api.call("POST", route, data=io.BytesIO(raw), headers={"Content-Type": "application/json"})  # type: ignore[arg-type]
