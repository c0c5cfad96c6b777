"""What one cell of the site health matrix says at a glance: a status and the one number that
matters, and the line a maintainer pastes into a bug report.

A cell is one row of the matrix (a Phase A window, the Phase A run with its ledger check, a Phase B
scenario, a real page, a self-check). Its status:

  fail    the test failed or errored
  notrun  the selection expected it and nothing ran it
  gap     the test passed but the page shows a gap it only reports: a real page captured with
          fewer or other turns than its transcript, or a silent partial capture; or an expected
          failure (xfail) from a checked-in list
  skip    skipped (an optional input is missing)
  pass    passed, nothing to report

Fields are read when present, so rows from older or newer tests render: real pages may carry
`expected`/`captured`/`matched`/`misses`/`silent_partial`/`blocks` (or the older
`turns_expected`/`turns_captured`/`matched_turns`/`match`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

STATUSES = ("fail", "notrun", "gap", "skip", "pass")  # failures first
MARK = {"fail": "✗", "notrun": "?", "gap": "!", "skip": "–", "pass": "✓"}
PHASE_A_WINDOWS = ("memory_off", "site_off", "sensitive")


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def first(row: Mapping[str, Any], *names: str) -> Any:
    for n in names:
        if row.get(n) is not None:
            return row[n]
    return None


def miss_kinds(row: Mapping[str, Any]) -> list[str]:
    """The kinds of the misses a capture recorded (`misses`: a list of kinds or of
    {kind, ...}; or a count), in order, without repeats."""
    misses = row.get("misses")
    kinds: list[str] = []
    if isinstance(misses, list):
        for m in misses:
            k = m.get("kind") if isinstance(m, dict) else m
            if k is not None and str(k) not in kinds:
                kinds.append(str(k))
    elif _int(misses):
        kinds.append(f"{misses} miss")
    return kinds


def turns(row: Mapping[str, Any]) -> tuple[int | None, int | None, int | None]:
    """(captured, expected, exactly matched) turns, whichever spelling the row uses."""
    return (
        _int(first(row, "captured", "turns_captured")),
        _int(first(row, "expected", "turns_expected")),
        _int(first(row, "matched", "matched_turns")),
    )


def blocks_score(row: Mapping[str, Any]) -> tuple[int, int] | None:
    """Markdown block scores summed ({"code": "1/1", "table": "0/1"} -> (1, 2))."""
    blocks = row.get("blocks")
    if not isinstance(blocks, dict) or not blocks:
        return None
    got = want = 0
    for v in blocks.values():
        try:
            a, b = str(v).split("/", 1)
            got, want = got + int(a), want + int(b)
        except ValueError:
            continue
    return (got, want) if want else None


def real_page_gap(row: Mapping[str, Any]) -> bool:
    if row.get("silent_partial") is True:
        return True
    if row.get("match") is False:
        return True
    captured, expected, matched = turns(row)
    if expected is not None and matched is not None and matched < expected:
        return True
    if expected is not None and captured is not None and captured != expected:
        return True
    score = blocks_score(row)
    return bool(score and score[0] < score[1])


def status(row: Mapping[str, Any] | None) -> str:
    if not row:
        return "notrun"
    outcome = str(row.get("outcome", "?"))
    if row.get("teardown_errors"):
        return "fail"
    if outcome in ("failed", "error") and row.get("phase") == "phase_a" and row.get("variant") == "run":
        # the whole Phase A test: its own cell is the ledger check; a window that failed is
        # shown (and counted) in its own cell
        windows_failed = any(v != "passed" for v in (row.get("variants") or {}).values())
        if windows_failed and isinstance(row.get("ledger"), int):
            return "pass"
        return "fail"
    if outcome in ("failed", "error", "xpassed"):
        return "fail"
    if outcome == "not_run":
        return "notrun"
    if outcome == "xfailed":
        return "gap"
    if outcome == "skipped":
        return "skip"
    if outcome != "passed":
        return "fail"
    if row.get("phase") == "real_pages" and real_page_gap(row):
        return "gap"
    return "pass"


def headline(row: Mapping[str, Any]) -> str:
    """The one number that matters for this cell, as a few words."""
    if row.get("outcome") == "not_run":
        return "not run"
    phase = row.get("phase")
    key = row.get("variant") or row.get("scenario")
    if phase == "phase_a" and key == "run":
        ledger = row.get("ledger")
        return f"{ledger} req" if isinstance(ledger, int) else str(ledger or "")
    if phase == "phase_a":
        if _int(row.get("violations")):
            return f"{row['violations']} viol"
        if row.get("injected") is True:
            return "injected"
        req = row.get("requests")
        return f"{req} req" if req is not None else ""
    if phase in ("phase_b", "real_pages"):
        captured, expected, matched = turns(row)
        bits = []
        if captured is not None or expected is not None:
            bits.append(f"{'?' if captured is None else captured}/{'?' if expected is None else expected}")
        if matched is not None and captured is not None and matched < captured:
            bits.append(f"{matched} exact")
        kinds = miss_kinds(row)
        if kinds:
            bits.append(kinds[0] + (f" +{len(kinds) - 1}" if len(kinds) > 1 else ""))
        elif phase == "phase_b" and _int(row.get("selector_misses")):
            bits.append(f"{row['selector_misses']} miss")
        if row.get("silent_partial") is True:
            bits.append("silent partial")
        score = blocks_score(row)
        if score and score[0] < score[1]:
            bits.append(f"blocks {score[0]}/{score[1]}")
        if phase == "phase_b" and status(row) == "fail":
            for field, label in (
                ("match", "turns" if captured == expected else ""),
                ("composer_insert", "insert"),
                ("note_in_panel", "note"),
                ("note_green", "green"),
            ):
                if row.get(field) is False:
                    if label:
                        bits.append(f"{label} ✗")
                    break
            if row.get("ledger") == "mismatch":
                bits.append("ledger ✗")
        return " · ".join(bits)
    if row.get("ledger") == "mismatch":
        return "ledger ✗"
    if _int(row.get("violations")):
        return f"{row['violations']} caught"
    return ""


def label(row: Mapping[str, Any]) -> str:
    key = str(row.get("variant") or row.get("scenario") or row.get("test") or "?")
    if row.get("phase") == "phase_a":
        return {"memory_off": "memory off", "site_off": "site off", "run": "run"}.get(key, key)
    return key


def site_rows(entry: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [r for bucket in entry.values() for r in bucket.values()]


def site_status(entry: Mapping[str, Any]) -> str:
    found = {status(r) for r in site_rows(entry)}
    return next((s for s in STATUSES if s in found), "pass")


def is_site(name: str) -> bool:
    """Chat sites are rows of the matrix; `_farm`, `_leaky`, ... (and `-`) are self-checks."""
    return not name.startswith(("_", "-"))


def _count(rows: Iterable[Mapping[str, Any]]) -> tuple[int, int]:
    """(passing, total) where a skipped cell counts in neither."""
    got = [st for st in map(status, rows) if st != "skip"]
    return sum(st == "pass" for st in got), len(got)


def skipped(matrix: Mapping[str, Any]) -> int:
    return sum(
        status(r) == "skip" for e in matrix.get("sites", {}).values() for rows in e.values() for r in rows.values()
    )


def counts(matrix: Mapping[str, Any]) -> dict[str, tuple[int, int]]:
    """(passing, total) per part of the farm: chat sites whose every cell passes (or skips),
    Phase A windows, Phase B scenarios, real pages captured exactly, the farm's self-checks."""
    sites = matrix.get("sites", {})
    chat = [e for k, e in sites.items() if is_site(k)]
    own = [e for k, e in sites.items() if not is_site(k)]
    green = [site_status(e) in ("pass", "skip") for e in chat]
    return {
        "sites": (sum(green), len(green)),
        "A": _count(r for e in chat for k, r in e.get("phase_a", {}).items() if k in PHASE_A_WINDOWS),
        "B": _count(r for e in chat for r in e.get("phase_b", {}).values()),
        "real": _count(r for e in chat for r in e.get("real_pages", {}).values()),
        "self": _count(r for e in own for b, rows in e.items() if b != "real_pages" for r in rows.values()),
    }


