"""Full-text search over every kind of item: facts (here) and library chunks (server.library).

User text only reaches MATCH through searchtext.fts_queries: all terms first, then any
non-stop-word term when that finds nothing. bm25 ranks; forgotten facts (invalid_at) are
filtered by joining back to facts, so the index never has to be rewritten by a forget.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from typing import Any

import aiosqlite

from server.governance.visibility import visible
from server.library import queries as library
from server.memory.facts import fact_answer
from server.searchtext import STOP_WORDS, fts_queries, terms
from server.store.db import Store

VISIBLE_FACT = visible("facts", "f")
WINDOW = 400   # most hits ranked by bm25 for one MATCH (ranking costs ~20 us a hit)

# Hits are ranked exactly when there are at most WINDOW of them. Beyond that, bm25 over every
# hit would cost time in proportion to the store (a common word in 1M facts: seconds), so the
# newest WINDOW hits (rowid order, which is write order) are ranked instead.
_RANK_ALL_SQL = f"""
SELECT f.id, f.kind, f.title, f.text, f.source_url, f.source_host, f.source_ref, f.valid_at, f.granularity,
       f.role, f.conversation_id, f.markdown, hit.rank AS rank FROM (
  SELECT rowid, rank FROM facts_fts WHERE facts_fts MATCH :match
) hit JOIN facts f ON f.id = hit.rowid
WHERE {VISIBLE_FACT} AND (:host IS NULL OR f.source_host != :host)
ORDER BY hit.rank, f.valid_at DESC LIMIT :limit
"""  # noqa: S608 - built by visible()
_RANK_NEWEST_SQL = f"""
SELECT f.id, f.kind, f.title, f.text, f.source_url, f.source_host, f.source_ref, f.valid_at, f.granularity,
       f.role, f.conversation_id, f.markdown, hit.rank AS rank FROM (
  SELECT rowid, bm25(facts_fts) AS rank FROM facts_fts WHERE facts_fts MATCH :match
  ORDER BY rowid DESC LIMIT :window
) hit JOIN facts f ON f.id = hit.rowid
WHERE {VISIBLE_FACT} AND (:host IS NULL OR f.source_host != :host)
ORDER BY hit.rank, f.valid_at DESC LIMIT :limit
"""  # noqa: S608 - built by visible()
_UNRANKED_SQL = f"""
SELECT f.id, f.kind, f.title, f.text, f.source_url, f.source_host, f.source_ref, f.valid_at, f.granularity,
       f.role, f.conversation_id, f.markdown, 0.0 AS rank FROM (
  SELECT rowid FROM facts_fts WHERE facts_fts MATCH :match ORDER BY rowid DESC LIMIT :window
) hit JOIN facts f ON f.id = hit.rowid
WHERE {VISIBLE_FACT} AND (:host IS NULL OR f.source_host != :host)
ORDER BY f.valid_at DESC LIMIT :limit
"""  # noqa: S608 - built by visible()
_COUNT_SQL = "SELECT COUNT(*) FROM (SELECT rowid FROM facts_fts WHERE facts_fts MATCH ? LIMIT ?)"

# bm25 reads the whole list of every term in the MATCH to weigh it (~1 us a fact holding the
# term), so a term in more than COMMON facts is left out of ranked queries: it weighs nearly
# nothing and would cost time in proportion to the store.
COMMON = 5_000


@dataclasses.dataclass(frozen=True)
class Stage:
    match: str
    ranked: bool = True


async def hits(store: Store, match: str, cap: int = WINDOW + 1) -> int:
    """How many facts (live or not) match, counted up to `cap` (cheap: no ranking)."""
    row = await store.fetchone(_COUNT_SQL, (match, cap))
    return int(row[0]) if row else 0


async def fts_facts(
    store: Store, match: str, limit: int, *, exclude_host: str | None = None, ranked: bool = True
) -> list[aiosqlite.Row]:
    """Live facts for one MATCH string, best first, each with its bm25 `rank`."""
    n = await hits(store, match)
    if n == 0:
        return []
    params = {"match": match, "limit": limit, "host": exclude_host, "window": WINDOW}
    sql = _UNRANKED_SQL if not ranked else _RANK_ALL_SQL if n <= WINDOW else _RANK_NEWEST_SQL
    return await store.fetchall(sql, params)


async def match_stages(store: Store, text: str) -> AsyncIterator[Stage]:
    """The MATCH strings for user text, in order (searchtext.fts_queries builds every one):
    all terms; then any non-stop-word term. Stop words, and terms in more than COMMON facts, are left out
    (see COMMON); when some remaining terms are rare (at most WINDOW facts), the any-term stage
    asks for those only, so a word on every other page does not drown them. When every term is
    common, the newest facts holding them all come back unranked."""
    words = terms(text)
    if not words:
        return
    # stop words are taken as common without asking (counting one reads its whole list)
    counts = {w: COMMON + 1 if w in STOP_WORDS else await hits(store, fts_queries(w)[0], COMMON + 1) for w in words}
    kept = [w for w in words if counts[w] <= COMMON]
    if not kept:
        yield Stage(fts_queries(text)[0], ranked=False)
        return
    stages = fts_queries(" ".join(kept))
    yield Stage(stages[0])
    if len(stages) < 2:
        return
    content = [w for w in kept if w not in STOP_WORDS] or kept
    rare = [w for w in content if 0 < counts[w] <= WINDOW]
    if rare and len(rare) < len(content):
        yield Stage(fts_queries(" ".join(rare))[-1])
    else:
        yield Stage(stages[-1])


async def search(store: Store, q: str, limit: int) -> dict[str, Any]:
    results: list[dict[str, Any]] = []
    async for stage in match_stages(store, q):
        facts = await fts_facts(store, stage.match, limit, ranked=stage.ranked)
        chunks = await library.search_chunks(store, stage.match, limit)
        ranked: list[tuple[float, int, dict[str, Any]]] = [
            (float(r["rank"]), n, fact_answer(r)) for n, r in enumerate(facts)
        ]
        ranked += [(float(c["rank"]), len(ranked) + n, _document_hit(c)) for n, c in enumerate(chunks)]
        ranked.sort(key=lambda t: (t[0], t[1]))
        results = [item for _rank, _n, item in ranked[:limit]]
        if results:
            break
    return {"results": results}


def _document_hit(hit: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in hit.items() if k != "rank"}
    out.setdefault("kind", "document")
    return out
