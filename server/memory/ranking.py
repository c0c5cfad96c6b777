"""THE hybrid ranking: the words lane (server.memory.search, FTS5) and the meaning lane
(server.meaning.lane, embeddings) fused by reciprocal rank fusion, for GET /api/search — which
the panel, `wherefrom search` and MCP search_memory all ask.

Each result says why it matched — `why`: "words", "meaning" or "both" — and how strongly:
`words` (1.0: it holds every term; less: the share it holds), `meaning` (the cosine of the
query's and the item's vectors) and `strength` (the larger of the two, 0..1). It is `close`
when it holds at least CLOSE_WORDS of the terms or the meaning lane's judge of it (`judged`:
the second model's cosine, or the third voice's score; never the static model's alone:
server.meaning.deep.judged) is at least CLOSE. The answer's `close` says whether
any result is; when none is, the results are the nearest by meaning first and `note` says so
— accidental overlaps on a word or two are not presented as answers. `judged` says whether that
verdict was reached: it is not when no result is close and none of the meaning lane's carries a
judge (the query is one no judging model reads, as most Dutch questions: bench/bench_dutch.py; or
the second model has not read the items yet, or is off); then `note` says the nearest by meaning
could not be judged (UNJUDGED) instead of claiming that nothing is close.

Fusion: score = sum over the lanes that found an item of weight / (K + rank), each lane's
weight the strength of its own evidence: a words hit the cube of the share of all the query's
words it holds (`coverage`: stop words left out, common words counted, a corrected spelling in
full), a meaning hit from half (a faint cosine) to full (a cosine of CLOSE or more). So an
overlap on one rare word of three counts little next to a match by meaning, a turn holding most
of the asked words still beats short notes holding one (whose cosine the shared word inflates),
and a corrected spelling is not pushed out by twenty faint neighbours by meaning. A meaning hit
weaker than FLOOR is left out when the words lane found items holding every term. An item both
lanes found sums the two only when it is close by words (CLOSE_WORDS): a partial overlap is
inside its cosine already (the shared words are what raised it), and counted twice it put such an
item over the nearest by meaning (bench_search_quality: paraphrase recall@1 0.44 -> 0.50 fused,
held-out queries 0.15 -> 0.17, no other kind changed).
"""

from __future__ import annotations

import asyncio
from typing import Any

from server.meaning import lane
from server.meaning.building import meaning_state
from server.meaning.embedder import Embedder
from server.memory import search as words
from server.memory.facts import fact_answer
from server.memory.snippets import add_snippets
from server.store.db import Store

K = 60
# cosines of this static model run low: a good paraphrase scores 0.25-0.4, unrelated text ~0.0
# (calibrated on bench/bench_search_quality.py's paraphrase queries)
# a judged cosine (server.meaning.deep.judged) at or above this is a close match by meaning; the
# meaning lane's score reaches full weight in the fusion there too. The judge alone, at 0.4: of the
# paraphrase targets ranked first 18 of 25 called close, of questions about nothing stored that it
# reads 2 of 27 (bench/bench_absent.py, bench/README fourteenth pass)
CLOSE = 0.4
FLOOR = 0.3  # below this a meaning hit is noise next to items holding every word
NOISE = 0.05  # below this a meaning hit is not shown at all (gibberish is near nothing)
WORDS_POWER = 3  # a words hit weighs its share of the asked words cubed: one of three is 0.04
PARTIAL_WEIGHT = 0.5  # an any-term hit's weight when its share of the terms is not known
CLOSE_WORDS = 0.66  # holding two thirds of the asked terms is close by words
NOTE = "no close match — nearest by meaning:"
UNJUDGED = "nearest by meaning; how close they are could not be judged:"
LANES = ("both", "words", "meaning")


def _key(item: dict[str, Any]) -> tuple[str, int]:
    return ("document" if item.get("kind") == "document" else "fact", int(item["id"]))


async def meaning_hits(store: Store, embedder: Embedder | None, q: str, limit: int) -> list[dict[str, Any]]:
    """The meaning lane's `limit` best items (facts and documents), each with `meaning`."""
    if embedder is None:
        return []
    await embedder.settled()
    if not embedder.ready:
        return []
    deep_query = lane.start_deep_query(embedder, q)  # computed while the static model's scan runs
    third_ask = lane.start_third_query(embedder, q) if deep_query is not None else None  # and the third's
    # the static model's vector of the query (~0.03 ms) is computed in each lookup's own hop (one
    # thread hop less a search; at 1M the lookups then start earlier and wait as long for a core:
    # bench/README, twelfth pass)
    facts, chunks = await asyncio.gather(
        lane.nearest(store, embedder, q, lane.FACT, limit, deep_query=deep_query, third_ask=third_ask),
        lane.nearest(store, embedder, q, lane.CHUNK, limit, deep_query=deep_query, third_ask=third_ask),
    )
    # the best `limit` of both kinds, and only those made into answers
    found = [(s, j, r, fact_answer) for s, r, j in facts] + [(s, j, r, lane.chunk_hit) for s, r, j in chunks]
    found.sort(key=lambda t: -t[0])
    return [
        {**answer(row), "meaning": round(score, 3), **({"judged": judged} if judged is not None else {})}
        for score, judged, row, answer in found[:limit]
        if score >= NOISE
    ]