def problems(matrix: Mapping[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    """(status, "site/part/name", row) of every cell that is not a plain pass or skip,
    failures first."""
    part = {"phase_a": "A", "phase_b": "B", "real_pages": "real", "other": "self"}
    out = []
    for site, entry in matrix.get("sites", {}).items():
        for bucket, rows in entry.items():
            for key, row in rows.items():
                st = status(row)
                if st in ("fail", "notrun", "gap"):
                    out.append((st, f"{site}/{part.get(bucket, bucket)}/{key}", row))
    out.sort(key=lambda p: (STATUSES.index(p[0]), p[1]))
    return out


def summary_line(matrix: Mapping[str, Any], limit: int = 8) -> str:
    """One line for a bug report: build, totals per part, then what is not green."""
    c = counts(matrix)
    build = matrix.get("build") or {}
    head = "Wherefrom farm"
    if build.get("commit"):
        head += f" @{build['commit']}"
    if build.get("chromium"):
        head += f" · Chromium {build['chromium']}"
    silent = sum(
        1
        for e in matrix.get("sites", {}).values()
        for r in e.get("real_pages", {}).values()
        if r.get("silent_partial") is True
    )
    parts = [
        f"sites {c['sites'][0]}/{c['sites'][1]} green",
        f"A {c['A'][0]}/{c['A'][1]}",
        f"B {c['B'][0]}/{c['B'][1]}",
    ]
    if c["real"][1]:
        parts.append(f"real pages {c['real'][0]}/{c['real'][1]} exact, {silent} silent partial")
    if c["self"][1]:
        parts.append(f"self-checks {c['self'][0]}/{c['self'][1]}")
    if n_skipped := skipped(matrix):
        parts.append(f"{n_skipped} skipped")
    probs = problems(matrix)
    tally = {s: sum(p[0] == s for p in probs) for s in ("fail", "notrun", "gap")}
    words = {"fail": "failing", "notrun": "not run", "gap": "with gaps"}
    if not probs:
        return f"{head}: " + " · ".join(parts) + " — all green"
    parts.append(", ".join(f"{n} {words[s]}" for s, n in tally.items() if n))
    # name what fails and what has gaps; cells that never ran are named only when few (a
    # narrowed run leaves many, and they say nothing about the build)
    named = [p for p in probs if p[0] != "notrun" or tally["notrun"] <= 3]
    shown = [
        f"{MARK[s]} {name}" + (f" ({h})" if s != "notrun" and (h := headline(r)) else "")
        for s, name, r in named[:limit]
    ]
    if len(named) > limit:
        shown.append(f"+{len(named) - limit} more")
    if tally["notrun"] > 3:
        where = {n.split("/")[0] for s, n, _ in probs if s == "notrun"}
        shown.append(f"? {tally['notrun']} cells in {len(where)} site(s) not run")
    return f"{head}: " + " · ".join(parts) + " — " + "; ".join(shown)
