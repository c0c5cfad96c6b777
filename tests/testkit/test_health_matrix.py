"""The site health matrix at a glance: what a cell says (status and its one number), the order
(failures first), the summary line, and the static page (no script, nothing fetched, every cell
opens on its details). The rows are the shapes the farm's tests write, with and without the
per-page fields (`expected`/`captured`/`matched`/`misses`/`silent_partial`/`blocks`)."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from testkit.farm import report
from testkit.farm.cells import counts, headline, status, summary_line
from testkit.farm.matrix_html import render_html


def window(site: str, variant: str, **kw: Any) -> dict[str, Any]:
    return {
        "site": site,
        "phase": "phase_a",
        "variant": variant,
        "outcome": "passed",
        "requests": 0,
        "violations": 0,
        "injected": False,
        **kw,
    }


def page(site: str, name: str, **kw: Any) -> dict[str, Any]:
    return {"site": site, "phase": "real_pages", "variant": name, "outcome": "passed", **kw}


def test_a_real_page_cell_reads_the_new_fields_and_the_old() -> None:
    old = page("claude", "c", turns_expected=14, turns_captured=14, matched_turns=14, match=True)
    assert (status(old), headline(old)) == ("pass", "14/14")
    new = page("chatgpt", "s", expected=4, captured=0, matched=0, misses=["no_turns"], outcome="failed")
    assert (status(new), headline(new)) == ("fail", "0/4 · no_turns")
    silent = page("gemini", "g", expected=6, captured=3, matched=3, misses=[], silent_partial=True)
    assert status(silent) == "gap" and headline(silent) == "3/6 · silent partial"
    kinds = page("p", "x", expected=2, captured=2, matched=1, misses=[{"kind": "missing_role"}, {"kind": "empty_turn"}])
    assert status(kinds) == "gap" and headline(kinds) == "2/2 · 1 exact · missing_role +1"
    blocks = page("c", "b", expected=2, captured=2, matched=2, blocks={"code": "1/1", "table": "0/1"})
    assert status(blocks) == "gap" and headline(blocks) == "2/2 · blocks 1/2"
    full = page("c", "b", expected=2, captured=2, matched=2, blocks={"code": "1/1"})
    assert (status(full), headline(full)) == ("pass", "2/2")
    assert status(page("c", "x", outcome="xfailed", xfail_reason="known")) == "gap"
    assert status(page("c", "x", outcome="xpassed")) == "fail"


def test_a_phase_a_cell_shows_requests_or_violations() -> None:
    assert headline(window("grok", "memory_off")) == "0 req"
    bad = window("grok", "site_off", outcome="failed", requests=3, violations=2)
    assert (status(bad), headline(bad)) == ("fail", "2 viol")
    assert headline(window("grok", "sensitive", injected=True, outcome="failed")) == "injected"
    # the run's own cell is its ledger check: red only when the ledger (or the run) is at fault
    run: dict[str, Any] = {
        "site": "grok",
        "phase": "phase_a",
        "variant": "run",
        "outcome": "failed",
        "ledger": 14,
        "variants": {"memory_off": "passed", "site_off": "failed", "sensitive": "passed"},
    }
    assert (status(run), headline(run)) == ("pass", "14 req")
    assert status({**run, "ledger": "mismatch"}) == "fail"
    all_passed = dict.fromkeys(("memory_off", "site_off", "sensitive"), "passed")
    assert status({**run, "variants": all_passed}) == "fail"
    assert status({"outcome": "not_run"}) == "notrun" and status(None) == "notrun"


def matrix() -> dict[str, Any]:
    rows = []
    for site in ("chatgpt", "claude", "grok", "zai"):
        rows += [window(site, v) for v in ("memory_off", "site_off", "sensitive")]
        rows.append(
            {
                "site": site,
                "phase": "phase_a",
                "variant": "run",
                "outcome": "passed",
                "ledger": 12,
                "time_s": 20.0,
                "variants": dict.fromkeys(("memory_off", "site_off", "sensitive"), "passed"),
            }
        )
        rows.append(
            {
                "site": site,
                "phase": "phase_b",
                "scenario": "chat",
                "outcome": "passed",
                "turns_expected": 4,
                "turns_captured": 4,
                "match": True,
                "time_s": 8.0,
            }
        )
    rows.append(
        window(
            "zai",
            "site_off",
            outcome="failed",
            violations=1,
            requests=2,
            error="AssertionError: chat.z.ai is off, yet: <script>alert(1)</script>",
        )
    )
    rows.append(
        page(
            "chatgpt",
            "share",
            expected=4,
            captured=0,
            matched=0,
            misses=["no_turns"],
            outcome="failed",
            artifacts=["/x/report/failures/share-page0.png"],
        )
    )
    rows.append(page("claude", "artifacts", expected=14, captured=14, matched=13, misses=[]))
    rows.append({"site": "_farm", "phase": "other", "variant": "skeleton", "outcome": "passed"})
    expected = [(s, "phase_b", "virtualised") for s in ("grok",)]
    m = report.build_matrix(rows, expected)
    m["build"] = {"commit": "abc1234", "chromium": "150.0.7871.100"}
    return m


def test_the_summary_line_names_what_is_not_green() -> None:
    m = matrix()
    line = summary_line(m)
    assert line.startswith("Wherefrom farm @abc1234 · Chromium 150.0.7871.100: sites 0/4 green")
    assert "A 11/12" in line and "B 4/5" in line and "real pages 0/2 exact, 0 silent partial" in line
    # failures first, then never-run, then gaps; each with its number
    assert re.search(
        r"✗ chatgpt/real/share \(0/4 · no_turns\); ✗ zai/A/site_off \(1 viol\); "
        r"\? grok/B/virtualised; ! claude/real/artifacts \(14/14 · 13 exact\)$",
        line,
    ), line
    assert counts(m)["self"] == (1, 1)
    assert "\n" not in line


def test_an_all_green_line_says_so() -> None:
    rows = [window("pi", v) for v in ("memory_off", "site_off", "sensitive")]
    assert summary_line(report.build_matrix(rows)).endswith("A 3/3 · B 0/0 — all green")


class Page(HTMLParser):
    """Tags with their attributes, and the text of each row's site header."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.site_rows: list[str] = []
        self._site: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        self.tags.append((tag, a))
        if tag == "th" and "site" in (a.get("class") or ""):
            self._site = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "th" and self._site is not None:
            self.site_rows.append("".join(self._site).strip().split()[-1])
            self._site = None

    def handle_data(self, data: str) -> None:
        if self._site is not None:
            self._site.append(data)


