"""Full-text search over every kind of item: facts (here) and library chunks (server.library).

User text only reaches MATCH through searchtext (terms, term_match): all terms first, then any
non-stop-word term when that finds nothing. bm25 ranks the all-terms stage; the any-term stage
ranks first by how many of the asked terms an item holds (coverage), then by bm25, so a turn
holding four of five words is not beaten by a short note holding one. A word no item holds is
replaced by its one-edit spellings the index does hold (server.memory.typos).

Visibility (server.governance.visibility) is applied before any window is taken: the newest
WINDOW hits are the newest WINDOW *visible* hits, so hidden items never crowd visible ones out.
Forgotten facts (invalid_at) are filtered by joining back to facts, so the index never has to
be rewritten by a forget.

`lexical(store, q, limit)` is the lexical lane: ranked hits, each with a strength and the terms
it holds. `search()` is that lane with snippets, in the answer shape of GET /api/search.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from typing import Any

from server.governance.visibility import visible
from server.library import queries as library
from server.memory.coverage import HOST, WINDOW, count_matches, covered_facts
from server.memory.facts import ANSWER_COLUMNS, fact_answer
from server.memory.snippets import add_snippets
from server.memory.typos import MAX_TRIED, MAX_WORDS, corrections
from server.searchtext import STOP_WORDS, match_all, match_any, term_match, terms
from server.store.db import Store

VISIBLE_FACT = visible("facts", "f")
CORRECTED_WEIGHT = 0.75  # a word found by its corrected spelling counts this much in a strength

# Hits are ranked exactly when there are at most WINDOW of them. Beyond that, bm25 over every
# hit would cost time in proportion to the store (a common word in 1M facts: seconds), so the
# newest WINDOW visible hits (rowid order, which is write order) are ranked instead.
_RANK_ALL_SQL = f"""
SELECT {ANSWER_COLUMNS}, hit.rank AS rank FROM (
  SELECT rowid, rank FROM facts_fts WHERE facts_fts MATCH :match
) hit JOIN facts f ON f.id = hit.rowid
WHERE {VISIBLE_FACT} AND {HOST}
ORDER BY hit.rank, f.valid_at DESC LIMIT :limit
"""  # noqa: S608 - built by visible()
_RANK_NEWEST_SQL = f"""
SELECT * FROM (
  SELECT {ANSWER_COLUMNS}, bm25(facts_fts) AS rank FROM facts_fts JOIN facts f ON f.id = facts_fts.rowid
  WHERE facts_fts MATCH :match AND {VISIBLE_FACT} AND {HOST}
  ORDER BY facts_fts.rowid DESC LIMIT :window
) ORDER BY rank, valid_at DESC LIMIT :limit
"""  # noqa: S608 - built by visible()
_UNRANKED_SQL = f"""
SELECT * FROM (
  SELECT {ANSWER_COLUMNS}, 0.0 AS rank FROM facts_fts JOIN facts f ON f.id = facts_fts.rowid
  WHERE facts_fts MATCH :match AND {VISIBLE_FACT} AND {HOST}
  ORDER BY facts_fts.rowid DESC LIMIT :window
) ORDER BY valid_at DESC LIMIT :limit
"""  # noqa: S608 - built by visible()
# The any-term stage (coverage first) is server.memory.coverage.
RANK_CAP = 2_000  # bm25 orders within a coverage when the any-term MATCH has at most this many hits
_CHUNK_COUNT_SQL = (
    "SELECT COUNT(*) FROM (SELECT rowid FROM document_chunks_fts WHERE document_chunks_fts MATCH ? LIMIT 1)"
)

# bm25 reads the whole list of every term in the MATCH to weigh it (~1 us a fact holding the
# term), so a term in more than COMMON facts is left out of ranked queries: it weighs nearly
# nothing and would cost time in proportion to the store.
COMMON = 5_000


@dataclasses.dataclass(frozen=True)
class Term:
    """One asked word: `word` as asked (lowercased), `match` its MATCH expression, `spelled`
    the word it was found as (a correction, or the word itself)."""

    word: str
    match: str
    spelled: tuple[str, ...] = ()

    @property
    def corrected(self) -> bool:
        return bool(self.spelled) and self.spelled != (self.word,)


@dataclasses.dataclass(frozen=True)
class Stage:
    match: str
    ranked: bool = True
    any_of: tuple[str, ...] = ()  # the any-term stage: its terms' MATCH expressions, ranked by coverage
    terms: tuple[Term, ...] = ()  # the terms of this stage (all must match unless any_of)
    counted: frozenset[str] = frozenset()  # the distinctive asked words (a strength counts these)
    fallback: bool = False  # every word, after the rare ones found nothing: newest first, no bm25


@dataclasses.dataclass
class LexicalHit:
    """One lexical hit: the item (the shape search answers), how strongly it matched (0..1: the
    share of the query's distinctive words it holds, a corrected spelling counting
    CORRECTED_WEIGHT) and the words it holds (as found: a correction in place of a typo).
    `coverage` is the share of all the query's words (stop words left out) it is known to hold,
    common ones included and a corrected spelling counting in full: the fusion's weight of it."""

    item: dict[str, Any]
    strength: float
    terms: tuple[str, ...]
    match: str  # the MATCH string it was found by (for snippets)
    coverage: float = 0.0


