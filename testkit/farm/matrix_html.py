"""The site health matrix as one static HTML page (no script, no network: opens offline).

One row per chat site, failures first. Phase A: one cell per window (memory off, site off,
sensitive) and one for the run's ledger check; Phase B and real pages: one compact cell per
scenario / page. A cell is a mark (✓ ✗ ! – ?) and the one number that matters (requests, turns
captured/expected, the miss kind); it opens (<details>) on everything the row recorded — the error,
the timings, the artifacts. The farm's self-checks follow in their own table. Narrow windows get
one card per site instead of a table, so the page never scrolls sideways.
"""

from __future__ import annotations

import html
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .cells import (
    MARK,
    PHASE_A_WINDOWS,
    STATUSES,
    counts,
    headline,
    is_site,
    label,
    site_status,
    status,
    summary_line,
)

WORDS = {
    "pass": "passed",
    "fail": "failed",
    "gap": "passed with a gap it reports",
    "skip": "skipped",
    "notrun": "not run",
}
# shown in a cell's summary or the table's structure already, or noise
HIDDEN = {"site", "phase", "variant", "scenario", "worker", "outcome", "error", "artifacts"}

CSS = """
:root{--pass:#e4f4e4;--pass-ink:#175c17;--fail:#fbe1e1;--fail-ink:#9a1414;--gap:#fff1cc;
--gap-ink:#7a5200;--skip:#eeeeee;--skip-ink:#555;--notrun:#e9e3f7;--notrun-ink:#4b2c8a}
*{box-sizing:border-box}
body{font:13px/1.35 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;padding:12px 16px;
color:#1b1b1b;background:#fff}
h1{font-size:18px;margin:0 0 6px}h2{font-size:15px;margin:18px 0 6px}
.line{margin:6px 0;padding:6px 8px;background:#f5f5f5;border:1px solid #ddd;border-radius:4px;
font:12px/1.4 ui-monospace,SFMono-Regular,Menlo,monospace;user-select:all;overflow-wrap:anywhere}
.meta{color:#555;margin:4px 0 10px}
.legend span{margin-right:10px;white-space:nowrap}
table{border-collapse:collapse;width:100%;table-layout:auto}
th,td{border-bottom:1px solid #e2e2e2;padding:5px 6px;vertical-align:top;text-align:left}
thead th{font-weight:600;color:#444;border-bottom:2px solid #ccc;white-space:nowrap}
th.site{width:1%;white-space:nowrap}
td.num{width:1%;white-space:nowrap;color:#555;text-align:right}
.chips{display:flex;flex-wrap:wrap;gap:4px}
details.c{display:block;max-width:100%}
details.c>summary{list-style:none;cursor:pointer;display:inline-flex;gap:5px;align-items:baseline;
padding:2px 7px;border-radius:10px;white-space:nowrap;max-width:100%;overflow:hidden}
details.c>summary::-webkit-details-marker{display:none}
details.c>summary .k{overflow:hidden;text-overflow:ellipsis;max-width:22ch}
details.c>summary .n{font-variant-numeric:tabular-nums;opacity:.85}
details.c[open]{flex-basis:100%}
.pass>summary,.m.pass{background:var(--pass);color:var(--pass-ink)}
.fail>summary,.m.fail{background:var(--fail);color:var(--fail-ink);font-weight:600}
.gap>summary,.m.gap{background:var(--gap);color:var(--gap-ink)}
.skip>summary,.m.skip{background:var(--skip);color:var(--skip-ink)}
.notrun>summary,.m.notrun{background:var(--notrun);color:var(--notrun-ink)}
.m{display:inline-block;min-width:1.5em;text-align:center;border-radius:8px;padding:0 4px}
.more{margin:4px 0 6px;padding:6px 8px;border:1px solid #ddd;border-radius:4px;background:#fafafa;
white-space:normal;font-weight:400;color:#222}
.more dl{display:grid;grid-template-columns:max-content 1fr;gap:1px 10px;margin:0}
.more dt{color:#666}.more dd{margin:0;overflow-wrap:anywhere}
.more pre{white-space:pre-wrap;overflow-wrap:anywhere;margin:0 0 4px;font-size:11px;max-height:16em;
overflow:auto;background:#fff;border:1px solid #eee;padding:4px}
code{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:12px}
tr.fail>th.site{box-shadow:inset 3px 0 var(--fail-ink)}
tr.gap>th.site{box-shadow:inset 3px 0 #d9a400}
tr.notrun>th.site{box-shadow:inset 3px 0 var(--notrun-ink)}
@media (max-width:760px){
 body{padding:8px}
 thead{display:none}
 table,tbody{display:block;width:100%}
 tr{display:flex;flex-wrap:wrap;align-items:baseline;gap:3px 8px;border:1px solid #ddd;
  border-radius:6px;margin:0 0 8px;padding:5px 7px}
 th,td{display:block;border:0;padding:0}
 th.site{flex:1 0 auto;order:0;width:auto}
 td.num{order:1;width:auto}
 td.a{order:2;flex:0 0 auto}
 td.w{order:3;flex:1 0 100%}
 td[data-label]::before{content:attr(data-label);font-size:11px;color:#666;margin-right:4px}
 td.w[data-label]::before{display:block;margin:2px 0 1px}
 td.a details.c{display:inline-block;vertical-align:baseline}
 td.a details.c[open]{display:block}
 td.empty{display:none}
 th.site{box-shadow:none!important}
 tr.fail{border-left:4px solid var(--fail-ink)}
 tr.gap{border-left:4px solid #d9a400}
 tr.notrun{border-left:4px solid var(--notrun-ink)}
 details.c>summary .k{max-width:18ch}
}
"""


