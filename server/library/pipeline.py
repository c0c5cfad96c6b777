"""The one pipeline both lanes call: gate, extract, stamp, de-duplicate, chunk, store.

    add_url  -> fetch (server.library.fetch) -> save_page(html or text)
    add_text ---------------------------------> save_page(html or text)

`save_page` is the only writer of `documents` and `document_chunks`. The URL it was given
is the identity (normalised by provenance.stamp); the page's canonical URL is kept beside
it. Nothing is written before the text is in hand, so a failed (re-)fetch or an empty
extraction never touches a document already saved.
"""

from __future__ import annotations

import dataclasses
import hashlib
import time
from typing import Any

from server import activity, limits
from server.errors import Conflict, UnprocessableContent
from server.governance.policy import PolicyOwner
from server.library import queries
from server.library.chunking import chunk_text
from server.library.extract import Extracted, extract, tidy
from server.library.fetch import fetch_page
from server.probe_cache import ProbeCache
from server.provenance import Provenance, stamp
from server.searchtext import index_form
from server.store.db import Store
from server.textcaps import cap
from server.urls import MAX_URL_CHARS, host_of

SAVED, UPDATED, UNCHANGED = "saved", "updated", "unchanged"


@dataclasses.dataclass(frozen=True)
class SaveResult:
    outcome: str  # saved | updated | unchanged
    document: dict[str, Any]

    @property
    def status(self) -> int:
        return 201 if self.outcome == SAVED else 200

    def body(self) -> dict[str, Any]:
        return {"document": self.document, "outcome": self.outcome}


async def add_url(
    store: Store, cache: ProbeCache | None, policy: PolicyOwner, url: str, *, allow_private: bool = False
) -> SaveResult:
    """The server fetches the page, then the same pipeline as add_text. Every hop's site is
    gated BEFORE it is requested: a redirect must not carry a request (nor a page) to a site the
    person keeps out (e.g. a short link to a bank)."""
    host = stamp(url, None).source_host
    await policy.require_collect(host)

    async def gate(hop_url: str) -> None:
        await policy.require_collect(host_of(hop_url))

    fetched = await fetch_page(url, allow_private=allow_private, gate=gate)
    is_html = fetched.content_type != "text/plain"
    return await save_page(
        store,
        cache,
        policy,
        url=url,
        title=None,
        html=fetched.text if is_html else None,
        text=None if is_html else fetched.text,
        lane="url",
    )


async def save_page(
    store: Store,
    cache: ProbeCache | None,
    policy: PolicyOwner,
    *,
    url: str,
    title: str | None,
    html: str | None,
    text: str | None,
    lane: str,
) -> SaveResult:
    """Extract (HTML) or take (text), stamp, de-duplicate by normalised URL, chunk, store."""
    prov = stamp(url, title)  # validates the URL (400) before anything else
    await policy.require_collect(prov.source_host)
    extracted = await _extracted(url, html, text)
    if not extracted.text:
        raise UnprocessableContent("no readable text was found on the page; nothing was saved", code="no_text")
    title_used = cap(
        (title or "").strip() or extracted.title or prov.source_url, limits.STORED_TITLE_CHARS, ellipsis=True
    )
    prov = stamp(url, title_used)
    now = time.time()
    async with store.transaction() as conn:
        doc_id, outcome, n_chunks = await store_document(
            conn,
            prov,
            given_url=url.strip(),
            title=title_used,
            extracted=extracted,
            lane=lane,
            created_at=now,
            updated_at=now,
        )
        if outcome != UNCHANGED:
            await activity.record(
                conn,
                "document",
                f"{'Saved' if outcome == SAVED else 'Updated'} {title_used}",
                source_url=prov.source_url,
                source_host=prov.source_host,
                detail={"id": doc_id, "outcome": outcome, "chunks": n_chunks, "lane": lane},
            )
    if cache is not None:
        cache.invalidate_url(prov.source_url)
    document = await queries.get_document(store, doc_id, full_text=False)
    if document is None:  # deleted by another request between the commit and this read
        raise Conflict("the page was deleted while it was being saved", code="deleted_meanwhile")
    return SaveResult(outcome, document)


