"""The memory benchmarks' store (bench_memory, bench_dataio, bench_mcp, bench_visibility): a
generated store written through the memory writers' own SQL (Zipf-like hosts and pages, chat
turns, notes and clips), page and prose-query samples, and the floor: the same lookups as bare SQL.
Importers put the repository on sys.path first."""

from __future__ import annotations

import random
import sqlite3
import sys
import time
import types
from pathlib import Path
from typing import Any

import numpy as np

from server import ages
from server.governance.policy import sensitive_defaults
from server.governance.visibility import FUNCTION, HostVisibility
from server.meaning import lane, model
from server.meaning.embedder import Embedder
from server.meaning.items import json_ids
from server.memory.coverage import WINDOW, count_matches, covered_facts
from server.memory.facts import INSERT_FACT, fact_row
from server.memory.pagematch import RELATED_LIMIT, strip_site_name
from server.memory.search import _RANK_ALL_SQL, _RANK_NEWEST_SQL, _UNRANKED_SQL, COMMON, RANK_CAP
from server.provenance import Provenance, stamp
from server.searchtext import STOP_WORDS, fts_queries, match_all, match_any, term_match, terms
from server.store.db import Store, _statements, migration_files

TLDS = ["com", "org", "net", "io", "dev", "co.uk", "de", "fr"]
BIG_SITES = [
    "en.wikipedia.org",
    "github.com",
    "chatgpt.com",
    "claude.ai",
    "stackoverflow.com",
    "www.youtube.com",
    "docs.python.org",
    "news.ycombinator.com",
    "www.reddit.com",
    "developer.mozilla.org",
]


def vocabulary(rng: random.Random, n: int = 6000) -> list[str]:
    letters = "abcdefghijklmnopqrstuvwxyz"
    words = {"".join(rng.choice(letters) for _ in range(rng.randint(3, 10))) for _ in range(n * 2)}
    return sorted(words)[:n]


