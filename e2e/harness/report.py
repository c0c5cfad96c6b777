"""The site health matrix: e2e/report/health.json and health.html, merged across xdist workers.

Each test appends one JSON line to e2e/report/parts/<worker>.jsonl; at the end of the session the
controller (or the only process, without xdist) merges them into the matrix:

  site -> {phase_a: {variant: row}, phase_b: {scenario: row}, real_pages: {name: row}, skeleton: row}

A row holds the outcome (passed/failed/error/skipped), the time, and what the test measured
(capture script injected, requests seen by the tap, turns expected and captured, selector misses,
composer insert, note -> green). Failure artifacts (trace, screenshots, console) are listed per row.
"""

from __future__ import annotations

import html
import json
import os
import time
from pathlib import Path
from typing import Any

REPORT_DIR = Path(os.environ.get("WF_REPORT_DIR", Path(__file__).resolve().parents[1] / "report"))
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


def expected_cells() -> list[tuple[str, str, str]]:
    """(site, phase, key) of every cell the selection should fill: Phase A's three checks per
    site, Phase B per fixture scenario. A cell with no row is `not_run`, never a blank."""
    from e2e.harness.selection import site_filter
    from e2e.sites import SITES, catalog

    want = site_filter()
    cells = [(s, "phase_a", v) for s in SITES if want in (None, s) for v in PHASE_A_VARIANTS]
    cells += [(f.site, "phase_b", f.scenario) for f in catalog(want)]
    return cells


def build_matrix(rows: list[dict[str, Any]], expected: list[tuple[str, str, str]] | None = None) -> dict[str, Any]:
    sites: dict[str, Any] = {}
    have = {(r.get("site"), r.get("phase"), r.get("variant") or r.get("scenario")) for r in rows}
    rows = rows + [
        {"site": s, "phase": p, ("variant" if p == "phase_a" else "scenario"): k, "outcome": "not_run"}
        for s, p, k in expected or []
        if (s, p, k) not in have
    ]
    for r in rows:
        site = r.get("site") or "-"
        entry = sites.setdefault(
            site, {"phase_a": {}, "phase_b": {}, "real_pages": {}, "other": {}}
        )
        phase = r.get("phase", "other")
        key = r.get("variant") or r.get("scenario") or r.get("test", "")
        bucket = entry.get(phase, entry["other"]) if phase in entry else entry["other"]
        bucket[key] = r
    summary: dict[str, dict[str, int]] = {}
    for r in rows:
        s = summary.setdefault(r.get("phase", "other"), {})
        s[r.get("outcome", "?")] = s.get(r.get("outcome", "?"), 0) + 1
    return {"generated": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "summary": summary, "sites": sites}


def write(wall_s: float | None = None) -> Path:
    REPORT_DIR.mkdir(parents=True, exist_ok=True)
    matrix = build_matrix(collect_rows(), expected_cells())
    if wall_s is not None:
        matrix["wall_s"] = round(wall_s, 1)
    (REPORT_DIR / "health.json").write_text(
        json.dumps(matrix, indent=1, ensure_ascii=False, default=str), "utf-8"
    )
    (REPORT_DIR / "health.html").write_text(render_html(matrix), "utf-8")
    return REPORT_DIR / "health.json"


def _cell(row: dict[str, Any] | None, fields: list[str]) -> str:
    if not row:
        return "<td class=none>—</td>"
    outcome = row.get("outcome", "?")
    bits = [f"<b>{html.escape(outcome)}</b>"]
    for f in fields:
        if f in row and row[f] not in (None, ""):
            bits.append(f"{html.escape(f)}: {html.escape(str(row[f]))}")
    if row.get("time_s") is not None:
        bits.append(f"{row['time_s']}s")
    if row.get("error"):
        bits.append(
            f"<span class=err title='{html.escape(str(row['error']))}'>{html.escape(str(row['error'])[:160])}</span>"
        )
    for a in row.get("artifacts", []) or []:
        rel = os.path.relpath(a, REPORT_DIR)
        bits.append(f"<a href='{html.escape(rel)}'>{html.escape(Path(a).name)}</a>")
    return f"<td class={html.escape(outcome)}>" + "<br>".join(bits) + "</td>"


A_FIELDS = ["requests", "violations", "injected", "ledger"]
B_FIELDS = [
    "injected",
    "probe_requests",
    "capture_requests",
    "turns_expected",
    "turns_captured",
    "match",
    "selector_misses",
    "composer_insert",
    "note_green",
    "note_in_panel",
    "ledger",
]
R_FIELDS = ["supported", "injected", "turns_expected", "turns_captured", "matched_turns", "match"]


def render_html(m: dict[str, Any]) -> str:
    variants = ["memory_off", "site_off", "sensitive", "run"]  # run: the whole test, with artifacts
    out = [
        "<!doctype html><meta charset=utf-8><title>Wherefrom farm — site health</title><style>",
        "body{font:13px system-ui,sans-serif;margin:1em}table{border-collapse:collapse}",
        "td,th{border:1px solid #ccc;padding:4px 6px;vertical-align:top;max-width:340px}",
        ".passed{background:#e6f6e6}.failed,.error{background:#fbe3e3}.skipped{background:#f3f3f3}",
        ".none{color:#aaa}.err{color:#900}</style>",
        "<h1>Site health matrix</h1>",
        f"<p>generated {html.escape(m.get('generated', ''))}"
        + (f", wall {m['wall_s']} s" if m.get("wall_s") is not None else "")
        + f" — {html.escape(json.dumps(m.get('summary', {})))}</p>",
        "<table><tr><th>site</th>"
        + "".join(f"<th>Phase A: {v}</th>" for v in variants)
        + "<th>Phase B (per scenario)</th><th>real pages / other</th></tr>",
    ]
    for site, e in sorted(m.get("sites", {}).items()):
        row = [f"<tr><th>{html.escape(site)}</th>"]
        row += [_cell(e["phase_a"].get(v), A_FIELDS) for v in variants]
        cells = []
        for scen, r in sorted(e["phase_b"].items()):
            inner = _cell(r, B_FIELDS)
            cells.append(f"<table><tr><th>{html.escape(scen)}</th>{inner}</tr></table>")
        row.append("<td>" + ("".join(cells) or "—") + "</td>")
        rp = [
            f"<table><tr><th>{html.escape(k)}</th>{_cell(r, R_FIELDS)}</tr></table>"
            for k, r in sorted(e["real_pages"].items())
        ]
        rp += [
            f"<table><tr><th>{html.escape(k)}</th>{_cell(r, [])}</tr></table>"
            for k, r in sorted(e["other"].items())
        ]
        row.append("<td>" + ("".join(rp) or "—") + "</td></tr>")
        out.append("".join(row))
    out.append("</table>")
    return "\n".join(out)
