"""Is "close" honest? On a store of bench_search_quality.py, through our server's HTTP API as the
panel asks (GET /api/search, limit 20): how often a search about nothing stored calls its best
result a close match (bench/search_queries_absent.json: topics none of the corpora is about,
written before any rule was tuned on them), beside how often it calls close a known-item query whose
target comes first (search_queries.json and search_queries_heldout.json): the first should be
low, the second high. Per lane (`words`, `meaning`, fused) and per kind.

    .venv/bin/python bench/bench_search_quality.py --data-dir D --repeat 0   # the store, once
    .venv/bin/python bench/bench_absent.py D

Each absent query called close is listed with why its best result matched.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import aiohttp

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.bench_search_quality import (  # noqa: E402
    HELDOUT,
    QUERIES,
    REFERENCE,
    ask,
    load_queries,
    rank_of,
    wait_for_vectors,
)
from testkit.server_process import ServerProcess  # noqa: E402

ABSENT = Path(__file__).with_name("search_queries_absent.json")
LANES = ("words", "meaning", "both")


async def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("data_dir", type=Path, help="a store of bench_search_quality.py (--data-dir)")
    args = ap.parse_args()
    if not (REFERENCE / "exports").is_dir():
        print(f"skipped: no reference corpora at {REFERENCE}")
        return 0
    absent = [q["q"] for q in load_queries(ABSENT)]
    known = load_queries(QUERIES) + load_queries(HELDOUT)
    server = ServerProcess(args.data_dir).start()
    called: dict[str, list[tuple[str, dict[str, Any]]]] = {lane: [] for lane in LANES}
    first: dict[tuple[str, str], list[bool]] = {}  # (lane, kind) -> close, for each target ranked first
    try:
        await wait_for_vectors(server)
        async with aiohttp.ClientSession() as session:
            for lane in LANES:
                for q in absent:
                    body = await ask(session, server, q, lane)
                    if body["close"]:
                        called[lane].append((q, body["results"][0]))
                for k in known:
                    body = await ask(session, server, k["q"], lane)
                    if rank_of(body, k["target"]) == 1:
                        first.setdefault((lane, k["kind"]), []).append(bool(body["close"]))
    finally:
        server.stop()
    print(f"absent queries called close (lower is better), of {len(absent)}:")
    for lane in LANES:
        print(f"  {lane:<8} {len(called[lane]):3d}  ({len(called[lane]) / len(absent):.2f})")
    print("known-item queries whose target is first, called close (higher is better):")
    for (lane, kind), flags in sorted(first.items()):
        print(f"  {lane:<8} {kind:<11} {sum(flags):3d} of {len(flags):3d}  ({sum(flags) / len(flags):.2f})")
    print("absent queries called close, fused, and why:")
    for q, top in called["both"]:
        text = " ".join(str(top.get("text", "")).split())[:80]
        print(f"  {q!r}: {top.get('why')} words {top.get('words')} meaning {top.get('meaning')} | {text}")
    summary = {lane: len(v) for lane, v in called.items()}
    print(json.dumps({"absent_close": summary, "n": len(absent)}))
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
