"""The background embedder on an upgraded store: how fast it builds, and whether the event loop
stalls while it does.

    .venv/bin/python bench/bench_backfill.py [--notes 30000] [--quiet]

A store is written as the version before the vectors table left it (migrations up to 0005,
generated notes of 12-40 words, through provenance.stamp), then our server starts on it and
embeds everything in the background (server.meaning.embedder). A prober (a thread of the bench's process) sends
GET /api/health every 10 ms during the build and for as long again after it (the baseline).
Reported: items/s of the build (wall, and per CPU second of the server process: the machine may
be shared), and the health
response time p50/p99/max during the build next to the baseline's: a stall of the event loop
would show there. With --quiet, no one asks while the second model builds (the prober and the
bench look every QUIET_LOOK_S): the build then takes both cores (server.quiet), as it does while
the person is away. JSON to bench/out/backfill.json.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sqlite3
import statistics
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from server.provenance import stamp  # noqa: E402
from server.store.db import _statements, migration_files  # noqa: E402
from testkit.server_process import ServerProcess  # noqa: E402


def old_store(db: Path, notes: int, seed: int = 3) -> None:
    rng = random.Random(seed)
    words = [f"{a}{b}" for a in ("ka", "lo", "mi", "ne", "pu", "ra", "so", "ti") for b in ("ber", "dan", "fel", "gor")]
    words += "walnut harbour lantern meadow copper violin glacier orchard thunder saffron river garden".split()
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE schema_migrations (name TEXT PRIMARY KEY, applied_at REAL NOT NULL)")
    for name, sql in migration_files():
        if name >= "0006":
            break
        for statement in _statements(sql):
            con.execute(statement)
        con.execute("INSERT INTO schema_migrations VALUES (?, ?)", (name, time.time()))
    now = time.time()
    rows = []
    for i in range(notes):
        p = stamp(f"https://site{i % 300}.example/page/{i}", f"page {i}")
        text = " ".join(rng.choices(words, k=rng.randint(12, 40)))
        rows.append(("note", "", text, p.source_url, p.source_host, p.source_ref, now, "instant", now, now))
    con.executemany(
        "INSERT INTO facts(kind, title, text, source_url, source_host, source_ref, valid_at, granularity, "
        "created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        rows,
    )
    con.commit()
    con.close()


QUIET_LOOK_S = 5.0  # --quiet: how often the second model's build is looked at (server.quiet.QUIET_S is 1 s)


def prober(base: str, token: str, stop: threading.Event, samples: list[tuple[float, str]], quiet: bool) -> None:
    """GET /api/health every 10 ms (a thread of this process: the server's loop is another); with
    `quiet`, every QUIET_LOOK_S while the second model builds."""
    req = urllib.request.Request(base + "/api/health", headers={"Authorization": f"Bearer {token}"})  # noqa: S310
    while not stop.is_set():
        t0 = time.perf_counter()
        with urllib.request.urlopen(req, timeout=10) as resp:  # noqa: S310 - loopback, our server
            body = json.loads(resp.read())
        samples.append(((time.perf_counter() - t0) * 1000, phase(body["meaning"])))
        stop.wait(QUIET_LOOK_S if quiet and samples[-1][1] == "second" else 0.01)


def phase(meaning: dict[str, Any]) -> str:
    """building (the static model's vectors), second (then the second model's), ready (both)."""
    if meaning["state"] == "ready" and meaning.get("deep", {}).get("state") in ("loading", "building"):
        return "second"
    return str(meaning["state"])


def summary(ms: list[float]) -> dict[str, Any]:
    return {"n": len(ms), "p50": statistics.median(ms), "p99": pct(ms, 99), "max": max(ms)} if ms else {}


def cpu_s(pid: int) -> float:
    """User + system CPU seconds of a process so far (the machine is shared: wall time is not)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--notes", type=int, default=30_000)
    ap.add_argument("--quiet", action="store_true", help="no one asks while the second model builds")
    ap.add_argument("--out", type=Path, default=REPO / "bench" / "out" / "backfill.json")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="wf-backfill-"))
    try:
        (tmp / "data").mkdir()
        old_store(tmp / "data" / "wherefrom.db", args.notes)
        server = ServerProcess(tmp / "data")
        t0 = time.perf_counter()
        server.start(within=60)
        samples: list[tuple[float, str]] = []
        stop = threading.Event()
        probe = threading.Thread(target=prober, args=(server.base, server.token, stop, samples, args.quiet))
        probe.start()
        try:
            while True:
                status, health = server.call("GET", "/api/health", headers={"Authorization": f"Bearer {server.token}"})
                if health["meaning"]["state"] in ("ready", "failed"):
                    break
                time.sleep(0.2)
            build_s = time.perf_counter() - t0
            assert server.proc is not None
            server_cpu = cpu_s(server.proc.pid)
            meaning = health["meaning"]
            second_s, second_cpu = 0.0, 0.0
            while phase(health["meaning"]) == "second":  # the second model's build, after the first's
                time.sleep(QUIET_LOOK_S if args.quiet else 0.5)
                status, health = server.call("GET", "/api/health", headers={"Authorization": f"Bearer {server.token}"})
                second_s, second_cpu = time.perf_counter() - t0 - build_s, cpu_s(server.proc.pid) - server_cpu
            time.sleep(min(build_s, 30))  # the baseline: as long again, idle
        finally:
            stop.set()
            probe.join()
        server.stop()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    during = [ms for ms, state in samples if state == "building"]
    second = [ms for ms, state in samples if state == "second"]
    after = [ms for ms, state in samples if state == "ready"]
    result = {
        "notes": args.notes,
        "quiet": args.quiet,
        "build_s": round(build_s, 1),
        "items_per_s": round(meaning["embedded"] / build_s),
        "server_cpu_s": round(server_cpu, 1),
        "items_per_server_cpu_s": round(meaning["embedded"] / server_cpu),
        "vectors": meaning["vectors"],
        "health_ms_during": {
            "n": len(during),
            "p50": statistics.median(during),
            "p99": pct(during, 99),
            "max": max(during),
        }
        if during
        else {},
        "second_model": {
            "build_s": round(second_s, 1),
            "items_per_s": round(args.notes / second_s) if second_s else None,
            "items_per_server_cpu_s": round(args.notes / second_cpu) if second_cpu else None,
            "health_ms": {
                "n": len(second),
                "p50": statistics.median(second),
                "p99": pct(second, 99),
                "max": max(second),
            }
            if second
            else {},
        },
        "health_ms_after": {"n": len(after), "p50": statistics.median(after), "p99": pct(after, 99), "max": max(after)}
        if after
        else {},
    }
    print(json.dumps(result, indent=2))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
