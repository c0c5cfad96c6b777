"""Pasted queries, timed: a search for a long text (a page or a chat's answer pasted into the search
box, or an agent's whole question over MCP) against the short queries people type, in the same run,
on a store of bench_search_quality.py, through our server's HTTP API as the panel asks it.

    .venv/bin/python bench/bench_search_quality.py --data-dir D --repeat 0   # the store, once
    .venv/bin/python bench/bench_long_query.py D [--rounds 3]

Three kinds, asked in turn so the machine's noise falls on each alike:
- short: the queries of bench/search_queries.json (2-15 words);
- prose: 3,990 characters of a reference conversation's text (up to the API's 4,000);
- names: 3,990 characters of made-up words no item holds (random letters, 6-12 each: what a
  pasted list of identifiers or a foreign script looks like to the words lane's spelling pass).
It reports each kind's p50 / p95 wall time, per lane (`words`, `meaning`, fused), and the long
kinds' p50 as a multiple of the short queries' fused p50 in the same run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import string
import sys
import time
from pathlib import Path

import aiohttp

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.bench_search_quality import (  # noqa: E402
    REFERENCE,
    chatgpt_conversations,
    load_queries,
    pct,
    wait_for_vectors,
)
from testkit.server_process import ServerProcess  # noqa: E402

LONG = 3_990  # characters of a long query (the API takes up to 4,000)
LANES = ("words", "meaning", "both")


def prose(n: int) -> list[str]:
    """n texts of LONG characters, each from one reference conversation's turns (the longest)."""
    texts = [" ".join(t["text"] for t in c["turns"]) for c in chatgpt_conversations()]
    texts.sort(key=len, reverse=True)
    return [t[:LONG] for t in texts[:n]]


def names(n: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        words: list[str] = []
        while sum(len(w) + 1 for w in words) < LONG:
            words.append("".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(6, 12))))
        out.append(" ".join(words)[:LONG])
    return out


async def timed(session: aiohttp.ClientSession, server: ServerProcess, q: str, lanes: str) -> float:
    headers = {"Authorization": f"Bearer {server.token}"}
    t0 = time.perf_counter()
    async with session.get(server.base + "/api/search", params={"q": q, "lanes": lanes}, headers=headers) as resp:
        body = await resp.json()
        assert resp.status == 200, body
    return (time.perf_counter() - t0) * 1000


async def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("data_dir", type=Path, help="a store of bench_search_quality.py (--data-dir)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--n", type=int, default=20, help="texts of each long kind")
    args = ap.parse_args()
    if not (REFERENCE / "exports").is_dir():
        print(f"skipped: no reference corpora at {REFERENCE}")
        return 0
    short = [q["q"] for q in load_queries(REPO / "bench" / "search_queries.json")][: args.n]
    kinds = {"short": short, "prose": prose(args.n), "names": names(args.n)}
    times: dict[tuple[str, str], list[float]] = {(k, lane): [] for k in kinds for lane in LANES}
    server = ServerProcess(args.data_dir).start()
    try:
        meaning = await wait_for_vectors(server)  # every model loaded and done, as bench_memory waits
        print(f"search by meaning {meaning['state']} after {meaning['waited_s']} s")
        async with aiohttp.ClientSession() as session:
            await timed(session, server, "warm up", "both")
            for _ in range(args.rounds):
                for i in range(args.n):
                    for kind, texts in kinds.items():
                        for lane in LANES:
                            times[(kind, lane)].append(await timed(session, server, texts[i % len(texts)], lane))
    finally:
        server.stop()
    base = statistics.median(times[("short", "both")])
    print(f"{'kind':<7} {'lane':<8} {'p50 ms':>8} {'p95 ms':>8} {'x short':>8}")
    for (kind, lane), xs in times.items():
        p50 = statistics.median(xs)
        print(f"{kind:<7} {lane:<8} {p50:8.1f} {pct(xs, 95):8.1f} {p50 / base:8.1f}")
    print(json.dumps({f"{k}/{lane}": round(statistics.median(xs), 1) for (k, lane), xs in times.items()}))
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
