"""Memory benchmark: page-probe (cache miss), page-match and a prose search through the real
HTTP stack on loopback, against the same lookups as bare SQL in the same run (the floor).

    .venv/bin/python bench/bench_memory.py                 # 100k items
    .venv/bin/python bench/bench_memory.py --items 1000000 # 1M items
    .venv/bin/python bench/bench_memory.py --data-dir D --reuse   # skip the build
    ... --promnesia /tmp/promnesia-venv/bin/python   # Promnesia's /visits on the same pages too

The store is generated directly with sqlite3 through the memory writers' own SQL
(server.memory.facts.INSERT_FACT + fact_row + provenance.stamp), so rows, indexes and FTS
are shaped as the server writes them. Hosts follow a Zipf-like spread (a few huge sites, a
long tail), pages per host likewise, 1-12 facts per page; 60% chat turns in conversations,
25% notes, 15% clips. Targets at 1M: probe p99 <= 2 ms; page-match p99 <= 5 ms and its p95 30x
faster than Promnesia's /visits; prose search p95 <= 25 ms; server RSS <= 500 MB (with the
vectors: search by meaning).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import aiohttp

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench import promnesia_baseline  # noqa: E402
from bench.memory_store import (  # noqa: E402
    build,
    install_visibility,
    pct,
    prose_queries,
    related_plans,
    sample_pages,
    sql_match,
    sql_probe,
    sql_search,
    synthetic_deep_vectors,
)
from server.meaning import minilm  # noqa: E402
from testkit.server_process import free_port  # noqa: E402

# --- the server -------------------------------------------------------------------------------


def rss_mb(pid: int) -> tuple[float, float]:
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        k, _, v = line.partition(":")
        fields[k] = v.strip()
    return int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024


def cpu_s(pid: int) -> float:
    """The process's CPU seconds so far (user + system, all threads)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def timed_http(session: aiohttp.ClientSession, url: str, params_list: list[dict[str, str]]) -> list[float]:
    out = []
    for params in params_list:
        t = time.perf_counter()
        async with session.get(url, params=params) as r:
            await r.read()
            if r.status != 200:
                raise RuntimeError(f"{url} {params} -> {r.status}: {await r.text()}")
        out.append((time.perf_counter() - t) * 1000)
    return out


def timed_sql(fn: Callable[..., None], con: sqlite3.Connection, args: Sequence[tuple[str, ...]]) -> list[float]:
    out = []
    for a in args:
        t = time.perf_counter()
        fn(con, *a)
        out.append((time.perf_counter() - t) * 1000)
    return out


async def wait_for_vectors(base: str, headers: dict[str, str]) -> dict[str, Any]:
    """The server builds the vectors of every item (server.meaning.embedder), then their
    partitions (server.meaning.partitions), in the background on its first start over this
    store, and loads the second model and the third voice: wait for all, and time them."""
    t0 = time.perf_counter()
    async with aiohttp.ClientSession(headers=headers) as session:
        while True:
            async with session.get(base + "/api/health") as r:
                meaning = (await r.json())["meaning"]
            voices = [meaning.get(k, {}).get("state", "off") for k in ("deep", "third")]  # loaded, built
            if meaning["state"] == "failed" or (
                meaning["state"] == "ready"
                and meaning.get("index") != "partitioning"
                and all(v in ("ready", "off", "failed") for v in voices)
            ):
                return {**meaning, "build_s": time.perf_counter() - t0}
            await asyncio.sleep(1)