def test_the_page_is_static_failures_first_and_opens_on_details() -> None:
    m = matrix()
    text = render_html(m, Path("/x/report"))
    p = Page()
    p.feed(text)
    tags = [t for t, _ in p.tags]
    assert "script" not in tags, "a static page: no script"
    for _, attrs in p.tags:  # nothing is fetched: no remote URL anywhere
        for k in ("src", "href"):
            assert not re.match(r"(?i)(https?:)?//", attrs.get(k) or ""), attrs
    assert "@import" not in text and "url(" not in text
    # one row per site, failures first (then not-run, then gaps, then green), self-checks apart
    assert p.site_rows[:4] == ["chatgpt", "zai", "grok", "claude"]
    assert p.site_rows[4:] == ["farm"]
    # every cell opens: a <details> per cell, the error escaped inside it
    assert tags.count("details") == 4 * 4 + 5 + 2 + 1
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text and "<script>alert" not in text
    assert "failures/share-page0.png" in text
    # the summary line is on the page, as text one click selects
    assert summary_line(m).replace("'", "&#x27;") in text
    assert "user-select:all" in text
    # the narrow layout exists (cards instead of a table)
    assert "@media (max-width:760px)" in text


def test_rows_missing_fields_still_render() -> None:
    rows = [
        {"site": "chatgpt", "phase": "phase_b", "scenario": "chat", "outcome": "error"},
        {"site": "-", "phase": "other", "test": "e2e/test_x.py::test_y", "outcome": "failed"},
        {"outcome": "passed"},
    ]
    text = render_html(report.build_matrix(rows))
    assert "chat" in text and "test_y" in text
