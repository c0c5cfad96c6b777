"""Capture matching: `captures.plan()` on 2,000 incoming turns against 20,000 stored ones (none
shared: the pushState case: one conversation per page), beside a same-run baseline that is the floor of
any matcher — building the lookup dicts of the stored turns and probing them once per incoming
turn.

    .venv/bin/python bench/bench_captures.py [--stored 20000] [--incoming 2000] [--old FILE]

`--old FILE` also times the `plan()` of another captures.py (for example the quadratic one,
`git show 2f898f9:server/memory/captures.py > /tmp/old_captures.py`), imported in isolation.
"""

from __future__ import annotations

import argparse
import sys
import time
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from server.memory.captures import Incoming, Stored, plan  # noqa: E402


def best_of(fn: Callable[[], Any], runs: int = 5) -> float:
    best = float("inf")
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--stored", type=int, default=20_000)
    ap.add_argument("--incoming", type=int, default=2_000)
    ap.add_argument("--old", type=Path, default=None, help="a captures.py whose plan() to time too")
    args = ap.parse_args()
    roles = ("user", "assistant")
    stored = [Stored(k, k, roles[k % 2], f"stored turn {k} " * 8, None) for k in range(args.stored)]
    incoming = [Incoming(roles[k % 2], f"incoming turn {k} " * 8) for k in range(args.incoming)]

    def floor() -> None:
        content = {(s.role, s.text): k for k, s in enumerate(stored)}
        for t in incoming:
            content.get((t.role, t.text))

    rows = [
        ("baseline: dict build + one probe per turn", best_of(floor)),
        ("plan() (this tree)", best_of(lambda: plan(stored, incoming))),
    ]
    if args.old is not None:
        # an older captures.py may import names this tree no longer has; plan() needs none of them
        source = args.old.read_text("utf-8").replace(
            "from server.governance.policy import require_collect", "require_collect = None"
        )
        old = types.ModuleType("old_captures")
        sys.modules["old_captures"] = old
        exec(compile(source, str(args.old), "exec"), old.__dict__)  # noqa: S102 - a file the person names
        o_stored = [old.Stored(*dataclass_tuple(s)) for s in stored]
        o_incoming = [old.Incoming(t.role, t.text, t.native_id) for t in incoming]
        rows.append((f"plan() of {args.old.name}", best_of(lambda: old.plan(o_stored, o_incoming), runs=1)))
    base = rows[0][1]
    print(f"capture matching: {args.incoming:,} incoming x {args.stored:,} stored, none shared (best of 5)")
    for name, secs in rows:
        print(f"  {name:<45} {secs * 1000:9.1f} ms   x{secs / base:6.1f} baseline")
    return 0


def dataclass_tuple(s: Stored) -> tuple[int, int, str, str, str | None]:
    return (s.id, s.position, s.role, s.text, s.native_id)


if __name__ == "__main__":
    sys.exit(main())
