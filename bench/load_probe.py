"""The load benchmark's stall prober: GET /api/health every 10 ms from its own process
(`bench/load.py --probe PORT SECONDS OUT`), latency summaries, and stalls against the target."""

from __future__ import annotations

import http.client
import http.server
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
LOAD_SCRIPT = REPO / "bench" / "load.py"
STALL_TARGET_MS = 50.0
PROBE_INTERVAL = 0.010


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    s = sorted(values)
    return s[min(len(s) - 1, max(0, round(q / 100 * (len(s) - 1))))]


def summary(values: list[float]) -> dict[str, float]:
    return {
        "n": len(values),
        "p50_ms": pct(values, 50),
        "p99_ms": pct(values, 99),
        "max_ms": max(values) if values else float("nan"),
        "mean_ms": statistics.fmean(values) if values else float("nan"),
    }


def probe_main(port: int, seconds: float, out: str) -> None:
    """GET /api/health every 10 ms on one kept-alive connection; write [[t, latency_ms], ...]."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    samples: list[list[float]] = []
    errors = 0
    start = time.perf_counter()
    next_at = start
    while True:
        now = time.perf_counter()
        if now - start >= seconds:
            break
        if now < next_at:
            time.sleep(next_at - now)
        t0 = time.perf_counter()
        try:
            conn.request("GET", "/api/health")
            resp = conn.getresponse()
            resp.read()
            ok = resp.status == 200
        except (OSError, http.client.HTTPException):
            ok = False
            conn.close()
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        t1 = time.perf_counter()
        if ok:
            samples.append([round(t0 - start, 4), (t1 - t0) * 1000])
        else:
            errors += 1
        next_at = max(next_at + PROBE_INTERVAL, t1)
    Path(out).write_text(json.dumps({"samples": samples, "errors": errors}))


class Prober:
    def __init__(self, port: int, seconds: float, workdir: Path, name: str) -> None:
        self.out = workdir / f"probe-{name}.json"
        self.proc = subprocess.Popen(  # noqa: S603 - this script
            [sys.executable, str(LOAD_SCRIPT), "--probe", str(port), str(seconds), str(self.out)],
            cwd=REPO,
        )

    def result(self) -> dict[str, Any]:
        self.proc.wait(120)
        data = json.loads(self.out.read_text())
        lat = [s[1] for s in data["samples"]]
        return {**summary(lat), "errors": data["errors"], "latencies_ms": lat}


def stall_report(phase: dict[str, Any], baseline: dict[str, Any]) -> dict[str, Any]:
    base = baseline["p50_ms"]
    excess_p99 = max(0.0, phase["p99_ms"] - base)
    excess_max = max(0.0, phase["max_ms"] - base)
    over = sum(1 for x in phase["latencies_ms"] if x - base > STALL_TARGET_MS)
    base_over = sum(1 for x in baseline["latencies_ms"] if x - base > STALL_TARGET_MS)
    return {
        **{k: v for k, v in phase.items() if k != "latencies_ms"},
        "samples_over_target": over,
        "fraction_over_target": over / max(1, phase["n"]),
        "baseline_fraction_over_target": base_over / max(1, baseline["n"]),
        "stall_p99_ms": excess_p99,
        "stall_max_ms": excess_max,
        "p99_over_baseline_p99": phase["p99_ms"] / baseline["p99_ms"],
        "max_over_baseline_max": phase["max_ms"] / baseline["max_ms"],
        "stall_p99_within_target": excess_p99 <= STALL_TARGET_MS,
        "stall_max_within_target": excess_max <= STALL_TARGET_MS,
    }