class Text:
    """Sentences from a Zipf-weighted vocabulary (common words common, a long tail of rare ones)."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        # stop words are the most common tokens of real text; content words follow, Zipf-spread
        self.words = sorted(STOP_WORDS) + vocabulary(rng)
        self.weights = [1.0 / (i + 1) ** 1.05 for i in range(len(self.words))]
        self.cum = list(_accumulate(self.weights))

    def words_n(self, n: int) -> list[str]:
        return self.rng.choices(self.words, cum_weights=self.cum, k=n)

    def sentence(self, lo: int, hi: int) -> str:
        return " ".join(self.words_n(self.rng.randint(lo, hi))).capitalize() + "."


def _accumulate(xs: list[float]) -> list[float]:
    total, out = 0.0, []
    for x in xs:
        total += x
        out.append(total)
    return out


def migrate(db: Path) -> None:
    con = sqlite3.connect(db)
    con.execute("PRAGMA journal_mode=WAL")
    con.execute("CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY, applied_at REAL NOT NULL)")
    for name, sql in migration_files():
        with con:
            for statement in _statements(sql):
                con.execute(statement)
            con.execute("INSERT INTO schema_migrations(name, applied_at) VALUES (?, ?)", (name, time.time()))
    con.close()


def build(db: Path, items: int, seed: int = 7) -> dict[str, Any]:
    rng = random.Random(seed)
    text = Text(rng)
    migrate(db)
    con = sqlite3.connect(db)
    con.execute("PRAGMA synchronous=OFF")
    con.execute("PRAGMA cache_size=-200000")
    n_hosts = max(50, items // 60)
    hosts = BIG_SITES + [f"{'-'.join(text.words_n(rng.randint(1, 2)))}.{rng.choice(TLDS)}" for _ in range(n_hosts)]
    host_weights = [1.0 / (i + 1) ** 0.9 for i in range(len(hosts))]
    host_cum = _accumulate(host_weights)
    pages: list[tuple[str, str]] = []  # (url, title)
    now = time.time()
    written, conversations, next_report = 0, 0, 50_000
    seen: set[str] = set()
    t0 = time.perf_counter()
    con.execute("BEGIN")
    while written < items:
        host = rng.choices(hosts, cum_weights=host_cum)[0]
        if rng.random() < 0.2:
            host = f"{rng.choice(['www', 'blog', 'docs', 'm'])}.{host}" if host.count(".") < 2 else host
        path = "/".join(text.words_n(rng.randint(1, 3)))
        query = f"?id={rng.randint(1, 10**6)}" if rng.random() < 0.2 else ""
        raw_url = f"https://{host}/{path}{query}" + ("&utm_source=x" if query and rng.random() < 0.3 else "")
        title = " ".join(text.words_n(rng.randint(3, 8))).title()
        url = stamp(raw_url, title).source_url
        fresh = url not in seen
        seen.add(url)
        pages.append((url, title))
        age_s = rng.expovariate(1 / (86400 * 90))
        at = now - age_s
        if fresh and rng.random() < 0.6:  # a chat conversation on this page
            conversations += 1
            prov = stamp(url, title)
            cur = con.execute(
                "INSERT INTO conversations(site, source_url, source_host, source_ref, created_at, updated_at) "
                "VALUES (:site, :source_url, :source_host, :source_ref, :now, :now)",
                {"site": host.split(".")[0], **prov.columns(), "now": at},
            )
            cid = cur.lastrowid
            for pos in range(min(rng.randint(2, 12), items - written)):
                role = "user" if pos % 2 == 0 else "assistant"
                body = (
                    text.sentence(6, 20)
                    if role == "user"
                    else " ".join(text.sentence(8, 25) for _ in range(rng.randint(1, 5)))
                )
                _insert(
                    con,
                    prov,
                    kind="turn",
                    title=title,
                    text=body,
                    valid_at=at + pos * 30,
                    granularity=ages.INSTANT,
                    now=at + pos * 30,
                    conversation_id=cid,
                    position=pos,
                    role=role,
                )
                written += 1
        else:
            for _ in range(min(rng.randint(1, 4), items - written)):
                kind = "note" if rng.random() < 0.62 else "clip"
                body = " ".join(text.sentence(5, 25) for _ in range(rng.randint(1, 3)))
                day = kind == "note" and rng.random() < 0.1
                _insert(
                    con,
                    stamp(url, title),
                    kind=kind,
                    title=title,
                    text=body,
                    valid_at=at,
                    granularity=ages.DAY if day else ages.INSTANT,
                    now=at,
                )
                written += 1
        if written >= next_report:
            next_report += 50_000
            con.execute("COMMIT")
            print(f"  {written:>9,} items  {time.perf_counter() - t0:6.1f}s", file=sys.stderr)
            con.execute("BEGIN")
    con.execute("COMMIT")
    con.execute("INSERT INTO facts_fts(facts_fts) VALUES ('optimize')")
    con.execute("ANALYZE")
    con.commit()
    con.close()
    return {
        "items": written,
        "pages": len(pages),
        "hosts": len(hosts),
        "conversations": conversations,
        "seconds": time.perf_counter() - t0,
    }


def synthetic_deep_vectors(db: Path, seed: int = 5) -> tuple[int, int]:
    """Every item's vector of the second model (server.meaning.deep) as a random int8 vector, and
    the third voice's (server.meaning.third) for each item it speaks for (its own rule,
    `third.reads`, on each item's text), both queues emptied: those models read ~100 and
    ~40 items a second, so 1M real ones would take hours of CPU. For the lookups' latency and the
    server's memory only (the rerank reads and scores them like real ones); the quality is
    bench_search_quality.py's, on real vectors. How many of each were written."""
    import asyncio

    from server.meaning import minilm
    from server.meaning.items import COLUMN, ITEMS, TEXT_SQL, item_text
    from server.meaning.third import THIRD
    from server.meaning.third import reads as third_reads
    from server.meaning.voice import Voice

    async def migrated() -> None:  # a store of an older build: what its migrations queue comes first
        await (await Store.open(db)).close()

    asyncio.run(migrated())
    rng = np.random.default_rng(seed)
    con = sqlite3.connect(db)
    con.execute("PRAGMA synchronous=OFF")

    def fill(voice: Voice, speaks: Any) -> int:
        written = 0
        for item in ITEMS:
            after = 0
            column = COLUMN[item]
            while ids := [r[0] for r in con.execute(
                f"SELECT id FROM {voice.prefix}_queue WHERE item = ? AND id > ? ORDER BY id LIMIT 50000",  # noqa: S608
                (item, after),
            )]:  # fmt: skip
                if speaks is not None:
                    texts = con.execute(TEXT_SQL[item], (json_ids(ids),)).fetchall()
                    chosen = [int(i) for i, title, text in texts if speaks(item_text(title, text))]
                else:
                    chosen = ids
                vecs = rng.integers(-127, 128, size=(len(chosen), minilm.DIMS), dtype=np.int8)
                with con:
                    con.executemany(
                        f"INSERT OR REPLACE INTO {voice.table(item)}({column}, model, vec) VALUES (?, ?, ?)",  # noqa: S608
                        [(i, voice.name, v.tobytes()) for i, v in zip(chosen, vecs, strict=True)],
                    )
                    con.execute(f"DELETE FROM {voice.prefix}_queue WHERE item = ? AND id <= ?", (item, ids[-1]))  # noqa: S608
                written += len(chosen)
                after = ids[-1]
        return written

    from server.meaning.deep import SECOND

    second = fill(SECOND, None)
    third = fill(THIRD, third_reads)
    con.close()
    return second, third


