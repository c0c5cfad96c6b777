"""Load benchmark: many concurrent clients against a real server, and its event-loop stalls.

Bounded, loopback only, stops by itself. It starts its own server subprocess on a free port
with a temporary data dir (`python -m server serve --port P --data-dir D --allow-private-fetch`,
the token read from D/token), sets a few site rules, and runs three phases:

  1. baseline    a dedicated prober (its own process) sends GET /api/health every 10 ms to
                 the idle server: the no-load response time of this machine, this run;
  2. extraction  the prober runs while one task saves large real HTML pages, alternating
                 add_text (the page's HTML in the body) and add_url (the server fetches it
                 from a local page server): stalls caused by extraction alone;
  3. load        N concurrent aiohttp clients (default 200) for S seconds mixing page-probe,
                 page-match, captures (conversations that grow a turn at a time) and notes over
                 a spread of URLs (a few popular pages, a long tail; collect, suggest and off
                 hosts), while the extraction task and the prober keep running.

A stall is the prober's response time in excess of the baseline median. Reported: errors
(any unexpected status or failed request), p50/p99 per operation, throughput, and stall
max/p99 against the 50 ms target, also as ratios to the baseline. JSON goes to
bench/out/load.json.

    .venv/bin/python bench/load.py              # 200 clients, 60 s load phase
    .venv/bin/python bench/load.py --quick      # 200 clients, 10 s
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import os
import random
import shutil
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import aiohttp

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
from bench.load_probe import PROBE_INTERVAL, STALL_TARGET_MS, Prober, probe_main, stall_report, summary  # noqa: E402
from bench.load_traffic import (  # noqa: E402
    CHAT_HOSTS,
    COLLECT_HOSTS,
    EXPECTED,
    OPS,
    RULES,
    PageServer,
    load_pages,
    page_url,
    words,
    zipf_path,
)
from testkit.server_process import ServerProcess  # noqa: E402 - after the path is set

OUT = REPO / "bench" / "out" / "load.json"


# ---------------------------------------------------------------- the server under test


class Server(ServerProcess):
    """Our server as a subprocess (testkit/server_process.py: pid and data dir checked), with the
    test-only private fetch on so add_url can reach the page server on loopback."""

    def __init__(self, data_dir: Path) -> None:
        super().__init__(data_dir, "--allow-private-fetch")
        self.start()
        self.headers = {"Authorization": f"Bearer {self.token}"}


# ---------------------------------------------------------------- the clients


class Recorder:
    def __init__(self) -> None:
        self.lat: dict[str, list[float]] = {}
        self.errors: dict[str, int] = {}
        self.statuses: dict[str, dict[str, int]] = {}
        self.samples: list[str] = []

    def add(self, op: str, ms: float, status: int | str) -> None:
        self.lat.setdefault(op, []).append(ms)
        st = self.statuses.setdefault(op, {})
        st[str(status)] = st.get(str(status), 0) + 1
        if status not in EXPECTED[op]:
            self.errors[op] = self.errors.get(op, 0) + 1
            if len(self.samples) < 20:
                self.samples.append(f"{op}: {status}")

    def report(self, seconds: float) -> dict[str, Any]:
        ops = {}
        for op, lat in self.lat.items():
            ops[op] = {
                **summary(lat),
                "errors": self.errors.get(op, 0),
                "per_s": len(lat) / seconds,
                "statuses": self.statuses[op],
            }
        all_lat = [x for v in self.lat.values() for x in v]
        return {
            "ops": ops,
            "total": {**summary(all_lat), "errors": sum(self.errors.values()), "per_s": len(all_lat) / seconds},
            "error_samples": self.samples,
        }


async def timed(session: aiohttp.ClientSession, rec: Recorder, op: str, method: str, url: str, **kw: Any) -> Any:
    t0 = time.perf_counter()
    try:
        async with session.request(method, url, **kw) as r:
            body = await r.read()
            status: int | str = r.status
    except (aiohttp.ClientError, TimeoutError) as err:
        body, status = b"", type(err).__name__
    rec.add(op, (time.perf_counter() - t0) * 1000, status)
    return body


async def client(i: int, server: Server, session: aiohttp.ClientSession, rec: Recorder, until: float) -> None:
    rng = random.Random(i)
    chat_host, chat_path = CHAT_HOSTS[i % len(CHAT_HOSTS)]
    convo_url, turns = "", []  # type: str, list[dict[str, str]]
    names, weights = list(OPS), list(OPS.values())
    base = server.base
    while time.perf_counter() < until:
        op = rng.choices(names, weights)[0]
        if op == "page-probe":
            await timed(session, rec, op, "GET", base + "/api/page-probe", params={"url": page_url(rng)})
        elif op == "page-match":
            await timed(
                session,
                rec,
                op,
                "GET",
                base + "/api/page-match",
                params={"url": page_url(rng), "title": words(rng, 2, 8).title()},
            )
        elif op == "note":
            host = rng.choice(COLLECT_HOSTS)
            await timed(
                session,
                rec,
                op,
                "POST",
                base + "/api/notes",
                json={"url": f"https://{host}{zipf_path(rng)}", "title": words(rng, 2, 6), "text": words(rng, 8, 60)},
            )
        else:  # capture: the conversation grows by a turn per capture (the content script re-sends all)
            if not turns or len(turns) >= 30:
                convo_url, turns = f"https://{chat_host}{chat_path}{uuid.uuid4()}", []
            role = "user" if len(turns) % 2 == 0 else "assistant"
            turns.append({"role": role, "text": words(rng, 5, 25) if role == "user" else words(rng, 40, 200)})
            await timed(
                session,
                rec,
                op,
                "POST",
                base + "/api/captures",
                json={"url": convo_url, "title": words(rng, 2, 5), "site": chat_host.split(".")[-2], "turns": turns},
            )


async def extractor(
    server: Server, pages: dict[str, bytes], page_base: str, session: aiohttp.ClientSession, rec: Recorder, until: float
) -> None:
    """One page at a time, alternating the add_text and add_url lanes, new URLs each time."""
    names = list(pages)
    k = 0
    while time.perf_counter() < until:
        name = names[k % len(names)]
        if k % 2 == 0:
            body = json.dumps(
                {
                    "url": f"https://pages.example.com/{k}/{name}",
                    "title": f"Page {k}",
                    "html": pages[name].decode("utf-8", "replace"),
                }
            ).encode()
            await timed(
                session,
                rec,
                "add_text",
                "POST",
                server.base + "/api/library/add_text",
                data=io.BytesIO(body),
                headers={"Content-Type": "application/json"},
            )
        else:
            await timed(
                session,
                rec,
                "add_url",
                "POST",
                server.base + "/api/library/add_url",
                json={"url": f"{page_base}/{name}?k={k}"},
            )
        k += 1


async def setup(server: Server, session: aiohttp.ClientSession) -> None:
    for host, mode in RULES.items():
        async with session.put(server.base + "/api/site-mode", json={"host": host, "mode": mode}) as r:
            assert r.status == 200, (host, r.status, await r.text())
    rng = random.Random(1)
    for _ in range(300):  # some memory to find: notes on popular pages
        host = rng.choice(COLLECT_HOSTS)
        async with session.post(
            server.base + "/api/notes",
            json={
                "url": f"https://{host}{zipf_path(rng)}",
                "title": words(rng, 2, 6),
                "text": words(rng, 8, 60),
            },
        ) as r:
            assert r.status == 201, await r.text()


async def run(args: argparse.Namespace) -> dict[str, Any]:
    workdir = Path(tempfile.mkdtemp(prefix="wherefrom-load-"))
    server = Server(workdir / "data")
    pages, pages_from = load_pages(args.pages)
    page_server = PageServer(pages)
    result: dict[str, Any] = {
        "config": {
            "clients": args.clients,
            "seconds": args.seconds,
            "baseline_s": args.baseline_seconds,
            "extraction_s": args.extraction_seconds,
            "pages": pages_from,
            "page_bytes": sorted(len(v) for v in pages.values()),
            "op_mix": OPS,
            "cpus": os.cpu_count(),
            "python": sys.version.split()[0],
            "aiohttp": aiohttp.__version__,
        },
    }
    try:
        connector = aiohttp.TCPConnector(limit=args.clients + 8)
        timeout = aiohttp.ClientTimeout(total=120)
        async with aiohttp.ClientSession(connector=connector, headers=server.headers, timeout=timeout) as session:
            await setup(server, session)

            print(f"baseline: prober alone for {args.baseline_seconds:g} s", flush=True)
            prober = Prober(server.port, args.baseline_seconds, workdir, "baseline")
            await asyncio.to_thread(prober.proc.wait, 120)
            baseline = prober.result()

            print(
                f"extraction: prober + add_text/add_url of {pages_from} for {args.extraction_seconds:g} s", flush=True
            )
            ext_only = Recorder()
            prober = Prober(server.port, args.extraction_seconds, workdir, "extraction")
            await extractor(
                server, pages, page_server.base, session, ext_only, time.perf_counter() + args.extraction_seconds
            )
            await asyncio.to_thread(prober.proc.wait, 120)
            extraction_probe = prober.result()

            print(f"load: {args.clients} clients + extraction + prober for {args.seconds:g} s", flush=True)
            rec, ext_load = Recorder(), Recorder()
            prober = Prober(server.port, args.seconds, workdir, "load")
            started = time.perf_counter()
            until = started + args.seconds
            await asyncio.gather(
                *(client(i, server, session, rec, until) for i in range(args.clients)),
                extractor(server, pages, page_server.base, session, ext_load, until),
            )
            elapsed = time.perf_counter() - started
            await asyncio.to_thread(prober.proc.wait, 120)
            load_probe = prober.result()

            async with session.get(server.base + "/api/health") as r:
                health = await r.json()
        alive = server.proc.poll() is None
    finally:
        page_server.stop()
        server.stop()
    result["server"] = {
        "alive_at_end": alive,
        "version": health.get("version"),
        "schema": health.get("db", {}).get("schema_version"),
    }
    result["load"] = {**rec.report(elapsed), "elapsed_s": elapsed}
    result["load"]["zero_errors"] = result["load"]["total"]["errors"] == 0
    result["extraction"] = {"alone": ext_only.report(args.extraction_seconds), "during_load": ext_load.report(elapsed)}
    result["stall"] = {
        "target_ms": STALL_TARGET_MS,
        "probe_interval_ms": PROBE_INTERVAL * 1000,
        "baseline": {k: v for k, v in baseline.items() if k != "latencies_ms"},
        "extraction_alone": stall_report(extraction_probe, baseline),
        "under_load": stall_report(load_probe, baseline),
    }
    if not args.keep:
        shutil.rmtree(workdir, ignore_errors=True)
    else:
        result["workdir"] = str(workdir)
    return result


def print_table(r: dict[str, Any]) -> None:
    load = r["load"]
    print()
    print(
        f"LOAD  {r['config']['clients']} clients, {load['elapsed_s']:.1f} s, {r['config']['cpus']} CPUs "
        f"(client and server share them)"
    )
    print(f"{'operation':<12} {'count':>8} {'errors':>7} {'per s':>8} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>8}")
    rows = [*load["ops"].items(), ("TOTAL", load["total"])]
    for op, s in rows:
        print(
            f"{op:<12} {s['n']:>8} {s['errors']:>7} {s['per_s']:>8.1f} {s['p50_ms']:>8.1f} {s['p99_ms']:>8.1f} "
            f"{s['max_ms']:>8.1f}"
        )
    print(f"zero errors: {'YES' if load['zero_errors'] else 'NO  ' + ', '.join(load['error_samples'][:5])}")
    print()
    print("EXTRACTION LANES (one page at a time)")
    for phase in ("alone", "during_load"):
        for op, s in r["extraction"][phase]["ops"].items():
            print(
                f"  {phase:<12} {op:<9} n={s['n']:<4} errors={s['errors']:<3} p50={s['p50_ms']:.0f} ms "
                f"p99={s['p99_ms']:.0f} ms  statuses={s['statuses']}"
            )
    st = r["stall"]
    b = st["baseline"]
    print()
    print(
        f"EVENT-LOOP STALLS (GET /api/health every {st['probe_interval_ms']:.0f} ms from its own process; "
        f"stall = latency - baseline p50; target {st['target_ms']:.0f} ms)"
    )
    print(
        f"  baseline (idle)   n={b['n']:<5} p50={b['p50_ms']:.2f} ms p99={b['p99_ms']:.2f} ms max={b['max_ms']:.2f} ms"
    )
    for name in ("extraction_alone", "under_load"):
        s = st[name]
        print(
            f"  {name:<17} n={s['n']:<5} p50={s['p50_ms']:.2f} ms p99={s['p99_ms']:.2f} ms max={s['max_ms']:.2f} ms"
            f" | stall p99={s['stall_p99_ms']:.1f} ms ({'ok' if s['stall_p99_within_target'] else 'OVER'})"
            f" max={s['stall_max_ms']:.1f} ms ({'ok' if s['stall_max_within_target'] else 'OVER'})"
            f" | p99 x{s['p99_over_baseline_p99']:.1f}, max x{s['max_over_baseline_max']:.1f} baseline"
            f" | {s['samples_over_target']} samples over target ({100 * s['fraction_over_target']:.2f}%;"
            f" idle baseline {100 * s['baseline_fraction_over_target']:.2f}%)"
        )


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--probe"]:
        probe_main(int(argv[1]), float(argv[2]), argv[3])
        return 0
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--clients", type=int, default=200)
    p.add_argument("--seconds", type=float, default=60.0, help="length of the load phase")
    p.add_argument("--quick", action="store_true", help="a 10 s load phase (and shorter baseline/extraction phases)")
    p.add_argument("--baseline-seconds", type=float, default=None)
    p.add_argument("--extraction-seconds", type=float, default=None)
    p.add_argument("--pages", type=int, default=12, help="how many large pages the extraction task cycles through")
    p.add_argument("--out", type=Path, default=OUT)
    p.add_argument("--keep", action="store_true", help="keep the temp data dir and probe files")
    args = p.parse_args(argv)
    if args.quick:
        args.seconds = 10.0
    if args.baseline_seconds is None:
        args.baseline_seconds = 3.0 if args.quick else 5.0
    if args.extraction_seconds is None:
        args.extraction_seconds = 5.0 if args.quick else 15.0
    result = asyncio.run(run(args))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1))
    print_table(result)
    print(f"\nJSON: {args.out}")
    ok = result["load"]["zero_errors"] and result["server"]["alive_at_end"]
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
