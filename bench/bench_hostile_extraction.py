"""Extraction time against page size for pages built to be slow (many tiny tables, many short
paragraphs): the time of a page 4x larger as a ratio to the smaller one's, in the same run.
Linear work gives about 4; jusText's neighbour search (skipped above
server.library.extract.FAST_TREE_ELEMENTS) gave about 16.

    .venv/bin/python bench/bench_hostile_extraction.py [--n 1500]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

UNITS = {
    "tiny tables": "<table><tr><td>a</td><td>b</td></tr></table>",
    "short paragraphs": "<p>a</p>",
}


def seconds(unit: str, n: int) -> float:
    from server.library.extract import extract_html

    html = "<html><body>" + unit * n + "</body></html>"
    start = time.perf_counter()
    extract_html(html, "https://example.com/bench")
    return time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1500)
    args = ap.parse_args()
    for name, unit in UNITS.items():
        small, large = seconds(unit, args.n), seconds(unit, 4 * args.n)
        print(
            f"{name}: {args.n} -> {small:.2f} s, {4 * args.n} -> {large:.2f} s, ratio {large / small:.1f} (linear: 4)"
        )


if __name__ == "__main__":
    main()
