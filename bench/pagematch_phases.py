"""Where page-match's reader hop goes, in-process (no HTTP): on a store of bench_memory.py, each
sampled page's exact/site/documents rows and its related tier by meaning, in one hop on a store
reader as the server runs them (server.memory.pagematch), with the hop's parts timed.

    .venv/bin/python bench/bench_memory.py --items 1000000 --data-dir D     # the store, once
    .venv/bin/python bench/pagematch_phases.py D [--pages 1000] [--rounds 2]

Prints p50 / p95 / p99 ms per part and for the whole hop, per round (the first warms the caches);
what the parts leave of the hop is mostly the read of the candidates' vectors (SQLite).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.memory_store import sample_pages  # noqa: E402
from server.governance.visibility import govern  # noqa: E402
from server.meaning import lane  # noqa: E402
from server.meaning.embedder import Embedder  # noqa: E402
from server.memory import pagematch  # noqa: E402
from server.store.db import Store  # noqa: E402
from server.urls import host_of, normalise_url  # noqa: E402

TIMES: dict[str, list[float]] = {}


def timed(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        t0 = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            TIMES.setdefault(name, []).append((time.perf_counter() - t0) * 1000)

    return wrapper


async def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("data_dir", type=Path)
    ap.add_argument("--pages", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    db = args.data_dir / "wherefrom.db"
    store = await Store.open(db)
    await govern(store)
    embedder = Embedder(store, second_model=False)  # page-match's related tier uses the static model
    await embedder.start()
    await embedder.loaded.wait()
    index = embedder.index
    for name in ("_embed_one", "_by_sign_estimate", "_cosines", "_first_visible"):
        setattr(lane, name, timed(name.lstrip("_"), getattr(lane, name)))
    page_rows = timed("page rows", pagematch._page_rows)
    index.nearest_bits = timed("hamming scan", index.nearest_bits)  # type: ignore[method-assign]
    pages = sample_pages(db, args.pages)
    for n in range(args.rounds):
        TIMES.clear()
        for url, title in pages:
            source = normalise_url(url)
            host, text = host_of(source), pagematch.related_text(title, "")

            def hop(con: Any, source: str = source, host: str = host, text: str = text) -> Any:
                return page_rows(con, source, host), lane.nearest_in(
                    con, index, text, lane.FACT, pagematch.RELATED_LIMIT, exclude_host=host
                )

            t0 = time.perf_counter()
            await store.read_with(hop)
            TIMES.setdefault("the hop", []).append((time.perf_counter() - t0) * 1000)
        print(f"round {n + 1}, {len(pages)} pages (ms)")
        for name, values in TIMES.items():
            q = statistics.quantiles(values, n=100)
            print(f"  {name:<16} p50 {statistics.median(values):6.3f}  p95 {q[94]:6.3f}  p99 {q[98]:6.3f}")
    await embedder.stop()
    await store.close()
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