async def hits(store: Store, match: str, cap: int = WINDOW + 1) -> int:
    """How many facts (live or not) match, counted up to `cap` (coverage.count_matches, on a reader)."""
    return await store.read_with(lambda con: count_matches(con, match, cap))


async def fts_facts(
    store: Store,
    match: str,
    limit: int,
    *,
    exclude_host: str | None = None,
    ranked: bool = True,
    any_of: tuple[str, ...] = (),
    rank_cap: int = RANK_CAP,
) -> list[Any]:
    """Live facts for one MATCH string, best first, each with its bm25 `rank` (and for an
    any-term stage, server.memory.coverage: `covered`, how many of `any_of` it holds, which
    orders first, and `terms`, the indexes in `any_of` of those it holds, comma-separated)."""
    if ranked and len(any_of) > 1:  # the any-term stage: coverage first, in one hop
        return await store.read_with(lambda con: covered_facts(con, match, any_of, limit, exclude_host, rank_cap))
    n = await hits(store, match)
    if n == 0:
        return []
    params: dict[str, Any] = {"match": match, "limit": limit, "host": exclude_host, "window": WINDOW}
    sql = _UNRANKED_SQL if not ranked else _RANK_ALL_SQL if n <= WINDOW else _RANK_NEWEST_SQL
    return await store.fetchall(sql, params)


async def _spelled(store: Store, words: list[str], counts: dict[str, int]) -> dict[str, Term]:
    """Each word as a Term; a word no fact and no library chunk holds gets its corrections
    (at most MAX_WORDS words a query, of at most MAX_TRIED looked up, the longest first)."""
    out = {w: Term(w, term_match(w), (w,)) for w in words}
    missing = sorted((w for w in words if counts[w] == 0), key=len, reverse=True)
    fixed = tried = 0
    for w in missing:
        if fixed >= MAX_WORDS or tried >= MAX_TRIED:
            break
        row = await store.fetchone(_CHUNK_COUNT_SQL, (out[w].match,))
        if row and int(row[0]):
            continue  # the library holds it as typed
        found = await corrections(store, w, COMMON)
        tried += found is not None
        if found:
            fixed += 1
            group = [term_match(c) for c in found]
            out[w] = Term(w, group[0] if len(group) == 1 else "(" + " OR ".join(group) + ")", tuple(found))
    return out


