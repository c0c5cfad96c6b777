"""Promnesia's `/visits` on the same pages, for bench/bench_memory.py's page-match comparison.

Promnesia (https://github.com/karlicoss/promnesia) answers "what do I know about this URL" from
its own SQLite file. We give it the same store: one visit per fact (its page, time, title and
text as context), written by Promnesia's own writer (`visits_to_sqlite`, URLs through its own
`canonify`), then time `POST /visits {"url": ...}` on its own server (`promnesia serve`) for the
pages page-match is timed on. Promnesia runs from its own interpreter, never ours:

    python3 -m venv /tmp/promnesia-venv && /tmp/promnesia-venv/bin/pip install promnesia
    .venv/bin/python bench/bench_memory.py --data-dir D --reuse --promnesia /tmp/promnesia-venv/bin/python
"""

from __future__ import annotations

import asyncio
import subprocess
import time
from pathlib import Path

import aiohttp

# run by Promnesia's interpreter: argv = our database, Promnesia's database
_WRITER = r"""
import sqlite3, sys
from datetime import datetime, timezone
from pathlib import Path
from promnesia.cannon import canonify
from promnesia.common import DbVisit, Loc
from promnesia.database.dump import visits_to_sqlite

src, dst = sys.argv[1], Path(sys.argv[2])
con = sqlite3.connect(f"file:{src}?mode=ro", uri=True)

def visits():
    rows = con.execute("SELECT source_url, title, valid_at, kind, substr(text, 1, 300) FROM facts")
    for url, title, at, kind, text in rows:
        yield DbVisit(
            norm_url=canonify(url), orig_url=url, dt=datetime.fromtimestamp(at, timezone.utc),
            locator=Loc.make(title=title or url, href=url), src=kind, context=text,
        )

errors = visits_to_sqlite(visits(), overwrite_db=True, _db_path=dst)
print(len(errors), "errors")
"""


def build(python: str, ours: Path, theirs: Path) -> float:
    """Write Promnesia's database from ours; the seconds it took."""
    t0 = time.perf_counter()
    subprocess.run([python, "-c", _WRITER, str(ours), str(theirs)], check=True, capture_output=True)  # noqa: S603
    return time.perf_counter() - t0


async def timed_visits(python: str, db: Path, port: int, urls: list[str]) -> list[float]:
    """Start `promnesia serve` on the database, ask /visits for each URL in turn (ms each)."""
    proc = subprocess.Popen(  # noqa: ASYNC220, S603 - Promnesia's own interpreter, a fixed argv
        [python, "-m", "promnesia", "serve", "--db", str(db), "--port", str(port), "--host", "127.0.0.1", "--quiet"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        async with aiohttp.ClientSession() as session:
            for _ in range(600):
                try:
                    async with session.post(base + "/status", json={}) as r:
                        if r.status == 200:
                            break
                except aiohttp.ClientError:
                    pass
                await asyncio.sleep(0.1)
            for u in urls[:20]:  # warm-up: its first requests load the table and create its index
                async with session.post(base + "/visits", json={"url": u}) as r:
                    await r.read()
            out = []
            for u in urls:
                t = time.perf_counter()
                async with session.post(base + "/visits", json={"url": u}) as r:
                    await r.read()
                    if r.status != 200:
                        raise RuntimeError(f"promnesia /visits {u} -> {r.status}")
                out.append((time.perf_counter() - t) * 1000)
            return out
    finally:
        proc.terminate()
        proc.wait(10)
