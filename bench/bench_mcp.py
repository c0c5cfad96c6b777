"""`search_memory` through MCP over stdio, beside the same search over HTTP, in the same run.

    .venv/bin/python bench/bench_mcp.py                      # 100k items (built as bench_memory builds them)
    .venv/bin/python bench/bench_mcp.py --data-dir D --reuse # an existing store

Our server runs as a subprocess on the store; `wherefrom mcp` runs as another, started by the
MCP SDK's stdio client as an agent's host starts it. Each prose query (bench_memory's) is asked
both ways, alternately: `search_memory` (client -> stdio -> `wherefrom mcp` -> HTTP -> server
and back, formatted) and `GET /api/search` with the same limit. Reported: p50/p95 of each, and
the MCP path's ratio to HTTP (what MCP adds).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import TextIO

import aiohttp
from mcp import ClientSession, StdioServerParameters, stdio_client

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.memory_store import build, pct, prose_queries  # noqa: E402
from testkit.server_process import ServerProcess  # noqa: E402

LIMIT = 10  # search_memory's default


async def run(data_dir: Path, samples: int, errlog: TextIO) -> None:
    server = ServerProcess(data_dir).start(within=120)
    try:
        params = StdioServerParameters(
            command=sys.executable,
            cwd=REPO,
            args=["-m", "server", "mcp", "--port", str(server.port), "--data-dir", str(data_dir)],
        )
        queries = prose_queries(samples)
        headers = {"Authorization": f"Bearer {server.token}"}
        mcp_ms: list[float] = []
        http_ms: list[float] = []
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
            aiohttp.ClientSession() as http,
        ):
            await session.initialize()
            for q in queries[:20]:  # warm both paths (page cache, connections)
                await session.call_tool("search_memory", {"query": q, "limit": LIMIT})
            for q in queries:
                t0 = time.perf_counter()
                result = await session.call_tool("search_memory", {"query": q, "limit": LIMIT})
                mcp_ms.append((time.perf_counter() - t0) * 1000)
                assert not result.is_error, result
                t0 = time.perf_counter()
                async with http.get(
                    server.base + "/api/search", params={"q": q, "limit": LIMIT}, headers=headers
                ) as resp:
                    await resp.read()
                http_ms.append((time.perf_counter() - t0) * 1000)
                assert resp.status == 200
    finally:
        server.stop()
    print(f"\n{len(queries)} prose queries, limit {LIMIT}, asked both ways alternately")
    print(f"{'path':<34} {'p50 ms':>8} {'p95 ms':>8}")
    print(f"{'search_memory (MCP over stdio)':<34} {statistics.median(mcp_ms):>8.1f} {pct(mcp_ms, 95):>8.1f}")
    print(f"{'GET /api/search (HTTP)':<34} {statistics.median(http_ms):>8.1f} {pct(http_ms, 95):>8.1f}")
    print(
        f"MCP / HTTP: p50 x{statistics.median(mcp_ms) / statistics.median(http_ms):.2f}, "
        f"p95 x{pct(mcp_ms, 95) / pct(http_ms, 95):.2f}"
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--items", type=int, default=100_000)
    ap.add_argument("--samples", type=int, default=300)
    ap.add_argument("--data-dir", type=Path, default=None, help="where to build (default: a temp dir, removed)")
    ap.add_argument("--reuse", action="store_true", help="use the store already in --data-dir")
    args = ap.parse_args()
    data_dir = args.data_dir or Path(tempfile.mkdtemp(prefix="wherefrom-bench-mcp-"))
    data_dir.mkdir(parents=True, exist_ok=True)
    try:
        if not args.reuse:
            for p in data_dir.glob("wherefrom.db*"):
                p.unlink()
            info = build(data_dir / "wherefrom.db", args.items)
            print(f"built {info['items']:,} items in {info['seconds']:.0f}s")
        with open(os.devnull, "w") as errlog:
            asyncio.run(run(data_dir, args.samples, errlog))
    finally:
        if args.data_dir is None:
            shutil.rmtree(data_dir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    raise SystemExit(main())
