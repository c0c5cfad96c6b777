"""Search quality, measured: known-item recall on a store built from the reference corpora.

    .venv/bin/python bench/bench_search_quality.py                  # build (~10.6k items) and measure
    .venv/bin/python bench/bench_search_quality.py --data-dir D --reuse   # measure an existing store

The store is written through our server's own HTTP API (a `python -m server serve` subprocess
on a free port), as the extension and the CLI write it:
- every conversation of ../shared/reference/exports/chatgpt-2023/conversations.json as a
  capture at https://chatgpt.com/c/<id> (its user and assistant turns, in time order);
- every ../shared/reference/real-dom/*.expected.json as a capture at its url;
- every page of ../shared/reference/extraction/ saved to the library (add_text with its HTML);
- every note of bench/search_notes.json (written by hand: sentences in Japanese, Chinese, Thai
  and Korean, which the reference corpora hardly hold);
- generated notes (default 9,000) on generated sites: 12-40 words drawn from the corpora's own
  vocabulary at its own frequencies, so terms are as common as in the corpus but no passage
  is copied (a script written without spaces gives its characters, not its clauses).
The queries (bench/search_queries.json, written by hand from the corpora; and
bench/search_queries_heldout.json, written blind later, on targets the first set does not name,
to see whether what was tuned on the first holds on the second) name the item they should find
by URL. Each is asked as the panel asks it: GET /api/search?q=...&limit=20. We
report, per kind of query (and `cross-language`: those whose target is in another language),
recall@1, @5 and @10 and the mean reciprocal rank (a hit is a result with the target's
source_url; a target not in the 20 results counts 0), sentences that got no result at all (must
be 0; the run exits 1 otherwise), and p50/p95 of the request's wall time beside a same-run floor.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import glob
import json
import random
import re
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from server.searchtext import STOP_WORDS, fts_queries, is_unspaced, terms  # noqa: E402
from server.urls import normalise_url  # noqa: E402
from testkit.server_process import ServerProcess  # noqa: E402

REFERENCE = REPO.parent / "shared" / "reference"
QUERIES = Path(__file__).with_name("search_queries.json")
# written blind after the ranking was built, to check that a ranking change generalises beyond
# QUERIES (tuned on, over many passes): same kinds and checks, reported beside them
HELDOUT = Path(__file__).with_name("search_queries_heldout.json")
CROSS_LANGUAGE = "cross-language"  # a group of queries beside the kinds: the target in another language
NOTES = Path(__file__).with_name("search_notes.json")
PANEL_LIMIT = 20  # what the side panel's search asks for (the API's default)
LANES = ("words", "meaning", "both")  # each lane alone, then the fused ranking
WORD = re.compile(r"[^\W\d_]{3,}", re.UNICODE)


def chatgpt_conversations() -> list[dict[str, Any]]:
    raw = json.loads((REFERENCE / "exports" / "chatgpt-2023" / "conversations.json").read_text("utf-8"))
    out = []
    for conv in raw:
        msgs = [
            n["message"]
            for n in conv["mapping"].values()
            if n.get("message") and n["message"]["author"]["role"] in ("user", "assistant")
        ]
        msgs.sort(key=lambda m: m.get("create_time") or 0)
        turns = []
        for m in msgs:
            text = "\n".join(p for p in m["content"].get("parts", []) if isinstance(p, str)).strip()
            if text:
                turns.append({"role": m["author"]["role"], "text": text[:100_000]})
        if turns:
            out.append(
                {
                    "url": f"https://chatgpt.com/c/{conv['id']}",
                    "title": conv.get("title") or "",
                    "site": "chatgpt",
                    "turns": turns,
                }
            )
    return out


def real_dom_conversations() -> list[dict[str, Any]]:
    out = []
    for path in sorted(glob.glob(str(REFERENCE / "real-dom" / "*.expected.json"))):
        d = json.loads(Path(path).read_text("utf-8"))
        turns = [{"role": t["role"], "text": t["text"]} for t in d.get("turns", []) if t.get("text", "").strip()]
        if turns:
            out.append({"url": d["url"], "site": d.get("site", ""), "title": "", "turns": turns})
    return out


def extraction_pages() -> list[dict[str, Any]]:
    base = REFERENCE / "extraction"
    meta = json.loads((base / "evaldata.json").read_text("utf-8"))
    out = []
    for url, m in meta.items():
        if not url.startswith(("http://", "https://")):
            continue  # a few entries are keyed by file name, not by a page address
        html = (base / "html" / m["file"]).read_text("utf-8", errors="replace").replace("\0", "")
        out.append({"url": url, "title": m.get("title") or "", "html": html})
    return out


def filler_words(text: str) -> list[str]:
    """The units generated notes are drawn from: the text's words; a run of a script written
    without spaces (Han, kana, Hangul, Thai) is one "word" to WORD, a whole clause, so it gives
    its characters one by one (drawn whole, it copied the clause, and a query made of a few of
    its characters found that generated note beside its own target)."""
    return [u for w in WORD.findall(text.lower()) for u in (list(w) if is_unspaced(w) else [w])]


def generated_notes(n: int, corpus: list[str], seed: int = 5) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    counts = collections.Counter(w for text in corpus for w in filler_words(text))
    words, weights = zip(*counts.most_common(), strict=True)
    cum = [0.0] * len(weights)
    total = 0.0
    for i, w in enumerate(weights):
        total += w
        cum[i] = total
    notes = []
    for i in range(n):
        host = f"site{int(rng.paretovariate(1.2)) % 400}.example"
        text = " ".join(rng.choices(words, cum_weights=cum, k=rng.randint(12, 40))).capitalize() + "."
        title = " ".join(rng.choices(words, cum_weights=cum, k=3)).title()
        notes.append({"url": f"https://{host}/page/{i}", "title": title, "text": text})
    return notes


async def post(session: aiohttp.ClientSession, server: ServerProcess, path: str, body: dict[str, Any]) -> None:
    headers = {"Authorization": f"Bearer {server.token}"}
    async with session.post(server.base + path, json=body, headers=headers) as resp:
        if resp.status == 403:  # a site not on collect: say so once, and collect it (as the person would)
            host = normalise_url(body["url"]).split("/")[2]
            async with session.put(
                server.base + "/api/site-mode", json={"host": host, "mode": "collect"}, headers=headers
            ) as put:
                assert put.status == 200, await put.text()
            return await post(session, server, path, body)
        if resp.status not in (200, 201):
            raise RuntimeError(f"{path} {body.get('url')}: HTTP {resp.status} {await resp.text()}")


async def build(server: ServerProcess, notes: int, seed: int = 5) -> dict[str, int]:
    chats, doms, pages = chatgpt_conversations(), real_dom_conversations(), extraction_pages()
    corpus = [t["text"] for c in chats + doms for t in c["turns"]]
    generated = generated_notes(notes, corpus, seed)
    written = json.loads(NOTES.read_text("utf-8"))["notes"]
    jobs: list[tuple[str, dict[str, Any]]] = [("/api/captures", c) for c in chats + doms]
    jobs += [("/api/library/add_text", p) for p in pages]
    jobs += [("/api/notes", n) for n in written + generated]
    queue: asyncio.Queue[tuple[str, dict[str, Any]]] = asyncio.Queue()
    for job in jobs:
        queue.put_nowait(job)
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=120)) as session:

        async def worker() -> None:
            while not queue.empty():
                path, body = queue.get_nowait()
                await post(session, server, path, body)

        await asyncio.gather(*(worker() for _ in range(4)))
    turns = sum(len(c["turns"]) for c in chats + doms)
    return {
        "conversations": len(chats) + len(doms),
        "turns": turns,
        "documents": len(pages),
        "notes": notes + len(written),
        "items": turns + len(pages) + notes + len(written),
    }


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


async def ask(session: aiohttp.ClientSession, server: ServerProcess, q: str, lanes: str) -> dict[str, Any]:
    headers = {"Authorization": f"Bearer {server.token}"}
    params = {"q": q, "limit": PANEL_LIMIT, "lanes": lanes}
    async with session.get(server.base + "/api/search", params=params, headers=headers) as resp:
        body = await resp.json()
        assert resp.status == 200, body
        return dict(body)


def rank_of(body: dict[str, Any], target: str) -> int | None:
    urls = []
    for r in body["results"]:
        if r["source_url"] not in urls:
            urls.append(r["source_url"])
    return urls.index(target) + 1 if target in urls else None


def scores(rows: list[dict[str, Any]], lane: str) -> dict[str, Any]:
    ranks = [r[lane]["rank"] for r in rows]
    n = len(rows)
    return {
        "n": n,
        "recall@1": sum(1 for k in ranks if k == 1) / n,
        "recall@5": sum(1 for k in ranks if k and k <= 5) / n,
        "recall@10": sum(1 for k in ranks if k and k <= 10) / n,
        "mrr": sum(1 / k for k in ranks if k) / n,
        "zero_results": sum(1 for r in rows if r[lane]["results"] == 0),
        "close": sum(1 for r in rows if r[lane]["close"]) / n,
    }


def load_queries(path: Path) -> list[dict[str, Any]]:
    queries: list[dict[str, Any]] = json.loads(path.read_text("utf-8"))["queries"]
    return queries


async def measure(server: ServerProcess, repeat: int, queries: list[dict[str, Any]]) -> dict[str, Any]:
    """Every query through each lane alone (words: today's lexical search; meaning:
    the embeddings alone) and through the fused ranking, in the same run; latency of the fused
    search beside the floor (when `repeat`)."""
    headers = {"Authorization": f"Bearer {server.token}"}
    rows, times, floor = [], [], []
    async with aiohttp.ClientSession() as session:
        for q in queries:
            target = normalise_url(q["target"])
            row: dict[str, Any] = {**q}
            for lane in LANES:
                body = await ask(session, server, q["q"], lane)
                row[lane] = {
                    "rank": rank_of(body, target),
                    "results": len(body["results"]),
                    "close": bool(body.get("close", True)),
                    "top": [r["source_url"] for r in body["results"][:3]],
                    "why": next((r.get("why") for r in body["results"] if r["source_url"] == target), None),
                }
            if q.get("spelled"):  # a typo's control: the same query spelled right
                row["spelled_rank"] = rank_of(await ask(session, server, q["spelled"], "both"), target)
            for _ in range(repeat):
                t0 = time.perf_counter()
                await ask(session, server, q["q"], "both")
                times.append((time.perf_counter() - t0) * 1000)
                t0 = time.perf_counter()  # the same-run floor: a request that does no work
                async with session.get(server.base + "/api/health", headers=headers) as health:
                    await health.read()
                floor.append((time.perf_counter() - t0) * 1000)
            rows.append(row)
    crossed = [r for r in rows if r.get("target_language")]  # a target in another language: on its own
    same = [r for r in rows if not r.get("target_language")]
    groups = {kind: [r for r in same if r["kind"] == kind] for kind in sorted({r["kind"] for r in same})}
    if crossed:
        groups[CROSS_LANGUAGE] = crossed
    out: dict[str, Any] = {"queries": len(rows), "panel_limit": PANEL_LIMIT, "kinds": list(groups)}
    for kind, sel in [*groups.items(), ("all", rows)]:
        out[kind] = {"words": scores(sel, "words"), "meaning": scores(sel, "meaning"), "hybrid": scores(sel, "both")}
    out["latency_ms"] = (
        {}
        if not times
        else {
            "p50": statistics.median(times),
            "p95": pct(times, 95),
            "max": max(times),
            "requests": len(times),
            "health_p50": statistics.median(floor),
            "health_p95": pct(floor, 95),
        }
    )
    controlled = [r for r in rows if "spelled_rank" in r]
    if controlled:
        out["typo_control"] = {
            "n": len(controlled),
            # the typo costs nothing: the target ranks where it ranks for the query spelled right
            "as_spelled_right": sum(1 for r in controlled if (r["both"]["rank"] or 99) <= (r["spelled_rank"] or 99)),
            "spelled_recall@1": sum(1 for r in controlled if r["spelled_rank"] == 1) / len(controlled),
        }
    out["misses"] = [
        {
            "q": r["q"],
            "kind": r["kind"],
            "rank": r["both"]["rank"],
            "words_rank": r["words"]["rank"],
            "meaning_rank": r["meaning"]["rank"],
            "top": r["both"]["top"],
            **({"spelled_rank": r["spelled_rank"]} if "spelled_rank" in r else {}),
        }
        for r in rows
        if r["both"]["rank"] != 1
    ]
    return out


def paraphrase_violations(db: Path, path: Path = QUERIES) -> list[str]:
    """The mechanical check of the paraphrase queries: no query term (stop words left out) may
    match any item stored at the target URL, through the store's own FTS tables (porter stems)."""
    queries = [q for q in load_queries(path) if q["kind"] == "paraphrase"]
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    bad = []
    try:
        for q in queries:
            target = normalise_url(q["target"])
            for term in terms(q["q"]):
                if term in STOP_WORDS:
                    continue
                match = fts_queries(term)[0]
                facts = con.execute(
                    "SELECT COUNT(*) FROM facts_fts JOIN facts f ON f.id = facts_fts.rowid "
                    "WHERE facts_fts MATCH ? AND f.source_url = ?",
                    (match, target),
                ).fetchone()[0]
                chunks = con.execute(
                    "SELECT COUNT(*) FROM document_chunks_fts "
                    "JOIN document_chunks c ON c.id = document_chunks_fts.rowid "
                    "WHERE document_chunks_fts MATCH ? AND c.source_url = ?",
                    (match, target),
                ).fetchone()[0]
                if facts or chunks:
                    bad.append(f"{q['q']!r}: {term!r} is in the target")
    finally:
        con.close()
    return bad


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


