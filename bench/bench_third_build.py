"""The third voice's build over a whole store, timed: its vectors deleted and every item queued
again (as the migration that brought it queued an upgraded store's), then our server started on
the store as users run it (`python -m server serve`), nobody asking; every --every seconds its
health is read (the third voice's queue and state, its scale sample) with the server's CPU time
and RSS from /proc, until the voice is ready (or --max-minutes).

    .venv/bin/python bench/bench_memory.py --items 1000000 --data-dir D --samples 10   # a 1M store
    cp -r D E && .venv/bin/python bench/bench_third_build.py E

It rewrites E's third-voice tables: run it on a copy. The second model's vectors stay as they are
(bench_memory writes them as random int8: the third voice reads its items' text, not those).
"""

from __future__ import annotations

import argparse
import asyncio
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import aiohttp

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.bench_memory import cpu_s, rss_mb  # noqa: E402
from testkit.server_process import free_port  # noqa: E402

_REQUEUE = (
    "DELETE FROM e5_fact_vectors",
    "DELETE FROM e5_chunk_vectors",
    "INSERT OR IGNORE INTO e5_queue(item, id) SELECT 'fact', id FROM facts",
    "INSERT OR IGNORE INTO e5_queue(item, id) SELECT 'chunk', id FROM document_chunks",
)


def requeue(db: Path) -> int:
    con = sqlite3.connect(db)
    with con:
        for sql in _REQUEUE:
            con.execute(sql)
    queued = int(con.execute("SELECT COUNT(*) FROM e5_queue").fetchone()[0])
    con.close()
    return queued


async def health(session: aiohttp.ClientSession, base: str, headers: dict[str, str]) -> dict[str, Any]:
    async with session.get(base + "/api/health", headers=headers) as r:
        meaning: dict[str, Any] = (await r.json())["meaning"]
        return meaning


async def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("data_dir", type=Path)
    ap.add_argument("--every", type=float, default=30.0, help="seconds between readings")
    ap.add_argument("--max-minutes", type=float, default=240.0)
    args = ap.parse_args()
    queued = requeue(args.data_dir / "wherefrom.db")
    print(f"queued for the third voice: {queued:,} items")
    port = free_port()
    proc = subprocess.Popen(  # noqa: ASYNC220, S603 - our server, a fixed argv of this interpreter
        [sys.executable, "-m", "server", "serve", "--port", str(port), "--data-dir", str(args.data_dir)],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    t0 = time.monotonic()
    try:
        base = f"http://127.0.0.1:{port}"
        async with aiohttp.ClientSession() as session:
            for _ in range(600):  # the token is written as it starts
                if (args.data_dir / "token").exists() or proc.poll() is not None:
                    break
                await asyncio.sleep(0.1)
            headers = {"Authorization": f"Bearer {(args.data_dir / 'token').read_text().strip()}"}
            started: tuple[float, float, int] | None = None  # (wall, cpu, pending) when it began
            while time.monotonic() - t0 < args.max_minutes * 60:
                try:
                    m = await health(session, base, headers)
                except aiohttp.ClientError:
                    await asyncio.sleep(0.5)
                    continue
                third, now, cpu = m.get("third", {}), time.monotonic() - t0, cpu_s(proc.pid)
                pending = int(third.get("pending", 0))
                if started is None and third.get("state") == "building" and pending:
                    started = (now, cpu, pending)
                done = 0 if started is None else started[2] - pending
                rate = ""
                if started is not None and now > started[0]:
                    per_cpu = done / max(cpu - started[1], 1e-9)
                    rate = f", {done / (now - started[0]):.0f} items/s wall, {per_cpu:.0f} per CPU s"
                print(
                    f"{now:7.0f} s  third voice {third.get('state')}, {pending:,} to go, scale {third.get('scale')}; "
                    f"server CPU {cpu:.0f} s, RSS {rss_mb(proc.pid)[0]:.0f} MB{rate}",
                    flush=True,
                )
                if third.get("state") == "ready" and started is not None:
                    print(f"built: {done:,} items in {now - started[0]:.0f} s ({cpu - started[1]:.0f} CPU s)")
                    return 0
                await asyncio.sleep(args.every)
            print("not built before --max-minutes")
            return 1
    finally:
        proc.terminate()
        proc.wait(timeout=30)


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
