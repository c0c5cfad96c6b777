"""The site health matrix: e2e/report/health.json and health.html, merged across xdist workers.

Each test appends one JSON line to e2e/report/parts/<worker>.jsonl; at the end of the session the
controller (or the only process, without xdist) merges them into the matrix:

  sites: site -> {phase_a: {variant: row}, phase_b: {scenario: row}, real_pages: {name: row},
                  other: {name: row}}
  summary (outcomes per phase), expected (the cells the selection should fill), build (commit,
  Chromium), selection (SITE=, --shard and its plan), line (the summary line), wall_s

A row holds the outcome (passed/failed/error/skipped/xfailed; `not_run` for an expected cell no
test filled), the time, and what the test measured (capture script injected, requests seen by the
tap, turns expected and captured, misses, composer insert, note -> green). Failure artifacts
(trace, screenshots, console) are listed per row. What a cell shows is decided in cells.py, the
page is drawn by matrix_html.py, shards' matrices are merged by merge_health.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

REPORT_DIR = Path(os.environ.get("WF_REPORT_DIR", Path(__file__).resolve().parents[2] / "e2e" / "report"))
PARTS_DIR = REPORT_DIR / "parts"
ARTIFACTS_DIR = REPORT_DIR / "failures"


def worker_id() -> str:
    return os.environ.get("PYTEST_XDIST_WORKER", "main")


def reset() -> None:
    """Start of a session (controller only): drop the previous run's parts and artifacts."""
    for d in (PARTS_DIR, ARTIFACTS_DIR):
        if d.is_dir():
            for p in sorted(d.rglob("*"), reverse=True):
                p.unlink() if p.is_file() else p.rmdir()
    PARTS_DIR.mkdir(parents=True, exist_ok=True)


def append(row: dict[str, Any]) -> None:
    PARTS_DIR.mkdir(parents=True, exist_ok=True)
    with (PARTS_DIR / f"{worker_id()}.jsonl").open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(row, ensure_ascii=False, default=str) + "\n")


def collect_rows() -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    if PARTS_DIR.is_dir():
        for p in sorted(PARTS_DIR.glob("*.jsonl")):
            for line in p.read_text("utf-8").splitlines():
                if line.strip():
                    rows.append(json.loads(line))
    return rows


PHASE_A_VARIANTS = ("memory_off", "site_off", "sensitive")


def expected_cells(shard: str | None = None) -> list[tuple[str, str, str]]:
    """(site, phase, key) of every cell the selection should fill: Phase A's three checks per
    site, Phase B per fixture scenario — of the sites `SITE=` and the shard keep. A cell with no
    row is `not_run`, never a blank."""
    from testkit.farm.selection import site_filter
    from testkit.sites import SITES, catalog

    want = site_filter()
    keep = set(SITES)
    if shard is not None:
        from testkit.farm import shards

        keep = set(shards.load().sites(shard))
    cells = [(s, "phase_a", v) for s in SITES if want in (None, s) and s in keep for v in PHASE_A_VARIANTS]
    cells += [(f.site, "phase_b", f.scenario) for f in catalog(want) if f.site in keep]
    return cells


def cell_key(row: dict[str, Any]) -> tuple[str, str, str]:
    """Where a row sits in the matrix: (site, phase, key)."""
    return (
        str(row.get("site") or "-"),
        str(row.get("phase") or "other"),
        str(row.get("variant") or row.get("scenario") or row.get("test", "")),
    )


def build_matrix(rows: list[dict[str, Any]], expected: list[tuple[str, str, str]] | None = None) -> dict[str, Any]:
    sites: dict[str, Any] = {}
    have = {cell_key(r) for r in rows}
    rows = rows + [
        {"site": s, "phase": p, ("variant" if p == "phase_a" else "scenario"): k, "outcome": "not_run"}
        for s, p, k in expected or []
        if (s, p, k) not in have
    ]
    for r in rows:
        site, phase, key = cell_key(r)
        entry = sites.setdefault(site, {"phase_a": {}, "phase_b": {}, "real_pages": {}, "other": {}})
        entry.get(phase, entry["other"])[key] = r
    summary: dict[str, dict[str, int]] = {}
    for r in rows:
        s = summary.setdefault(r.get("phase", "other"), {})
        s[r.get("outcome", "?")] = s.get(r.get("outcome", "?"), 0) + 1
    return {
        "generated": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "summary": summary,
        "sites": sites,
        "expected": sorted(list(c) for c in expected or []),
    }


def build_info(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """What was tested: the commit (when run from a git checkout) and the Chromium version(s)
    the rows report."""
    commit = None
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],  # noqa: S607 - git from PATH, a fixed argv
            cwd=Path(__file__).resolve().parent,
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
        commit = out.stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        pass
    versions = sorted({str(r["chromium"]) for r in rows if r.get("chromium")})
    return {"commit": commit, "chromium": ", ".join(versions) or None}


def finish(matrix: dict[str, Any], out_dir: Path) -> Path:
    """Add the summary line and write health.json and health.html into out_dir."""
    from testkit.farm.cells import summary_line
    from testkit.farm.matrix_html import render_html

    matrix["line"] = summary_line(matrix)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "health.json").write_text(json.dumps(matrix, indent=1, ensure_ascii=False, default=str), "utf-8")
    (out_dir / "health.html").write_text(render_html(matrix, out_dir), "utf-8")
    return out_dir / "health.json"


def write(wall_s: float | None = None, shard: str | None = None) -> Path:
    rows = collect_rows()
    matrix = build_matrix(rows, expected_cells(shard))
    matrix["build"] = build_info(rows)
    matrix["selection"] = {"shard": shard, "site": os.environ.get("SITE") or None}
    if shard is not None:
        from testkit.farm import shards

        matrix["selection"]["plan"] = shards.load().as_json()
    if wall_s is not None:
        matrix["wall_s"] = round(wall_s, 1)
    return finish(matrix, REPORT_DIR)