async def wait_for_vectors(server: ServerProcess) -> dict[str, Any]:
    """Wait for the background embedder to finish (every model); its progress and how long that
    took."""
    headers = {"Authorization": f"Bearer {server.token}"}
    t0 = time.perf_counter()
    async with aiohttp.ClientSession() as session:
        while True:
            async with session.get(server.base + "/api/health", headers=headers) as resp:
                meaning = (await resp.json())["meaning"]
            voices = [meaning.get(k, {}).get("state", "off") for k in ("deep", "third")]
            if meaning["state"] in ("ready", "failed") and all(v in ("ready", "off", "failed") for v in voices):
                return {**meaning, "waited_s": round(time.perf_counter() - t0, 1)}
            await asyncio.sleep(0.2)


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--notes", type=int, default=9_000, help="generated notes (default 9000)")
    parser.add_argument("--seed", type=int, default=5, help="the generated notes' random seed (default 5)")
    parser.add_argument("--data-dir", type=Path, default=None, help="keep the store here (default: a temp dir)")
    parser.add_argument("--reuse", action="store_true", help="measure the store already in --data-dir")
    parser.add_argument("--repeat", type=int, default=5, help="times each query is asked, for latency")
    parser.add_argument(
        "--no-second-model", action="store_true", help="serve without the second model (the static model alone)"
    )
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "out" / "search_quality.json")
    args = parser.parse_args()
    if not (REFERENCE / "exports").is_dir():
        print(f"skipped: no reference corpora at {REFERENCE}")
        return 0
    tmp = None if args.data_dir else Path(tempfile.mkdtemp(prefix="wf-searchq-"))
    data_dir = args.data_dir or tmp / "data"  # type: ignore[operator]
    server = ServerProcess(data_dir, *(["--no-second-model"] if args.no_second_model else [])).start()
    try:
        built: dict[str, Any] | None = None
        if not args.reuse:
            t0 = time.perf_counter()
            built = await build(server, args.notes, args.seed)
            built["build_s"] = round(time.perf_counter() - t0, 1)
            print(f"built {built}")
        vectors = await wait_for_vectors(server)
        assert server.proc is not None
        vectors["server_rss_mb"] = round(rss_mb(server.proc.pid), 1)
        print(f"vectors: {vectors}")
        bad = paraphrase_violations(data_dir / "wherefrom.db")
        result = await measure(server, args.repeat, load_queries(QUERIES))
        heldout = None
        if HELDOUT.exists():
            bad += paraphrase_violations(data_dir / "wherefrom.db", HELDOUT)
            heldout = await measure(server, 0, load_queries(HELDOUT))
    finally:
        server.stop()
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    result["store"], result["vectors"], result["paraphrase_violations"] = built, vectors, bad
    result["heldout"] = heldout
    print_table(result, QUERIES)
    lat = result["latency_ms"]
    if lat:
        print(
            f"\nGET /api/search (fused, limit {PANEL_LIMIT}), {lat['requests']} requests: "
            f"p50 {lat['p50']:.1f} ms, p95 {lat['p95']:.1f} ms, max {lat['max']:.1f} ms"
        )
        print(
            f"same-run floor GET /api/health: p50 {lat['health_p50']:.1f} ms, p95 {lat['health_p95']:.1f} ms "
            f"(search p95 = {lat['p95'] / lat['health_p95']:.1f}x the floor's)"
        )
    print_misses(result)
    if heldout is not None:
        print_table(heldout, HELDOUT)
        print_misses(heldout)
    if bad:
        print("\nparaphrase queries sharing a term with their target (fix the query):")
        for b in bad:
            print(f"  {b}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2, ensure_ascii=False))
    zero = any(r[k]["hybrid"]["zero_results"] for r in (result, heldout) if r for k in r["kinds"] if k == "sentence")
    return 1 if zero or bad else 0


def print_table(result: dict[str, Any], path: Path) -> None:
    print(f"\n{path.name}")
    head = f"{'queries':<14} {'n':>3}  {'lane':<7} {'recall@1':>8} {'recall@5':>8} {'recall@10':>9}"
    print(f"{head} {'MRR':>5} {'close':>6}")
    for kind in [*result["kinds"], "all"]:
        for lane in ("words", "meaning", "hybrid"):
            r = result[kind][lane]
            print(
                f"{kind if lane == 'words' else '':<14} {r['n'] if lane == 'words' else '':>3}  {lane:<7} "
                f"{r['recall@1']:>8.2f} {r['recall@5']:>8.2f} {r['recall@10']:>9.2f} "
                f"{r['mrr']:>5.2f} {r['close']:>6.2f}"
            )


def print_misses(result: dict[str, Any]) -> None:
    control = result.get("typo_control")
    if control:
        print(
            f"\ntypo queries ranking their target where the query spelled right does: "
            f"{control['as_spelled_right']} of {control['n']} (spelled right, recall@1 "
            f"{control['spelled_recall@1']:.2f}: other items that hold the word come first)"
        )
    print("\nnot first (fused):")
    for m in result["misses"]:
        spelled = f", spelled right {m['spelled_rank']!s:>4}" if "spelled_rank" in m else ""
        print(
            f"  {m['kind']:<10} rank {m['rank']!s:>4} (words {m['words_rank']!s:>4}, "
            f"meaning {m['meaning_rank']!s:>4}{spelled})  {m['q']}"
        )


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
