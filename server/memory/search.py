"""Full-text search over every kind of item: facts (here) and library chunks (server.library).

User text only reaches MATCH through searchtext.fts_queries: all terms first, then any
non-stop-word term when that finds nothing. bm25 ranks the all-terms stage; the any-term stage
ranks first by how many of the asked terms an item holds (coverage), then by bm25, so a turn
holding four of five words is not beaten by a short note holding one. Forgotten facts
(invalid_at) are filtered by joining back to facts, so the index never has to be rewritten by
a forget.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from typing import Any

import aiosqlite

from server.governance.visibility import visible
from server.library import queries as library
from server.memory.facts import fact_answer
from server.memory.snippets import add_snippets
from server.searchtext import STOP_WORDS, fts_queries, terms
from server.store.db import Store

VISIBLE_FACT = visible("facts", "f")
WINDOW = 400  # most hits ranked by bm25 for one MATCH (ranking costs ~20 us a hit)

# Hits are ranked exactly when there are at most WINDOW of them. Beyond that, bm25 over every
# hit would cost time in proportion to the store (a common word in 1M facts: seconds), so the
# newest WINDOW hits (rowid order, which is write order) are ranked instead.
_RANK_ALL_SQL = f"""
SELECT f.id, f.kind, f.title, f.text, f.source_url, f.source_host, f.source_ref, f.valid_at, f.granularity,
       f.role, f.conversation_id, f.markdown, f.via, hit.rank AS rank FROM (
  SELECT rowid, rank FROM facts_fts WHERE facts_fts MATCH :match
) hit JOIN facts f ON f.id = hit.rowid
WHERE {VISIBLE_FACT} AND (:host IS NULL OR f.source_host != :host)
ORDER BY hit.rank, f.valid_at DESC LIMIT :limit
"""  # noqa: S608 - built by visible()
_RANK_NEWEST_SQL = f"""
SELECT f.id, f.kind, f.title, f.text, f.source_url, f.source_host, f.source_ref, f.valid_at, f.granularity,
       f.role, f.conversation_id, f.markdown, f.via, hit.rank AS rank FROM (
  SELECT rowid, bm25(facts_fts) AS rank FROM facts_fts WHERE facts_fts MATCH :match
  ORDER BY rowid DESC LIMIT :window
) hit JOIN facts f ON f.id = hit.rowid
WHERE {VISIBLE_FACT} AND (:host IS NULL OR f.source_host != :host)
ORDER BY hit.rank, f.valid_at DESC LIMIT :limit
"""  # noqa: S608 - built by visible()
_UNRANKED_SQL = f"""
SELECT f.id, f.kind, f.title, f.text, f.source_url, f.source_host, f.source_ref, f.valid_at, f.granularity,
       f.role, f.conversation_id, f.markdown, f.via, 0.0 AS rank FROM (
  SELECT rowid FROM facts_fts WHERE facts_fts MATCH :match ORDER BY rowid DESC LIMIT :window
) hit JOIN facts f ON f.id = hit.rowid
WHERE {VISIBLE_FACT} AND (:host IS NULL OR f.source_host != :host)
ORDER BY f.valid_at DESC LIMIT :limit
"""  # noqa: S608 - built by visible()
# The any-term stage: the items holding the most of the terms (each term's list is read once,
# no ranking), the best WINDOW of them; within a coverage, bm25 orders when the any-term MATCH
# has at most RANK_CAP hits (bm25 of every hit, materialised once: FTS5 cannot rank a given
# set of rowids cheaply), else the newest first. `{union}` is filled with one SELECT per term.
RANK_CAP = 2_000
_COVER_CTE = """
WITH cov AS MATERIALIZED (
  SELECT rowid, COUNT(*) AS n FROM ({union}) GROUP BY rowid ORDER BY n DESC, rowid DESC LIMIT :window
)"""
_COVERED_SQL = (
    _COVER_CTE  # noqa: S608 - built by visible()
    + f""",
hit AS MATERIALIZED (SELECT rowid, bm25(facts_fts) AS rank FROM facts_fts WHERE facts_fts MATCH :match)
SELECT f.id, f.kind, f.title, f.text, f.source_url, f.source_host, f.source_ref, f.valid_at, f.granularity,
       f.role, f.conversation_id, hit.rank AS rank, cov.n AS covered
FROM cov JOIN hit ON hit.rowid = cov.rowid JOIN facts f ON f.id = cov.rowid
WHERE {VISIBLE_FACT} AND (:host IS NULL OR f.source_host != :host)
ORDER BY cov.n DESC, hit.rank, f.valid_at DESC LIMIT :limit
"""  # noqa: S608 - built by visible()
)
_COVERED_NEWEST_SQL = (
    _COVER_CTE
    + f"""