def _insert(con: sqlite3.Connection, prov: Provenance, **fields: Any) -> None:
    con.execute(INSERT_FACT, fact_row(prov, **fields))


def sample_pages(db: Path, n: int, seed: int = 11) -> list[tuple[str, str]]:
    con = sqlite3.connect(db)
    rows = con.execute(
        "SELECT source_url, MAX(title) FROM facts GROUP BY source_url ORDER BY random() LIMIT ?", (n,)
    ).fetchall()
    con.close()
    rng = random.Random(seed)
    rng.shuffle(rows)
    return [(r[0], r[1]) for r in rows]


def prose_queries(n: int, seed: int = 13) -> list[str]:
    rng = random.Random(seed)
    text = Text(random.Random(7))  # the build's vocabulary
    templates = [
        "what did I note about {a} and {b}",
        "the {a} {b} thing from last week",
        "where did I read about {a}",
        "{a} {b} {c}",
        "how does {a} work with {b}?",
    ]
    out = []
    for _ in range(n):
        a, b, c = (rng.choice(text.words[len(STOP_WORDS) : len(STOP_WORDS) + 2000]) for _ in range(3))
        out.append(rng.choice(templates).format(a=a, b=b, c=c))
    return out


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


# --- the floor: the same lookups as bare SQL --------------------------------------------------


def install_visibility(con: sqlite3.Connection) -> None:
    """The floor pays what the server pays: the one visibility function (wf_visible, memoised per
    host) over the default policy, so the ratios measure the HTTP stack, not the rule."""
    snapshot = {
        "version": "bench",
        "global_default": "collect",
        "rules": [],
        "sensitive": {k: sensitive_defaults().get(k, {}) for k in ("domains", "suffixes", "labels", "exact")},
    }
    owner = types.SimpleNamespace(current=snapshot)
    con.create_function(FUNCTION, 1, HostVisibility(owner), deterministic=False)  # type: ignore[arg-type]


def sql_probe(con: sqlite3.Connection, url: str, _title: str) -> None:
    con.execute("SELECT COUNT(*) FROM facts WHERE source_url = ? AND invalid_at IS NULL", (url,)).fetchone()
    con.execute("SELECT id FROM documents WHERE source_url = ?", (url,)).fetchall()


