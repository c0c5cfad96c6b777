"""Where a search's time goes, in-process, on a store bench_memory.py built: each phase's start,
wall time and thread CPU, averaged over prose queries, with the third voice asked and not asked
in alternating rounds of the same process (its cost as a ratio to a baseline of the same run).

    .venv/bin/python bench/search_phases.py D            # D: a bench_memory.py --data-dir
    .venv/bin/python bench/search_phases.py D --queries 600 --rounds 4

No HTTP: the store, the embedder and ranking.search as the server runs them (its heap settled
once the index is loaded, as `serve` does). Phases are timed by wrapping the functions that run
them; a phase's CPU is that of the thread it runs on (an async phase's, on other threads, shows 0).
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from memory_store import pct, prose_queries  # noqa: E402

from server import heap  # noqa: E402
from server.governance import visibility  # noqa: E402
from server.meaning import deep, e5, lane, third  # noqa: E402
from server.meaning.embedder import Embedder  # noqa: E402
from server.memory import ranking  # noqa: E402
from server.memory import search as words  # noqa: E402
from server.store.db import Store  # noqa: E402

Record = list[tuple[str, float, float, float]]  # (phase, start, end, thread CPU s)
PHASES = [
    (deep, "embed_query", "second model's query"),
    (e5.E5, "query", "third voice's query"),
    (third.Ask, "scored", "third voice's scoring"),
    (lane, "_nearest", "meaning lookup (a kind)"),
    (deep, "rescored", "rescored (a kind)"),
    (lane, "_first_visible", "visible (a kind)"),
    (words, "lexical", "words lane"),
    (ranking, "add_snippets", "snippets"),
]


def wrap(record: Record, owner: Any, name: str, label: str) -> None:
    f = getattr(owner, name)
    if asyncio.iscoroutinefunction(f):

        @functools.wraps(f)
        async def timed_async(*a: Any, **k: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return await f(*a, **k)
            finally:
                record.append((label, t0, time.perf_counter(), 0.0))

        setattr(owner, name, timed_async)
        return

    @functools.wraps(f)
    def timed(*a: Any, **k: Any) -> Any:
        t0, c0 = time.perf_counter(), time.thread_time()
        try:
            return f(*a, **k)
        finally:
            record.append((label, t0, time.perf_counter(), time.thread_time() - c0))

    setattr(owner, name, timed)


async def main(data_dir: Path, n: int, rounds: int) -> None:
    store = await Store.open(data_dir / "wherefrom.db")
    await visibility.govern(store)
    embedder = Embedder(store)
    await embedder.start()
    await embedder.loaded.wait()
    heap.settle()  # as `serve` does once the index is loaded
    voices = ("deep", "third")
    while not all(embedder.progress()[v]["state"] in ("ready", "failed", "off") for v in voices):  # noqa: ASYNC110 - no event
        await asyncio.sleep(0.5)
    print("third voice:", embedder.progress()["third"])
    record: Record = []
    for owner, name, label in PHASES:
        wrap(record, owner, name, label)
    asked = third.ask
    queries = prose_queries(n + 20)
    for q in queries[:20]:  # warm-up
        await ranking.search(store, embedder, q, 10)
    runs: dict[str, list[tuple[float, float]]] = {"asked": [], "not asked": []}
    phases: dict[str, dict[str, list[tuple[float, float, float]]]] = {"asked": {}, "not asked": {}}
    for r in range(rounds * 2):
        mode = "asked" if r % 2 == 0 else "not asked"
        third.ask = asked if mode == "asked" else (lambda _lane, _text, _scale=None: None)  # type: ignore[assignment]
        for q in queries[20:]:
            record.clear()
            t0, c0 = time.perf_counter(), time.process_time()
            await ranking.search(store, embedder, q, 10)
            runs[mode].append(((time.perf_counter() - t0) * 1000, (time.process_time() - c0) * 1000))
            for label, a, b, cpu in record:
                phases[mode].setdefault(label, []).append(((a - t0) * 1000, (b - a) * 1000, cpu * 1000))
    third.ask = asked
    for mode, xs in runs.items():
        wall = [w for w, _c in xs]
        cpu = statistics.mean(c for _w, c in xs)
        print(
            f"\nthird voice {mode}: {len(xs)} searches, wall p50 {pct(wall, 50):.1f} p95 {pct(wall, 95):.1f} ms, "
            f"process CPU {cpu:.1f} ms a search"
        )
        for label, ps in sorted(phases[mode].items(), key=lambda kv: statistics.mean(p[0] for p in kv[1])):
            print(
                f"  {label:26s} x{len(ps) / len(xs):.2f}  starts {statistics.mean(p[0] for p in ps):6.2f}  "
                f"wall {statistics.mean(p[1] for p in ps):6.2f}  cpu {statistics.mean(p[2] for p in ps):5.2f} ms"
            )
    a, b = runs["asked"], runs["not asked"]
    print(
        f"\nasked / not asked: wall p50 {pct([w for w, _ in a], 50) / pct([w for w, _ in b], 50):.2f}x, "
        f"p95 {pct([w for w, _ in a], 95) / pct([w for w, _ in b], 95):.2f}x, "
        f"CPU {statistics.mean(c for _, c in a) / statistics.mean(c for _, c in b):.2f}x"
    )
    await embedder.stop()
    await store.close()


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("data_dir", type=Path, help="a store bench_memory.py built (--data-dir)")
    ap.add_argument("--queries", type=int, default=300, help="prose queries a round")
    ap.add_argument("--rounds", type=int, default=2, help="rounds of each mode, alternating")
    args = ap.parse_args()
    asyncio.run(main(args.data_dir, args.queries, args.rounds))
