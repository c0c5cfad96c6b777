"""Read-side of the library, for every reader outside it (page match, probe, search, forget).

Documents are answered once each, never as their chunks; chunks are never facts and only
leave this module as search hits ("best chunk per document").
"""

from __future__ import annotations

from typing import Any

import aiosqlite

from server import ages
from server.governance.visibility import visible
from server.store.db import Store
from server.textcaps import cap
from server.urls import clean_host, host_clause, normalise_url

EXCERPT_CHARS = 280  # a document's excerpt in lists and in page match
HIT_CHARS = 600  # a chunk's text in a search hit

_DOC_COLUMNS = (
    "d.id, d.title, d.text, d.markdown, d.source_url, d.source_host, d.source_ref, d.given_url, d.canonical_url, "  # noqa: S608 - built by visible()
    "d.author, d.published, d.sitename, d.language, d.lane, d.extractor, d.created_at, d.updated_at, "
    "(SELECT COUNT(*) FROM document_chunks c WHERE c.document_id = d.id AND "
    f"{visible('document_chunks', 'c')}) AS chunks"
)


# the documents saved from a page (its normalised URL), newest first
DOCUMENTS_FOR_PAGE_SQL = (
    f"SELECT {_DOC_COLUMNS} FROM documents d WHERE d.source_url = ? AND {visible('documents', 'd')} "  # noqa: S608
    "ORDER BY d.updated_at DESC, d.id DESC"
)


def document_summary(row: aiosqlite.Row, *, full_text: bool = False) -> dict[str, Any]:
    """The public shape of a document: provenance, metadata, an excerpt (or the full text and
    its Markdown: null for a page saved as text or before pages kept their structure)."""
    text: str = row["text"]
    shape: dict[str, Any] = {
        "id": row["id"],
        "title": row["title"],
        "text": text if full_text else cap(text, EXCERPT_CHARS, ellipsis=True),
        "source_url": row["source_url"],
        "source_host": row["source_host"],
        "source_ref": row["source_ref"],
        "kind": "document",
        "age": ages.age(row["updated_at"], ages.INSTANT),
        "chunks": row["chunks"],
        "given_url": row["given_url"],
        "canonical_url": row["canonical_url"],
        "author": row["author"],
        "published": row["published"],
        "sitename": row["sitename"],
        "language": row["language"],
        "lane": row["lane"],
        "extractor": row["extractor"],
        "chars": len(text),
        "created_at": row["created_at"],
        "updated_at": row["updated_at"],
    }
    if full_text:
        shape["markdown"] = row["markdown"]
    return shape


async def documents_for_page(store: Store, source_url: str) -> list[dict[str, Any]]:
    """Documents saved from this page (normalised URL), each once, with its chunk count."""
    rows = await store.fetchall(DOCUMENTS_FOR_PAGE_SQL, (normalise_url(source_url),))
    return [document_summary(r) for r in rows]


async def count_for_host(store: Store, host: str, *, subdomains: bool = True) -> int:
    """Live (not forgotten) documents from `host` and (unless not `subdomains`) its subdomains
    (whole labels: never notexample.com), off or not: what a forget of the host would hide."""
    h = clean_host(host)
    if not h:
        return 0
    clause = host_clause("source_host", "host") if subdomains else "source_host = :host"
    row = await store.fetchone(
        f"SELECT COUNT(*) FROM documents WHERE invalid_at IS NULL AND {clause}",  # noqa: S608 - built by host_clause
        {"host": h},
    )
    return int(row[0]) if row else 0


async def pages_for_host(store: Store, host: str, limit: int, *, subdomains: bool = True) -> list[dict[str, Any]]:
    """The shown documents of `host` and (unless not `subdomains`) its subdomains, newest first:
    {id, title, url} each (what forget names; a page of a site that is off now is counted by
    count_for_host, not named)."""
    h = clean_host(host)
    if not h or limit <= 0:
        return []
    clause = host_clause("d.source_host", "host") if subdomains else "d.source_host = :host"
    rows = await store.fetchall(
        f"SELECT d.id, d.title, d.source_url FROM documents d WHERE {visible('documents', 'd')} AND "  # noqa: S608
        f"{clause} ORDER BY d.updated_at DESC, d.id DESC LIMIT :limit",
        {"host": h, "limit": limit},
    )
    return [{"id": r["id"], "title": r["title"], "url": r["source_url"]} for r in rows]