def _esc(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _value(key: str, value: Any) -> str:
    if isinstance(value, dict):
        if key in ("timings", "steps"):
            return ", ".join(f"{_esc(k)} {_esc(v)} s" for k, v in value.items())
        return ", ".join(f"{_esc(k)}: {_esc(v)}" for k, v in value.items())
    if isinstance(value, list):
        return ", ".join(_esc(json.dumps(v, ensure_ascii=False) if isinstance(v, (dict, list)) else v) for v in value)
    if isinstance(value, bool):
        return "yes" if value else "no"
    return _esc(value)


def _details(row: Mapping[str, Any], report_dir: Path | None) -> str:
    """The error first, then every field the row recorded, then the failure artifacts."""
    out = f"<pre>{_esc(row['error'])}</pre>" if row.get("error") else ""
    items = [f"<dt>outcome</dt><dd>{_esc(row.get('outcome', '?'))}</dd>"]
    for key, value in row.items():
        if key in HIDDEN or value in (None, "", [], {}):
            continue
        items.append(f"<dt>{_esc(key)}</dt><dd>{_value(key, value)}</dd>")
    out += "<dl>" + "".join(items) + "</dl>"
    for a in row.get("artifacts") or []:
        name = Path(str(a)).name
        # linked when it lies under the report (a shard's artifacts stay with that shard)
        inside = report_dir is not None and Path(str(a)).is_relative_to(report_dir)
        href = os.path.relpath(str(a), report_dir) if inside and report_dir else name
        out += f"<div>artifact: <a href='{_esc(href)}'>{_esc(name)}</a></div>"
    return out


def chip(row: Mapping[str, Any] | None, name: str, report_dir: Path | None = None, *, show_name: bool = True) -> str:
    """One cell: mark, name (unless its column says it), the number that matters; opens on the
    whole row."""
    r: Mapping[str, Any] = row or {"outcome": "not_run"}
    st = status(r)
    num = headline(r)
    tip = f"{name}: {WORDS[st]}" + (f" — {num}" if num else "")
    if r.get("error"):
        tip += " — " + str(r["error"]).splitlines()[0][:200]
    return (
        f"<details class='c {st}'><summary title='{_esc(tip)}'>"
        f"<b aria-label='{_esc(WORDS[st])}'>{MARK[st]}</b>"
        + (f"<span class=k>{_esc(name)}</span>" if show_name else "")
        + (f"<span class=n>{_esc(num)}</span>" if num else "")
        + f"</summary><div class=more>{_details(r, report_dir)}</div></details>"
    )


def _chips(rows: Mapping[str, Mapping[str, Any]], report_dir: Path | None) -> str:
    if not rows:
        return "<span class=none>—</span>"  # the cell gets class `empty` (hidden when narrow)
    return (
        "<div class=chips>"
        + "".join(chip(r, label(r) if r.get("phase") == "phase_a" else k, report_dir) for k, r in sorted(rows.items()))
        + "</div>"
    )


def _site_time(entry: Mapping[str, Any]) -> float:
    total = 0.0
    for phase, rows in entry.items():
        for key, r in rows.items():
            if phase == "phase_a" and key != "run":
                continue
            try:
                total += float(r.get("time_s") or 0)
            except (TypeError, ValueError):
                continue
    return total


def _order(sites: Mapping[str, Any], order: list[str]) -> list[str]:
    rank = {s: i for i, s in enumerate(order)}
    return sorted(
        sites,
        key=lambda s: (STATUSES.index(site_status(sites[s])), rank.get(s, len(rank)), s),
    )


def render_html(m: Mapping[str, Any], report_dir: Path | None = None) -> str:
    try:
        from testkit.sites import SITES

        design_order = list(SITES)
    except Exception:  # noqa: BLE001 - rendering a merged matrix needs no checkout
        design_order = []
    sites = m.get("sites", {})
    chat = {k: v for k, v in sites.items() if is_site(k)}
    own = {k: v for k, v in sites.items() if not is_site(k)}
    c = counts(m)
    line = m.get("line") or summary_line(m)
    meta = [f"generated {_esc(m.get('generated', '?'))}"]
    if m.get("wall_s") is not None:
        meta.append(f"wall {_esc(m['wall_s'])} s")
    shards = m.get("shards")
    if shards:
        meta.append(
            "merged from shards " + ", ".join(f"{_esc(k)} ({_esc(v.get('wall_s', '?'))} s)" for k, v in shards.items())
        )
    sel = m.get("selection") or {}
    if sel.get("shard"):
        meta.append(f"shard {_esc(sel['shard'])}")
    if sel.get("site"):
        meta.append(f"SITE={_esc(sel['site'])}")
    out = [
        "<!doctype html><html lang=en><meta charset=utf-8>",
        "<meta name=viewport content='width=device-width,initial-scale=1'>",
        "<title>Wherefrom farm — site health</title>",
        f"<style>{CSS}</style>",
        "<h1>Site health</h1>",
        f"<p class=line title='click to select the whole line'>{_esc(line)}</p>",
        f"<p class=meta>{' · '.join(meta)}</p>",
        "<p class='meta legend'>"
        + "".join(f"<span><b class='m {s}'>{MARK[s]}</b> {WORDS[s]}</span>" for s in STATUSES)
        + "— open a cell for its details</p>",
        f"<h2>Chat sites <span class=meta>({c['sites'][0]}/{c['sites'][1]} green)</span></h2>",
        "<table class=matrix><thead><tr><th>site</th>"
        + "".join(f"<th>A · {label({'phase': 'phase_a', 'variant': v})}</th>" for v in PHASE_A_WINDOWS)
        + "<th>A · ledger</th><th>Phase B — fixtures</th><th>real pages</th><th>time</th>"
        "</tr></thead><tbody>",
    ]
    for site in _order(chat, design_order):
        e = chat[site]
        st = site_status(e)
        a = e.get("phase_a", {})
        repro = f"SITE={site} .venv/bin/python -m pytest -q e2e"
        row = [
            f"<tr class={st}><th class=site scope=row title='{_esc(site)}: {WORDS[st]}. "
            f"Reproduce: {_esc(repro)}'><b class='m {st}'>{MARK[st]}</b> {_esc(site)}</th>"
        ]
        for v in PHASE_A_WINDOWS:
            name = label({"phase": "phase_a", "variant": v})
            cell = chip(a.get(v), name, report_dir, show_name=False)
            row.append(f"<td class=a data-label='{_esc(name)}'>{cell}</td>")
        run = a.get("run")
        row.append(
            "<td class=a data-label='ledger'>"
            + (chip(run, "ledger", report_dir, show_name=False) if run else "<span class=none>—</span>")
            + "</td>"
        )
        real = {**e.get("real_pages", {}), **e.get("other", {})}
        for title, cells in (("Phase B — fixtures", e.get("phase_b", {})), ("real pages", real)):
            cls = "w" if cells else "w empty"
            row.append(f"<td class='{cls}' data-label='{title}'>{_chips(cells, report_dir)}</td>")
        row.append(f"<td class=num>{_site_time(e):.0f} s</td></tr>")
        out.append("".join(row))
    out.append("</tbody></table>")
    if own:
        out.append(
            f"<h2>Farm self-checks <span class=meta>({c['self'][0]}/{c['self'][1]})</span></h2>"
            "<table><thead><tr><th>check</th><th>results</th><th>time</th></tr></thead><tbody>"
        )
        for name in _order(own, []):
            e = own[name]
            st = site_status(e)
            rows = {k: r for bucket in e.values() for k, r in bucket.items()}
            out.append(
                f"<tr class={st}><th class=site scope=row><b class='m {st}'>{MARK[st]}</b> "
                f"{_esc(name.lstrip('_') or name)}</th>"
                f"<td class=w>{_chips(rows, report_dir)}</td>"
                f"<td class=num>{_site_time(e):.0f} s</td></tr>"
            )
        out.append("</tbody></table>")
    return "\n".join(out) + "\n"