async def store_document(
    conn: Any,
    prov: Provenance,
    *,
    given_url: str,
    title: str,
    extracted: Extracted,
    lane: str,
    created_at: float,
    updated_at: float,
    only_if_newer: bool = False,
) -> tuple[int, str, int]:
    """Write one document and its chunks inside the caller's transaction, de-duplicated by its
    normalised URL: (id, saved | updated | unchanged, chunks). Also the import's way in (its own times;
    `only_if_newer`: an imported copy older than the stored one changes nothing)."""
    title, extracted = stored_meta(title, extracted)
    chunks = chunk_text(extracted.text)
    digest = hashlib.sha256(extracted.text.encode("utf-8")).hexdigest()
    row = await (
        await conn.execute(
            "SELECT id, text_sha256, markdown, updated_at, invalid_at FROM documents WHERE source_url = ?",
            (prov.source_url,),
        )
    ).fetchone()
    forgotten = row is not None and row["invalid_at"] is not None
    if row is not None and only_if_newer and forgotten:
        return int(row["id"]), UNCHANGED, len(chunks)  # an import never brings back what was forgotten
    same = row is not None and row["text_sha256"] == digest and row["markdown"] == extracted.markdown
    if row is not None and not forgotten and (same or (only_if_newer and row["updated_at"] >= updated_at)):
        return int(row["id"]), UNCHANGED, len(chunks)
    if row is not None:
        # saving a forgotten page again is the person keeping it anew: it is shown again, outside
        # the forget batch (whose undo then leaves it alone)
        doc_id, outcome = int(row["id"]), SAVED if forgotten else UPDATED
        await conn.execute(
            "UPDATE documents SET source_host = ?, source_ref = ?, given_url = ?, canonical_url = ?, title = ?, "
            "author = ?, published = ?, sitename = ?, language = ?, text = ?, markdown = ?, text_sha256 = ?, "
            "lane = ?, extractor = ?, updated_at = ?, invalid_at = NULL, forget_batch = NULL WHERE id = ?",
            (
                prov.source_host,
                prov.source_ref,
                given_url,
                extracted.canonical_url,
                title,
                extracted.author,
                extracted.date,
                extracted.sitename,
                extracted.language,
                extracted.text,
                extracted.markdown,
                digest,
                lane,
                extracted.extractor,
                updated_at,
                doc_id,
            ),
        )
        await conn.execute("DELETE FROM document_chunks WHERE document_id = ?", (doc_id,))
    else:
        outcome = SAVED
        cur = await conn.execute(
            "INSERT INTO documents(source_url, source_host, source_ref, given_url, canonical_url, title, author, "
            "published, sitename, language, text, markdown, text_sha256, lane, extractor, created_at, updated_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                prov.source_url,
                prov.source_host,
                prov.source_ref,
                given_url,
                extracted.canonical_url,
                title,
                extracted.author,
                extracted.date,
                extracted.sitename,
                extracted.language,
                extracted.text,
                extracted.markdown,
                digest,
                lane,
                extracted.extractor,
                created_at,
                updated_at,
            ),
        )
        doc_id = int(cur.lastrowid or 0)
    await _insert_chunks(conn, doc_id, prov, title, chunks)
    return doc_id, outcome, len(chunks)


def stored_meta(title: str, extracted: Extracted) -> tuple[str, Extracted]:
    """The title and page metadata as stored: cut like a client's fields (a page's own <title>
    or author can be any length), a canonical URL longer than a URL may be dropped (a cut URL
    would name another page)."""

    def short(value: str | None) -> str | None:
        return cap(value, limits.STORED_META_CHARS, ellipsis=True) if value else value

    canonical = extracted.canonical_url
    return cap(title, limits.STORED_TITLE_CHARS, ellipsis=True), dataclasses.replace(
        extracted,
        title=cap(extracted.title, limits.STORED_TITLE_CHARS, ellipsis=True) if extracted.title else None,
        author=short(extracted.author),
        sitename=short(extracted.sitename),
        date=short(extracted.date),
        language=short(extracted.language),
        canonical_url=canonical if canonical and len(canonical) <= MAX_URL_CHARS else None,
    )


async def _extracted(url: str, html: str | None, text: str | None) -> Extracted:
    if html is not None and html.strip():
        found = await extract(html, url)
        if found.text or not (text and text.strip()):
            return found
        # the page's HTML had nothing readable but its visible text was sent too: keep that
        return dataclasses.replace(found, text=tidy(text), extractor="text", markdown=None)
    return Extracted(text=tidy(text or ""), extractor="text")


async def _insert_chunks(conn: Any, doc_id: int, prov: Provenance, title: str, chunks: list[str]) -> None:
    """Every chunk carries the document's stamp (the same Provenance, from provenance.stamp). The
    title is indexed once per document, on its first chunk: a query for title words finds the
    document there, and a long title is not copied into the index of every chunk."""
    cols = prov.columns()
    search_title = index_form(title)
    await conn.executemany(
        "INSERT INTO document_chunks(document_id, seq, text, source_url, source_host, source_ref, "
        "search_title, search_text) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (
                doc_id,
                seq,
                chunk,
                cols["source_url"],
                cols["source_host"],
                cols["source_ref"],
                search_title if seq == 0 else "",
                index_form(chunk),
            )
            for seq, chunk in enumerate(chunks)
        ],
    )


async def delete_document(store: Store, cache: ProbeCache | None, doc_id: int) -> dict[str, Any] | None:
    """Remove a document, its chunks and their FTS rows; None when there is no such document."""
    async with store.transaction() as conn:
        row = await (
            await conn.execute(
                "SELECT d.id, d.title, d.source_url, d.source_host, "
                "(SELECT COUNT(*) FROM document_chunks c WHERE c.document_id = d.id) AS chunks "
                "FROM documents d WHERE d.id = ?",
                (doc_id,),
            )
        ).fetchone()
        if row is None:
            return None
        await conn.execute("DELETE FROM document_chunks WHERE document_id = ?", (doc_id,))
        await conn.execute("DELETE FROM documents WHERE id = ?", (doc_id,))
        await activity.record(
            conn,
            "document_removed",
            f"Removed {row['title']}",
            source_url=row["source_url"],
            source_host=row["source_host"],
            detail={"id": doc_id, "chunks": row["chunks"]},
        )
    if cache is not None:
        cache.invalidate_url(row["source_url"])
    return {"removed": True, "id": doc_id, "chunks": row["chunks"], "source_url": row["source_url"]}
