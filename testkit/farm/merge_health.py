"""Merge the shards' site health matrices into one (the matrix one run of the whole farm writes).

  python -m testkit.farm.merge_health OUT_DIR shard1/health.json shard2/health.json ...

Writes OUT_DIR/health.json and OUT_DIR/health.html and prints the summary line. Every row of
every shard is kept; the cells a shard expected but never filled stay `not_run`. The merged
matrix is rebuilt from the rows by the same code a single run uses (`report.build_matrix`), so
it equals that run's matrix (tests/testkit/test_farm_shard_plan.py checks it), apart from the stamps: when it
was generated, the wall time (the slowest shard's; `shards` lists each), `selection`.

Refused (exit 2, nothing written): a cell filled by two shards (a test ran twice), the same shard
twice, shards cut from different plans, or a shard of the plan missing. Exit 1 when the merged
matrix has a failed, errored or never-run cell; 0 when it is green.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from testkit.farm import report
from testkit.farm.cells import problems


class MergeError(ValueError):
    """The shards do not add up to one farm run."""


def rows_of(matrix: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The rows a matrix was built from (its `not_run` placeholders left out: the merged
    matrix derives them again from the expected cells)."""
    return [
        dict(row)
        for entry in matrix.get("sites", {}).values()
        for bucket in entry.values()
        for row in bucket.values()
        if row.get("outcome") != "not_run"
    ]


def merge(shards: Iterable[tuple[str, Mapping[str, Any]]]) -> dict[str, Any]:
    """One matrix from (source name, shard matrix) pairs; raises MergeError on a cell filled
    twice, a shard given twice, or a missing shard of the plan the shards name."""
    rows: list[dict[str, Any]] = []
    owner: dict[tuple[str, str, str], str] = {}
    twice: list[str] = []
    expected: list[tuple[str, str, str]] = []
    seen_expected: set[tuple[str, str, str]] = set()
    parts: dict[str, dict[str, Any]] = {}
    plans: list[Any] = []
    builds: list[dict[str, Any]] = []
    for source, m in shards:
        sel = m.get("selection") or {}
        name = str(sel.get("shard") or source)
        if name in parts:
            raise MergeError(f"shard {name!r} given twice ({source})")
        parts[name] = {
            "source": source,
            "wall_s": m.get("wall_s"),
            "generated": m.get("generated"),
            "site": sel.get("site"),
        }
        if sel.get("plan") is not None:
            plans.append(sel["plan"])
        builds.append(m.get("build") or {})
        for row in rows_of(m):
            key = report.cell_key(row)
            if key in owner:
                twice.append(f"{'/'.join(key)} (shards {owner[key]} and {name})")
            owner[key] = name
            rows.append(row)
        for cell in m.get("expected") or []:
            c = (str(cell[0]), str(cell[1]), str(cell[2]))
            if c not in seen_expected:
                seen_expected.add(c)
                expected.append(c)
    if twice:
        raise MergeError("cells filled by two shards (a test ran twice):\n  " + "\n  ".join(twice))
    if plans:
        if any(p != plans[0] for p in plans):
            raise MergeError("the shards were cut from different plans")
        want = [str(i + 1) for i in range(len(plans[0]["shards"]))]
        missing = [n for n in want if n not in parts]
        if missing:
            raise MergeError(f"shard(s) {missing} of the plan are missing; given {sorted(parts)}")
    merged = report.build_matrix(rows, expected)
    walls = [p["wall_s"] for p in parts.values() if isinstance(p["wall_s"], (int, float))]
    if walls:
        merged["wall_s"] = max(walls)
        merged["machine_s"] = round(sum(walls), 1)
    commits = sorted({str(b["commit"]) for b in builds if b.get("commit")})
    chromium = sorted({v.strip() for b in builds if b.get("chromium") for v in str(b["chromium"]).split(",")})
    merged["build"] = {"commit": ", ".join(commits) or None, "chromium": ", ".join(chromium) or None}
    merged["selection"] = {"shard": None, "site": None, "merged": sorted(parts)}
    merged["shards"] = dict(sorted(parts.items()))
    return merged


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m testkit.farm.merge_health", description=__doc__.split("\n")[0])
    ap.add_argument("out_dir", type=Path, help="where health.json and health.html go")
    ap.add_argument("inputs", type=Path, nargs="+", help="the shards' health.json files")
    args = ap.parse_args(argv)
    try:
        loaded = [(str(p), json.loads(p.read_text("utf-8"))) for p in args.inputs]
        merged = merge(loaded)
    except (OSError, ValueError) as exc:
        print(f"merge_health: {exc}", file=sys.stderr)
        return 2
    path = report.finish(merged, args.out_dir)
    print(f"merged {len(loaded)} shard matrices into {path} (and health.html)")
    print(merged["line"])
    bad = [p for p in problems(merged) if p[0] in ("fail", "notrun")]
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