async def run(
    data_dir: Path,
    samples: int,
    promnesia: str | None = None,
    promnesia_samples: int = 200,
    server_args: Sequence[str] = (),
) -> None:
    db = data_dir / "wherefrom.db"
    pages = sample_pages(db, samples * 2 + 50)
    probe_pages, match_pages = pages[:samples], pages[samples : samples * 2]
    queries = prose_queries(samples)
    port = free_port()
    # the server under test, started once before timing (a fixed argv of this interpreter)
    proc = subprocess.Popen(  # noqa: ASYNC220, S603
        [
            sys.executable,
            "-m",
            "server",
            "serve",
            "--port",
            str(port),
            "--data-dir",
            str(data_dir),
            "--log-level",
            "warning",
            *server_args,
        ],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        base = f"http://127.0.0.1:{port}"
        token_path = data_dir / "token"
        async with aiohttp.ClientSession() as s0:
            for _ in range(200):
                try:
                    async with s0.get(base + "/api/health") as r:
                        if r.status == 200 and token_path.exists():
                            break
                except aiohttp.ClientError:
                    pass
                await asyncio.sleep(0.05)
        token = token_path.read_text().strip()
        headers = {"Authorization": f"Bearer {token}"}
        rss_start = rss_mb(proc.pid)
        vectors = await wait_for_vectors(base, headers)
        print(
            f"vector index: {vectors['vectors']:,} vectors for {vectors['embedded']:,} items built in "
            f"{vectors['build_s']:.0f} s ({vectors['embedded'] / max(vectors['build_s'], 1e-9):,.0f} items/s), "
            f"{vectors.get('partitions', 0)} partitions; server RSS then {rss_mb(proc.pid)[0]:.1f} MB"
        )
        async with aiohttp.ClientSession(headers=headers) as session:
            warm = [{"url": u} for u, _ in pages[-50:]]
            await timed_http(session, base + "/api/page-probe", warm)  # connection + page cache warm-up
            asked = {
                "page-probe (miss)": ("/api/page-probe", [{"url": u} for u, _ in probe_pages]),
                "page-match": ("/api/page-match", [{"url": u, "title": t} for u, t in match_pages]),
                "prose search": ("/api/search", [{"q": q} for q in queries]),
            }
            http: dict[str, list[float]] = {}
            cpu: dict[str, float] = {}  # the server's CPU ms per request: what a loaded machine's waits leave out
            for name, (path, params) in asked.items():
                c0 = cpu_s(proc.pid)
                http[name] = await timed_http(session, base + path, params)
                cpu[name] = (cpu_s(proc.pid) - c0) * 1000 / len(params)
        rss_end, rss_peak = rss_mb(proc.pid)
    finally:
        proc.terminate()
        proc.wait(10)
    plans = await related_plans(db, match_pages)
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    install_visibility(con)
    sql = {
        "page-probe (miss)": timed_sql(sql_probe, con, probe_pages),
        "page-match": timed_sql(sql_match, con, plans),
        "prose search": timed_sql(sql_search, con, [(q, "") for q in queries]),
    }
    con.close()
    print(
        f"\n{'lookup':<20}{'http p50':>10}{'p95':>8}{'p99':>8}   "
        f"{'sql p50':>8}{'p95':>8}{'p99':>8}   {'ratio p50':>9}{'p99':>7}   {'cpu/req':>7}"
    )
    for name in http:
        h, q = http[name], sql[name]
        hp = [pct(h, p) for p in (50, 95, 99)]
        qp = [pct(q, p) for p in (50, 95, 99)]
        print(
            f"{name:<20}{hp[0]:>10.2f}{hp[1]:>8.2f}{hp[2]:>8.2f}   {qp[0]:>8.2f}{qp[1]:>8.2f}{qp[2]:>8.2f}"
            f"   {hp[0] / max(qp[0], 1e-3):>8.1f}x{hp[2] / max(qp[2], 1e-3):>6.1f}x   {cpu[name]:>7.2f}"
        )
    print(
        f"(ms; {samples} requests each, sequential, one client on loopback; cpu/req: the server's CPU ms "
        f"per request, all threads; mean http "
        f"{statistics.mean(http['page-match']):.2f} ms for page-match)"
    )
    print(f"server RSS: {rss_start[0]:.1f} MB at start, {rss_end:.1f} MB after, peak {rss_peak:.1f} MB")
    if promnesia:
        theirs = data_dir / "promnesia.sqlite"
        if not theirs.exists():
            print(f"promnesia: its database written in {promnesia_baseline.build(promnesia, db, theirs):.0f} s")
        asked = match_pages[:promnesia_samples]
        visits = await promnesia_baseline.timed_visits(promnesia, theirs, free_port(), [u for u, _ in asked])
        vp = [pct(visits, p) for p in (50, 95, 99)]
        mp = [pct(http["page-match"], p) for p in (50, 95, 99)]
        print(
            f"promnesia POST /visits, the first {len(asked)} of the same pages: "
            f"p50 {vp[0]:.2f} p95 {vp[1]:.2f} p99 {vp[2]:.2f} ms; "
            f"page-match {vp[0] / mp[0]:.1f}x faster at p50, {vp[1] / mp[1]:.1f}x at p95, {vp[2] / mp[2]:.1f}x at p99"
        )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--items", type=int, default=100_000)
    ap.add_argument("--samples", type=int, default=1000)
    ap.add_argument("--data-dir", type=Path, default=None, help="where to build (default: a temp dir, removed)")
    ap.add_argument("--reuse", action="store_true", help="use the store already in --data-dir")
    ap.add_argument("--no-second-model", action="store_true", help="serve without the second model (A/B of its cost)")
    ap.add_argument("--promnesia", default=None, help="a Python with promnesia installed: time its /visits too")
    ap.add_argument("--promnesia-samples", type=int, default=200, help="pages asked of Promnesia (~0.1-1 s each)")
    args = ap.parse_args()
    data_dir = args.data_dir or Path(tempfile.mkdtemp(prefix="wherefrom-bench-"))
    data_dir.mkdir(parents=True, exist_ok=True)
    try:
        db = data_dir / "wherefrom.db"
        if not args.reuse:
            if db.exists():
                for p in data_dir.glob("wherefrom.db*"):
                    p.unlink()
            print(f"building {args.items:,} items in {db}", file=sys.stderr)
            info = build(db, args.items)
            size = db.stat().st_size / 1e6
            print(
                f"built {info['items']:,} items, {info['pages']:,} pages, {info['hosts']:,} hosts, "
                f"{info['conversations']:,} conversations in {info['seconds']:.0f}s; db {size:.0f} MB"
            )
        if minilm.available() and not args.no_second_model:
            t0 = time.perf_counter()
            n, n3 = synthetic_deep_vectors(db)
            print(
                f"second model's vectors: {n:,}, third voice's (items the second does not read): {n3:,}, "
                f"written as random int8 in {time.perf_counter() - t0:.0f}s "
                "(their builds read ~100 and ~40 items/s: latency and memory only here, quality in "
                "bench_search_quality.py)"
            )
        server_args = ["--no-second-model"] if args.no_second_model else []
        asyncio.run(run(data_dir, args.samples, args.promnesia, args.promnesia_samples, server_args))
    finally:
        if args.data_dir is None:
            shutil.rmtree(data_dir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    raise SystemExit(main())