async def match_stages(store: Store, text: str, *, correct: bool = True) -> AsyncIterator[Stage]:
    """The MATCH strings for user text, in order (searchtext builds every term): all terms; then
    any non-stop-word term. Stop words, and terms in more than COMMON facts, are left out (see
    COMMON); when some remaining terms are rare (at most WINDOW facts), the any-term stage asks
    for those only, so a word on every other page does not drown them. When every term is
    common, the newest facts holding them all come back unranked. With `correct`, a word no item
    holds is asked for by its corrected spellings (a page title is not a typed query: no)."""
    words = terms(text)
    if not words:
        return
    # stop words are taken as common without asking (counting one reads its whole list); the
    # others are counted in one hop on a reader
    asked = [w for w in words if w not in STOP_WORDS]
    held = await store.read_with(lambda con: [count_matches(con, term_match(w), COMMON + 1) for w in asked])
    counts = {w: COMMON + 1 for w in words} | dict(zip(asked, held, strict=True))
    kept = [w for w in words if counts[w] <= COMMON]
    if not kept:
        every = tuple(Term(w, term_match(w), (w,)) for w in words)
        yield Stage(match_all([t.match for t in every]), ranked=False, terms=every, counted=frozenset(words))
        return
    spelled = await _spelled(store, kept, counts) if correct else {w: Term(w, term_match(w), (w,)) for w in kept}
    content = [w for w in kept if w not in STOP_WORDS] or kept
    counted = frozenset(content)
    all_terms = tuple(spelled[w] for w in kept)
    yield Stage(match_all([t.match for t in all_terms]), terms=all_terms, counted=counted)
    if len(content) == 1 and content == kept:
        return
    # a term no fact holds is rare too: library documents may hold it (counts are of facts)
    # (and when no fact holds any rare one, every term is asked for too)
    rare = [w for w in content if counts[w] <= WINDOW]
    only_rare = rare and len(rare) < len(content)
    fallback = only_rare and not any(counts[w] for w in rare)  # (and no fact holds any of them)
    for chosen in [rare, content] if fallback else [rare] if only_rare else [content]:
        any_terms = tuple(spelled[w] for w in chosen)
        matches = tuple(t.match for t in any_terms)
        yield Stage(
            match_any(list(matches)),
            any_of=matches,
            terms=any_terms,
            counted=counted,
            fallback=bool(fallback) and chosen is content,
        )


def _strength(held: list[Term], stage: Stage) -> float:
    got = sum(CORRECTED_WEIGHT if t.corrected else 1.0 for t in held if t.word in stage.counted)
    return round(min(1.0, got / len(stage.counted)), 3) if stage.counted else 0.0


def _coverage(held: list[Term], asked: frozenset[str]) -> float:
    return round(len({t.word for t in held} & asked) / len(asked), 3) if asked else 0.0


def _held(stage: Stage, indexes: str | None) -> list[Term]:
    """The terms of a stage an item holds: all of them, or (any-term stage) those listed."""
    if not stage.any_of:
        return list(stage.terms)
    picked = {int(i) for i in (indexes or "").split(",") if i.strip().isdigit()}
    return [t for i, t in enumerate(stage.terms) if i in picked]


async def lexical(store: Store, q: str, limit: int) -> list[LexicalHit]:
    """The lexical lane: the best `limit` hits for the query (facts and library documents,
    each document once), best first, from the first stage that finds anything."""
    asked = frozenset(w for w in terms(q) if w not in STOP_WORDS) or frozenset(terms(q))
    async for stage in match_stages(store, q):
        cap = 0 if stage.fallback else RANK_CAP
        facts = await fts_facts(store, stage.match, limit, ranked=stage.ranked, any_of=stage.any_of, rank_cap=cap)
        chunks = await library.search_chunks(store, stage.match, limit, any_of=stage.any_of)
        ranked: list[tuple[int, float, int, LexicalHit]] = []
        for n, r in enumerate(facts):
            held = _held(stage, r["terms"] if "terms" in r.keys() else None)
            hit = LexicalHit(fact_answer(r), _strength(held, stage), _words(held), stage.match, _coverage(held, asked))
            ranked.append((-_covered(r), float(r["rank"]), n, hit))
        for n, c in enumerate(chunks):
            held = _held(stage, c.get("terms"))
            hit = LexicalHit(
                _document_hit(c), _strength(held, stage), _words(held), stage.match, _coverage(held, asked)
            )
            ranked.append((-int(c.get("covered", 0)), float(c["rank"]), len(facts) + n, hit))
        ranked.sort(key=lambda t: t[:3])
        if ranked:
            return [hit for *_key, hit in ranked[:limit]]
    return []


async def search(store: Store, q: str, limit: int) -> dict[str, Any]:
    """Words only: the lexical lane with its snippets (server.memory.ranking fuses it with meaning)."""
    found = await lexical(store, q, limit)
    results = [h.item for h in found]
    if found:
        await add_snippets(store, found[0].match, results)
    return {"results": results}


def _words(held: list[Term]) -> tuple[str, ...]:
    return tuple(s for t in held for s in (t.spelled or (t.word,)))


def _covered(row: Any) -> int:
    return int(row["covered"]) if "covered" in row.keys() else 0


def _document_hit(hit: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in hit.items() if k not in ("rank", "covered", "terms")}
    out.setdefault("kind", "document")
    return out
