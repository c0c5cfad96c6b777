"""What memory holds about the page in front of the person: four tiers, and the probe.

  exact     live facts whose source_url is this page
  site      live facts of the same host, not in exact (newest first)
  related   live facts close in meaning to the page's title (and description), from other sites
            (so never in the tiers above); by the title's words while the vectors are loading
  documents library documents saved from this page, each once (never their chunks)

Facts are notes, clips and chat turns only — document chunks live in another table and can
never reach a fact tier. The probe answers counts; green is exact or documents, nothing weaker.

For an `off` host both answer empty before any query of the store: the decision reads only
the policy snapshot (server.governance.policy), which is cached in memory.
"""

from __future__ import annotations

import re
import sqlite3
from typing import Any

from server.governance.policy import PolicyOwner
from server.governance.visibility import visible
from server.library import queries as library
from server.meaning import lane
from server.meaning.embedder import Embedder
from server.meaning.index import BitIndex
from server.memory.facts import ANSWER_COLUMNS, fact_answer
from server.memory.search import fts_facts, match_stages
from server.probe_cache import ProbeCache
from server.store.db import Store
from server.urls import host_of, normalise_url

EXACT_LIMIT = 50
SITE_LIMIT = 20
RELATED_LIMIT = 10
RELATED_MIN = 0.3  # the cosine a related fact needs (a good paraphrase: server.memory.ranking)
DESCRIPTION_CHARS = 1_000


_EXACT_SQL = (
    f"SELECT {ANSWER_COLUMNS} FROM facts f WHERE f.source_url = ? AND {visible('facts', 'f')} "  # noqa: S608
    "ORDER BY f.valid_at DESC, f.id DESC LIMIT ?"
)
_SITE_SQL = (
    f"SELECT {ANSWER_COLUMNS} FROM facts f WHERE f.source_host = ? AND {visible('facts', 'f')} "  # noqa: S608
    "AND f.source_url != ? ORDER BY f.valid_at DESC, f.id DESC LIMIT ?"
)


def _page_rows(con: sqlite3.Connection, source_url: str, host: str) -> tuple[list[Any], list[Any], list[Any]]:
    """The exact, site and documents tiers' rows (source_url normalised)."""
    return (
        con.execute(_EXACT_SQL, (source_url, EXACT_LIMIT)).fetchall(),
        con.execute(_SITE_SQL, (host, source_url, SITE_LIMIT)).fetchall(),
        con.execute(library.DOCUMENTS_FOR_PAGE_SQL, (source_url,)).fetchall(),
    )


def _empty_tiers() -> dict[str, list[Any]]:
    return {"exact": [], "site": [], "related": [], "documents": []}


async def page_match(
    store: Store,
    policy: PolicyOwner,
    url: str,
    title: str,
    *,
    description: str = "",
    embedder: Embedder | None = None,
) -> dict[str, Any]:
    source_url = normalise_url(url)
    host = host_of(source_url)
    mode = (await policy.mode_for(host)).mode
    if mode == "off":
        return {"mode": mode, "green": False, "tiers": _empty_tiers()}
    # by meaning, the related tier and the other tiers' reads run in one hop on one reader: run on
    # two readers at once, a page-match cost ~0.6 ms more CPU and was slower at p50/p95/p99 (bench_memory
    # at 1M items: the server's threads and the client share two cores)
    text = related_text(title, description)
    index = await _meaning_index(embedder)
    if index is not None:
        (exact_rows, site_rows, document_rows), near = await store.read_with(
            lambda con: (
                _page_rows(con, source_url, host),
                lane.nearest_in(con, index, text, lane.FACT, RELATED_LIMIT, exclude_host=host) if text else [],
            )
        )
        related = [{**fact_answer(r), "meaning": round(s, 3)} for s, r in near if s >= RELATED_MIN]
    else:  # while the vectors load: by the title's words
        exact_rows, site_rows, document_rows = await store.read_with(lambda con: _page_rows(con, source_url, host))
        related = [fact_answer(r) for r in await _related(store, title, host)]
    documents = [library.document_summary(r) for r in document_rows]
    tiers = {
        "exact": [fact_answer(r) for r in exact_rows],
        "site": [fact_answer(r) for r in site_rows],
        "related": related,
        "documents": documents,
    }
    return {"mode": mode, "green": bool(tiers["exact"] or documents), "tiers": tiers}


_SITE_SUFFIX = re.compile(r"\s+[-|–—·:]\s+[^-|–—·:]{1,60}$")


def strip_site_name(title: str) -> str:
    """'Walnut - Wikipedia' -> 'Walnut': the site's name is on every page of the site and says
    nothing about this one (the exact and site tiers already cover the site)."""
    stripped = _SITE_SUFFIX.sub("", title.strip())
    return stripped if stripped.strip() else title


def related_text(title: str, description: str) -> str:
    """What the related tier looks for by meaning: the page's title (its site's name left out)
    and its description."""
    return "\n".join(t for t in (strip_site_name(title), description.strip()) if t).strip()


async def _meaning_index(embedder: Embedder | None) -> BitIndex | None:
    """The index the related tier looks in by meaning (facts, never document chunks, from other
    sites, at least RELATED_MIN close to related_text); None while the vectors are loading."""
    if embedder is None:
        return None
    await embedder.settled()
    return embedder.index if embedder.ready else None


async def _related(store: Store, title: str, host: str) -> list[Any]:
    """Facts matching the title (all words, then any word), from other sites: the exact and
    site tiers already hold everything of this host, so nothing here repeats them."""
    async for stage in match_stages(store, strip_site_name(title), correct=False):
        if not stage.ranked:
            return []  # every title word is on thousands of facts: nothing is related by it
        rows = await fts_facts(store, stage.match, RELATED_LIMIT, exclude_host=host, any_of=stage.any_of)
        if rows:
            return rows
    return []


async def page_probe(store: Store, cache: ProbeCache, policy: PolicyOwner, url: str) -> dict[str, Any]:
    source_url = normalise_url(url)
    host = host_of(source_url)
    mode = (await policy.mode_for(host)).mode
    if mode == "off":
        return {"mode": mode, "green": False, "exact": 0, "documents": 0}
    counts = cache.get(source_url)
    if counts is None:
        row = await store.fetchone(
            f"SELECT COUNT(*) FROM facts f WHERE f.source_url = ? AND {visible('facts', 'f')}",  # noqa: S608
            (source_url,),
        )
        exact = int(row[0]) if row else 0
        documents = len(await library.documents_for_page(store, source_url))
        counts = {"exact": exact, "documents": documents}
        cache.put(source_url, host, counts)
    # the mode is resolved on every call (a rule change must show at once); only counts are cached
    return {"mode": mode, "green": bool(counts["exact"] or counts["documents"]), **counts}
