"""Visibility benchmark: what the one visibility rule (wf_visible, server/governance/visibility.py)
costs per row a reader evaluates, as a ratio to a bare Python SQL function and to no function
at all, measured in the same run on a store built by memory_store.py's generator.

    .venv/bin/python bench/bench_visibility.py               # 20k facts
    .venv/bin/python bench/bench_visibility.py --items 100000

Readers evaluate the rule only on the rows they could return (an index or an FTS window
first): at most ~400 rows (the search window), so the per-row figure times 400 bounds its cost.
"""

from __future__ import annotations

import argparse
import shutil
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

import memory_store  # noqa: E402

SQL = "SELECT COUNT(*) FROM facts f WHERE f.invalid_at IS NULL AND {cond}"


def best_of(con: sqlite3.Connection, sql: str, runs: int) -> float:
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        con.execute(sql).fetchall()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="wherefrom-bench-vis-"))
    try:
        return measure(folder / "wherefrom.db", args.items, args.runs)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def measure(db: Path, items: int, runs: int) -> int:
    memory_store.build(db, items)
    con = sqlite3.connect(db)
    (rows,) = con.execute("SELECT COUNT(*) FROM facts WHERE invalid_at IS NULL").fetchone()
    plain = best_of(con, SQL.format(cond="f.source_host IS NOT NULL"), runs)
    con.create_function("wf_bare", 1, lambda host: 1, deterministic=False)
    bare = best_of(con, SQL.format(cond="wf_bare(f.source_host)"), runs)
    memory_store.install_visibility(con)
    rule = best_of(con, SQL.format(cond="wf_visible(f.source_host)"), runs)
    con.close()
    per_row = {name: (t - plain) / rows * 1e6 for name, t in (("bare function", bare), ("wf_visible", rule))}
    print(
        f"{rows:,} live facts; best of {runs}: no function {plain * 1e3:.2f} ms, "
        f"bare function {bare * 1e3:.2f} ms, wf_visible {rule * 1e3:.2f} ms"
    )
    for name, us in per_row.items():
        print(f"  {name}: {us:.3f} us per row over no function")
    print(
        f"  wf_visible / bare function: {rule / bare:.2f}x; at the 400-row search window: "
        f"{per_row['wf_visible'] * 400 / 1e3:.2f} ms"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