def words_evidence(coverage: float) -> float:
    """A words hit's weight in the fusion: the cube of the share of the asked words it holds."""
    return float(min(1.0, max(0.0, coverage)) ** WORDS_POWER)


def meaning_evidence(cosine: float) -> float:
    """A meaning hit's weight in the fusion: half, up to full at a cosine of CLOSE."""
    return 0.5 + 0.5 * min(1.0, max(0.0, cosine) / CLOSE)


def fuse(lexical: list[dict[str, Any]], meaning: list[dict[str, Any]], limit: int) -> dict[str, Any]:
    """The fused answer of the two lanes' ranked lists (pure: the bench and tests call it too)."""
    all_terms = any(r.get("words", 0) >= 1.0 for r in lexical)
    merged: dict[tuple[str, int], dict[str, Any]] = {}
    score: dict[tuple[str, int], float] = {}
    for rank, item in enumerate(lexical, 1):
        key = _key(item)
        merged[key] = dict(item)
        held = merged[key].pop("coverage", None)  # the share of all the asked words it holds
        share = float(held) if held is not None else float(item.get("words", 0.0)) or PARTIAL_WEIGHT
        score[key] = words_evidence(share) / (K + rank)
    for rank, item in enumerate(meaning, 1):
        key = _key(item)
        if key in merged:
            merged[key]["meaning"] = item["meaning"]
            if "judged" in item:
                merged[key]["judged"] = item["judged"]
            if "chunk" in item and merged[key].get("chunk") != item["chunk"]:
                merged[key].setdefault("meaning_chunk", item["chunk"])
            if float(merged[key].get("words") or 0.0) < CLOSE_WORDS:
                score[key] = 0.0  # its few shared words raised the cosine: not counted twice
        elif all_terms and item["meaning"] < FLOOR:
            continue
        else:
            merged[key] = dict(item)
        score[key] = score.get(key, 0.0) + meaning_evidence(float(item["meaning"])) / (K + rank)
    out = []
    for key, item in merged.items():
        w, m = item.get("words"), item.get("meaning")
        item["why"] = "both" if w is not None and m is not None else "words" if w is not None else "meaning"
        item["strength"] = round(max(w or 0.0, max(m or 0.0, 0.0)), 3)
        judged = item.pop("judged", None)  # the meaning lane's judge of closeness (server.meaning.deep.judged)
        item["close"] = (w or 0.0) >= CLOSE_WORDS or (judged if judged is not None else -1.0) >= CLOSE
        out.append((score[key], item))
    out.sort(key=lambda t: -t[0])
    results = [item for _s, item in out]
    close = any(r["close"] for r in results)
    if not close:  # nothing matches well: the nearest by meaning first, then the word overlaps
        results.sort(key=lambda r: -float(r["meaning"]) if r.get("meaning") is not None else 2.0)
    # unjudged: the nearest by meaning come first and no model that judges read any of them
    unjudged = not close and bool(meaning) and not any("judged" in m for m in meaning)
    answer: dict[str, Any] = {"results": results[:limit], "close": close, "judged": not unjudged}
    if results and not close:
        answer["note"] = UNJUDGED if unjudged else NOTE
    return answer


async def _nothing() -> list[Any]:
    return []


async def search(store: Store, embedder: Embedder | None, q: str, limit: int, lanes: str = "both") -> dict[str, Any]:
    """GET /api/search: both lanes fused (or one, with `lanes`), with snippets of the words."""
    # the two lanes at once: the meaning lane's query vector and bit scan run in threads, and
    # each lane's statements on a reader of the store's own
    hits, meaning = await asyncio.gather(
        words.lexical(store, q, limit) if lanes != "meaning" else _nothing(),
        meaning_hits(store, embedder, q, limit) if lanes != "words" else _nothing(),
    )
    # `words`: the share of the query's distinctive words a hit holds (1.0: all of them; a
    # corrected spelling counts less), from the lexical lane itself
    lexical = [{**h.item, "words": h.strength, "coverage": h.coverage} for h in hits]
    answer = fuse(lexical, meaning, limit)
    if answer["results"]:
        await add_snippets(store, hits[0].match if hits else "", answer["results"])
    answer["meaning"] = meaning_state(embedder.progress() if embedder is not None else {"state": "off", "pending": 0})
    return answer
