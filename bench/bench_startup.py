"""A server's start on an existing store, timed: from `python -m server serve` to each state of
search by meaning its health reports (the static index loading, partitioned, ready; the second
model and the third voice loading, building, ready), as a person restarting it over a large store
waits for them. Words are searched from the first state on; by meaning once the static model is
ready.

    .venv/bin/python bench/bench_memory.py --items 1000000 --data-dir D   # the store, once
    .venv/bin/python bench/bench_startup.py D [--runs 3]

Each run starts the server on a free port over D (read, nothing written but its own queue state),
polls `GET /api/health` every 50 ms, and stops the server once everything is ready. It prints per
run the seconds to each state, then the median over the runs of the time to the static model's
ready and to everything ready.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import time
from pathlib import Path

import aiohttp

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from testkit.server_process import free_port  # noqa: E402

VOICES = ("deep", "third")


def state_of(meaning: dict[str, object]) -> tuple[str, ...]:
    """(static model's state, its index's, then each voice's)."""
    voices = [str(meaning.get(v, {}).get("state", "off")) for v in VOICES]  # type: ignore[attr-defined]
    return (str(meaning["state"]), str(meaning.get("index")), *voices)


def ready(state: tuple[str, ...]) -> bool:
    return (
        state[0] in ("ready", "failed")
        and state[1] != "partitioning"
        and all(v in ("ready", "off", "failed") for v in state[2:])
    )


async def one_run(data_dir: Path) -> dict[tuple[str, ...], float]:
    """Seconds from the start to the first time each state was seen."""
    port = free_port()
    t0 = time.perf_counter()
    proc = subprocess.Popen(  # noqa: ASYNC220, S603 - a fixed argv of this interpreter
        [sys.executable, "-m", "server", "serve", "--port", str(port), "--data-dir", str(data_dir)],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    seen: dict[tuple[str, ...], float] = {}
    token = data_dir / "token"
    try:
        async with aiohttp.ClientSession() as session:
            while True:
                try:
                    headers = {"Authorization": f"Bearer {token.read_text().strip()}"} if token.exists() else {}
                    async with session.get(f"http://127.0.0.1:{port}/api/health", headers=headers) as r:
                        meaning = (await r.json()).get("meaning") if r.status == 200 else None
                except aiohttp.ClientError:
                    meaning = None
                if meaning:
                    state = state_of(meaning)
                    seen.setdefault(state, time.perf_counter() - t0)
                    if ready(state):
                        return seen
                if proc.poll() is not None:
                    raise SystemExit(f"the server exited ({proc.returncode}) before it was ready")
                await asyncio.sleep(0.05)
    finally:
        proc.terminate()
        proc.wait()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("data_dir", type=Path)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    static, whole = [], []
    for n in range(1, args.runs + 1):
        seen = asyncio.run(one_run(args.data_dir))
        print(f"run {n}: " + ", ".join(f"{'/'.join(s)} {t:.2f} s" for s, t in seen.items()))
        static.append(min(t for s, t in seen.items() if s[0] == "ready"))
        whole.append(max(seen.values()))
    print(f"median of {args.runs}: static model ready {statistics.median(static):.2f} s, "
          f"everything ready {statistics.median(whole):.2f} s")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