def sql_fts(con: sqlite3.Connection, text: str, limit: int, host: str | None) -> list[Any]:
    """server.memory.search.match_stages + fts_facts, synchronously (the same SQL)."""

    def hits(m: str, cap: int = WINDOW + 1) -> int:
        return count_matches(con, m, cap)

    def run(m: str, ranked: bool = True, any_of: list[str] | None = None, rank_cap: int = RANK_CAP) -> list[Any]:
        if any_of and len(any_of) > 1:  # the any-term stage: coverage first
            return covered_facts(con, m, tuple(term_match(w) for w in any_of), limit, host, rank_cap)
        n = hits(m)
        if n == 0:
            return []
        sql = _UNRANKED_SQL if not ranked else _RANK_ALL_SQL if n <= WINDOW else _RANK_NEWEST_SQL
        return con.execute(sql, {"match": m, "limit": limit, "host": host, "window": WINDOW}).fetchall()

    words = terms(text)
    if not words:
        return []
    counts = {w: COMMON + 1 if w in STOP_WORDS else hits(term_match(w), COMMON + 1) for w in words}
    kept = [w for w in words if counts[w] <= COMMON]
    if not kept:
        return run(match_all([term_match(w) for w in words]), ranked=False)
    rows = run(match_all([term_match(w) for w in kept]))
    content = [w for w in kept if w not in STOP_WORDS] or kept
    if rows or (len(content) == 1 and content == kept):
        return rows
    rare = [w for w in content if counts[w] <= WINDOW]
    only_rare = rare and len(rare) < len(content)
    fallback = only_rare and not any(counts[w] for w in rare)
    for chosen in [rare, content] if fallback else [rare] if only_rare else [content]:
        rows = run(
            match_any([term_match(w) for w in chosen]),
            any_of=chosen,
            rank_cap=0 if fallback and chosen is content else RANK_CAP,
        )
        if rows:
            return rows
    return rows


async def related_plans(db: Path, pages: list[tuple[str, str]]) -> list[tuple[str, str, str]]:
    """Per page (url, title): what the server's related tier asks SQLite (server.meaning.lane),
    worked out here through the server's own index and ranking over the store's vectors, for
    the floor to time: (url, the first window's candidate vector ids, the best RELATED_LIMIT
    facts among them), the ids as JSON. Call it once the server has built the vectors."""
    store = await Store.open(db)
    # the related tier reads the static model alone: the other voices (and the third's scale,
    # which reads through the visibility rule this bare store has not installed) stay off here
    embedder = Embedder(store, 0.0, second_model=False)
    try:
        await embedder.start()
        await embedder.idle.wait()  # loaded, and nothing queued (the server built the vectors)
        plans = []
        for url, title in pages:
            query = lane._embed_one(strip_site_name(title))
            qbits = model.sign_bits(query[None, :])[0]
            ids, _dist, _all = embedder.index.nearest(query, qbits, lane.FACT, lane.FIRST_WINDOW, lane.FIRST_REACH)
            candidates = json_ids(ids.tolist())
            rows = await store.fetchall(lane._VECTORS_SQL, {"ids": candidates})
            ranked = lane._ranked(rows, lane.FACT, lane._cosines(rows, query))
            plans.append((url, candidates, json_ids([i for _s, i in ranked[:RELATED_LIMIT]])))
        return plans
    finally:
        await embedder.stop()
        await store.close()


def sql_match(con: sqlite3.Connection, url: str, candidates: str, best: str) -> None:
    """The page-match tiers' SQL: exact, site, related (by meaning: the candidates' vectors, then
    the best facts' rows; see related_plans) and documents."""
    host = url.split("/")[2]
    con.execute(
        "SELECT * FROM facts WHERE source_url = ? AND invalid_at IS NULL ORDER BY valid_at DESC LIMIT 50", (url,)
    ).fetchall()
    con.execute(
        "SELECT * FROM facts WHERE source_host = ? AND invalid_at IS NULL AND source_url != ? "
        "ORDER BY valid_at DESC LIMIT 20",
        (host, url),
    ).fetchall()
    con.execute(lane._VECTORS_SQL, {"ids": candidates}).fetchall()
    con.execute(lane._FACT_ROWS_SQL, {"ids": best, "host": host}).fetchall()
    con.execute("SELECT * FROM documents WHERE source_url = ?", (url,)).fetchall()


def sql_search(con: sqlite3.Connection, q: str, _unused: str) -> None:
    sql_fts(con, q, 20, None)
    for match in fts_queries(q)[:1]:
        con.execute(
            "SELECT rowid FROM document_chunks_fts WHERE document_chunks_fts MATCH ? ORDER BY rank LIMIT 20", (match,)
        ).fetchall()