# whether a chunk holds one term (1 or 0), for the coverage count only: the chunk itself is read
# by search_chunks through the visibility rule
_CHUNK_HOLDS_TERM = "(c.id IN (SELECT rowid FROM document_chunks_fts WHERE document_chunks_fts MATCH ?))"


async def search_chunks(store: Store, match: str, limit: int, *, any_of: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    """One FTS MATCH string (built by searchtext): the best chunk of each document, best first.
    With `any_of` (the any-term stage's terms, as MATCH expressions), `covered` counts how many of
    them a chunk holds, and more covered ranks first, as for facts (server.memory.search); `terms`
    lists the indexes of those it holds, comma-separated."""
    if limit <= 0 or not match:
        return []
    terms = list(any_of) if len(any_of) > 1 else []
    flags = [f"CASE WHEN {_CHUNK_HOLDS_TERM} THEN '{i},' ELSE '' END" for i in range(len(terms))]
    held = " || ".join(flags) or "''"
    covered = " + ".join(_CHUNK_HOLDS_TERM for _ in terms) or "0"
    rows = await store.fetchall(
        f"""
        WITH hits AS (
          SELECT rowid AS chunk_id, bm25(document_chunks_fts, 2.0, 1.0) AS rank
          FROM document_chunks_fts WHERE document_chunks_fts MATCH ?
        ), ranked AS (
          SELECT c.id, c.document_id, c.seq, c.text, c.source_url, c.source_host, c.source_ref, h.rank,
                 {covered} AS covered, {held} AS terms
          FROM hits h JOIN document_chunks c ON c.id = h.chunk_id WHERE {visible("document_chunks", "c")}
        ), best AS (
          SELECT *, ROW_NUMBER() OVER (PARTITION BY document_id ORDER BY covered DESC, rank, seq) AS rn FROM ranked
        )
        SELECT b.*, d.title, d.updated_at FROM best b JOIN documents d ON d.id = b.document_id
        WHERE b.rn = 1 AND {visible("documents", "d")} ORDER BY b.covered DESC, b.rank, d.updated_at DESC LIMIT ?
        """,  # noqa: S608 - built by visible() and here; the terms are bound
        (match, *terms, *terms, limit),
    )
    return [
        {
            "id": r["document_id"],
            "chunk": r["seq"],
            "text": cap(r["text"], HIT_CHARS, ellipsis=True),
            "source_url": r["source_url"],
            "source_host": r["source_host"],
            "source_ref": r["source_ref"],
            "title": r["title"],
            "kind": "document",
            "age": ages.age(r["updated_at"], ages.INSTANT),
            "rank": r["rank"],
            "covered": r["covered"],
            "terms": r["terms"],
        }
        for r in rows
    ]


async def list_documents(store: Store, limit: int) -> list[dict[str, Any]]:
    rows = await store.fetchall(
        f"SELECT {_DOC_COLUMNS} FROM documents d WHERE {visible('documents', 'd')} "  # noqa: S608 - constant columns
        "ORDER BY d.updated_at DESC, d.id DESC LIMIT ?",
        (limit,),
    )
    return [document_summary(r) for r in rows]


async def get_document(store: Store, doc_id: int, *, full_text: bool = True) -> dict[str, Any] | None:
    sql = f"SELECT {_DOC_COLUMNS} FROM documents d WHERE d.id = ? AND {visible('documents', 'd')}"  # noqa: S608
    row = await store.fetchone(sql, (doc_id,))
    return None if row is None else document_summary(row, full_text=full_text)


async def get_by_url(store: Store, source_url: str) -> dict[str, Any] | None:
    sql = f"SELECT {_DOC_COLUMNS} FROM documents d WHERE d.source_url = ? AND {visible('documents', 'd')}"  # noqa: S608
    row = await store.fetchone(sql, (source_url,))
    return None if row is None else document_summary(row)
