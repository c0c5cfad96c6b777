"""The real-page gate and the miss controls, in headless Chromium (testkit/extractor_kit.py).

The saved real DOMs in ../shared/reference/real-dom/ (skipped when absent) are captured exactly,
with no miss; each miss control in fixtures/misses/ records exactly its miss and no page text.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from testkit.extractor_kit import (
    MISS_FIXTURES,
    SITES,
    capture,
    diff,
    inject,
    load_real_dom,
    new_page,
    real_dom_cases,
)
from testkit.extractor_kit import chromium as chromium  # noqa: F401  (the fixture)
from testkit.farm import real_pages
from testkit.sites import Fixture, collapse

pytestmark = pytest.mark.asyncio(loop_scope="module")

# ----------------------------------------------------------------------------- real saved DOMs


@pytest.mark.parametrize("expected_path", real_dom_cases())
async def test_real_dom(chromium: Any, expected_path: Path) -> None:
    """The real-page gate: a page whose host the registry claims is captured exactly (turn count,
    roles, order, collapsed text; a second reading only where the notes allow one, from
    e2e/real_pages_readings.json), with no selector miss and no UI text; it may fail only when
    e2e/real_pages_expected_failures.json lists it (reason and date)."""
    expected, html, name = load_real_dom(expected_path)
    listed = real_pages.expected_failures().get(name)
    if listed:
        pytest.xfail(f"listed in {real_pages.EXPECTED_FAILURES.name}: {listed['reason']} ({listed['date']})")
    page = await new_page(chromium, html=html, url=expected["url"])
    try:
        await inject(page)
        got = await capture(page)
        cmp = real_pages.compare(name, expected["turns"], [(t["role"], t["text"]) for t in got])
        misses = await page.evaluate("() => window.__wfMessages.filter(m => m.type === 'content:selector-miss')")
        assert cmp.exact, (
            f"{name}: {cmp.matched}/{cmp.expected} turns match, {cmp.captured} captured; "
            f"{cmp.first_diff}; misses {[m['payload'].get('kind') for m in misses]}"
        )
        assert misses == [], f"{name}: a complete capture recorded a miss: {misses}"
        for text in expected.get("exclude_examples", []):
            for i, turn in enumerate(got):
                if text not in collapse(expected["turns"][i]["text"]):
                    assert text not in turn["text"], f"{name} turn {i} captured UI text {text!r}"
    finally:
        await page.context.close()


# ----------------------------------------------------------------------------- miss controls


def miss_controls() -> list[Any]:
    from testkit.sites import _load, read_meta

    out = []
    for html_path in sorted(MISS_FIXTURES.glob("*.html")):
        fx = _load(read_meta(html_path)["site"], html_path)
        out.append(pytest.param(fx, id=html_path.stem))
    return out


@pytest.mark.parametrize("fx", miss_controls())
async def test_partial_capture_records_its_miss(chromium: Any, fx: Fixture) -> None:
    """Positive controls, one per miss kind: a conversation page built to fail that way records
    exactly that miss (site, kind, layouts tried, path pattern) and no page text; the turns it
    did find are still sent. (Every complete fixture and real page records none: see above.)"""
    page = await new_page(chromium, fx)
    try:
        await inject(page)
        got = await capture(page)
        want = [{"role": t["role"], "text": collapse(t["text"])} for t in fx.expected["turns"]]
        assert got == want, f"{fx.id}: {diff(want, got)}"
        misses = [
            m["payload"]
            for m in await page.evaluate("() => window.__wfMessages.filter(m => m.type === 'content:selector-miss')")
        ]
        assert [m["kind"] for m in misses] == [fx.expected["miss"]], misses
        miss = misses[0]
        site = SITES[fx.site]
        assert miss["site"] == fx.site
        ids = [lay["id"] for lay in site["layouts"]]
        # the alternatives looked at, in registry order (all of them unless one found the turns)
        k = min(len(miss["layouts"]), len(ids))
        assert k and miss["layouts"][:k] == ids[:k], miss["layouts"]
        assert miss["path"] == fx.expected["miss_path"]
        wire = json.dumps(miss, ensure_ascii=False)
        for t in fx.expected["turns"]:
            assert t["text"][:20] not in wire, "a miss must never carry page text"
        assert urlsplit(fx.url).path.split("/")[-1] not in wire, "a miss names the path pattern, not the URL"
    finally:
        await page.context.close()