SELECT f.id, f.kind, f.title, f.text, f.source_url, f.source_host, f.source_ref, f.valid_at, f.granularity,
       f.role, f.conversation_id, 0.0 AS rank, cov.n AS covered
FROM cov JOIN facts f ON f.id = cov.rowid
WHERE {VISIBLE_FACT} AND (:host IS NULL OR f.source_host != :host)
ORDER BY cov.n DESC, cov.rowid DESC LIMIT :limit
"""  # noqa: S608 - built by visible()
)
# one term's rowids, for the coverage count only: the rows themselves are read by _COVERED_SQL,
# which joins facts through the visibility rule
_TERM_ROWIDS = "SELECT rowid FROM facts_fts WHERE facts_fts MATCH :t{n}"
_COUNT_SQL = "SELECT COUNT(*) FROM (SELECT rowid FROM facts_fts WHERE facts_fts MATCH ? LIMIT ?)"

# bm25 reads the whole list of every term in the MATCH to weigh it (~1 us a fact holding the
# term), so a term in more than COMMON facts is left out of ranked queries: it weighs nearly
# nothing and would cost time in proportion to the store.
COMMON = 5_000


@dataclasses.dataclass(frozen=True)
class Stage:
    match: str
    ranked: bool = True
    any_of: tuple[str, ...] = ()  # the any-term stage: its terms, ranked by how many an item holds


async def hits(store: Store, match: str, cap: int = WINDOW + 1) -> int:
    """How many facts (live or not) match, counted up to `cap` (cheap: no ranking)."""
    row = await store.fetchone(_COUNT_SQL, (match, cap))
    return int(row[0]) if row else 0


async def fts_facts(
    store: Store,
    match: str,
    limit: int,
    *,
    exclude_host: str | None = None,
    ranked: bool = True,
    any_of: tuple[str, ...] = (),
) -> list[aiosqlite.Row]:
    """Live facts for one MATCH string, best first, each with its bm25 `rank` (and for an
    any-term stage, `covered`: how many of `any_of` it holds, which orders first)."""
    covering = ranked and len(any_of) > 1
    n = await hits(store, match, RANK_CAP + 1 if covering else WINDOW + 1)
    if n == 0:
        return []
    params: dict[str, Any] = {"match": match, "limit": limit, "host": exclude_host, "window": WINDOW}
    if covering:
        union = " UNION ALL ".join(_TERM_ROWIDS.format(n=i) for i in range(len(any_of)))
        params.update({f"t{i}": fts_queries(w)[0] for i, w in enumerate(any_of)})
        sql = _COVERED_SQL if n <= RANK_CAP else _COVERED_NEWEST_SQL
        return await store.fetchall(sql.replace("{union}", union), params)
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
    # a term no fact holds is rare too: library documents may hold it (counts are of facts)
    rare = [w for w in content if counts[w] <= WINDOW]
    if rare and len(rare) < len(content):
        yield Stage(fts_queries(" ".join(rare))[-1], any_of=tuple(rare))
    else:
        yield Stage(stages[-1], any_of=tuple(content))


async def lexical(store: Store, q: str, limit: int) -> tuple[list[dict[str, Any]], Stage | None]:
    """The words lane: the best `limit` items of the first stage that finds any, and that stage
    (None when none does). Each result carries `words`: 1.0 when it holds every term (the
    all-terms stage), else the share of the asked terms it holds (server.memory.ranking reads it)."""
    async for stage in match_stages(store, q):
        facts = await fts_facts(store, stage.match, limit, ranked=stage.ranked, any_of=stage.any_of)
        chunks = await library.search_chunks(store, stage.match, limit, any_of=stage.any_of)
        ranked: list[tuple[int, float, int, dict[str, Any]]] = [
            (-_covered(r), float(r["rank"]), n, fact_answer(r)) for n, r in enumerate(facts)
        ]
        ranked += [
            (-int(c.get("covered", 0)), float(c["rank"]), len(ranked) + n, _document_hit(c))
            for n, c in enumerate(chunks)
        ]
        ranked.sort(key=lambda t: t[:3])
        results = []
        for neg_covered, _rank, _n, item in ranked[:limit]:
            share = -neg_covered / len(stage.any_of) if len(stage.any_of) > 1 else 0.5 if stage.any_of else 1.0
            results.append({**item, "words": round(share, 3)})
        if results:
            return results, stage
    return [], None


async def search(store: Store, q: str, limit: int) -> dict[str, Any]:
    """Words only (GET /api/search?lanes=words): the lexical lane with its snippets."""
    results, stage = await lexical(store, q, limit)
    if stage is not None:
        await add_snippets(store, stage.match, results)
    return {"results": results}


def _covered(row: aiosqlite.Row) -> int:
    return int(row["covered"]) if "covered" in row.keys() else 0


def _document_hit(hit: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in hit.items() if k not in ("rank", "covered")}
    out.setdefault("kind", "document")
    return out
