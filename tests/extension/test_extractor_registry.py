"""The registry against the pages it names: every layout alternative's, page-data reader's and
panel's evidence count on its fixture or saved real page, newest first, and every selector parses.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from testkit.extractor_kit import (
    REAL_DOM,
    REGISTRY,
    REPO,
    inject,
    load_real_dom,
    new_page,
)
from testkit.extractor_kit import chromium as chromium  # noqa: F401  (the fixture)
from testkit.sites import catalog

pytestmark = pytest.mark.asyncio(loop_scope="module")

# ----------------------------------------------------------------------------- evidence


def evidence_cases() -> list[Any]:
    """Every layout alternative's and page-data reader's evidence: fixtures, and saved real pages
    under ../shared/reference/ (skipped when absent)."""
    by_path = {str(fx.html_path.relative_to(REPO)): fx for fx in catalog()}
    cases = []
    for site in REGISTRY["sites"]:
        entries = [("layout", lay["id"], lay["evidence"]) for lay in site["layouts"]]
        entries += [("page_data", d["id"], d["evidence"]) for d in site.get("page_data", [])]
        entries += [("panel", p["id"], p["evidence"]) for p in site.get("panels", [])]
        for kind, alt_id, evidence in entries:
            for ev in evidence:
                where = ev.get("fixture") or ev["page"]
                marks = []
                if "fixture" in ev:
                    target: Any = by_path.get(ev["fixture"])
                    if target is None:
                        marks = [pytest.mark.skip(reason=f"{ev['fixture']} not written yet")]
                else:
                    target = REAL_DOM.parent / ev["page"]
                    if not target.is_file():
                        marks = [pytest.mark.skip(reason=f"{target} not present")]
                cases.append(
                    pytest.param(
                        site["id"],
                        kind,
                        alt_id,
                        target,
                        ev["count"],
                        id=f"{site['id']}/{alt_id}@{where.split('/')[-1]}",
                        marks=marks,
                    )
                )
    return cases


@pytest.mark.parametrize(("site_id", "kind", "alt_id", "target", "count"), evidence_cases())
async def test_registry_evidence(chromium: Any, site_id: str, kind: str, alt_id: str, target: Any, count: int) -> None:
    """Each alternative's turn selectors (or page-data reader) find the recorded number of turns
    on its fixture or saved real page."""
    if isinstance(target, Path):
        expected, html, name = load_real_dom(target.with_name(target.stem + ".expected.json"))
        page = await new_page(chromium, html=html, url=expected["url"])
    else:
        page = await new_page(chromium, target)
        name = target.id
    try:
        await inject(page, skip=("content/capture.js",))
        got = await page.evaluate(
            """([siteId, kind, altId]) => {
              const ns = window.Wherefrom;
              const site = ns.registry.sites.find(s => s.id === siteId);
              if (kind === 'page_data') {
                return ns.pageData.readWith(document, site.page_data.find(d => d.id === altId)).length;
              }
              if (kind === 'panel') {
                const only = Object.assign({}, site, {panels: site.panels.filter(p => p.id === altId)});
                return ns.extractor.readPanels(document, only, []).length;
              }
              return ns.extractor.countMatches(document, site, site.layouts.find(l => l.id === altId));
            }""",
            [site_id, kind, alt_id],
        )
        assert got == count, f"{site_id}/{alt_id} finds {got} on {name}, registry says {count}"
    finally:
        await page.context.close()


async def test_evidence_is_newest_first() -> None:
    """Evidence entries carrying a `checked` date are listed newest first."""
    for site in REGISTRY["sites"]:
        for alt in site["layouts"] + site.get("page_data", []) + site.get("panels", []):
            dates = [ev["checked"] for ev in alt["evidence"] if "checked" in ev]
            assert dates == sorted(dates, reverse=True), f"{site['id']}/{alt['id']}: {dates}"


# registry keys whose string values are not CSS selectors
NOT_SELECTORS = [
    "id",
    "name",
    "hosts",
    "matches",
    "conversation",
    "reason",
    "fixture",
    "lazy",
    "editor",
    "attr",
    "value",
    "values",
    "default",
    "",
    "paths",
    "marker",
    "format",
    "messages",
    "role",
    "roles",
    "join",
    "checked",
    "page",
]


async def test_every_registry_selector_parses(chromium: Any) -> None:
    """A typo in a selector would throw in querySelectorAll on the real site: parse them all."""
    page = await new_page(chromium, html="<!DOCTYPE html><p>x</p>", url="https://example.org/")
    try:
        result = await page.evaluate(
            """([reg, notSelectors]) => {
              const bad = [];
              let checked = 0;
              const walk = (v, path, key) => {
                if (key === 'page_data') {  // data paths, not selectors: only `script` is one
                  v.forEach((d, i) => d.script && walk(d.script, path + '[' + i + '].script', 'script'));
                  return;
                }
                if (typeof v === 'string') {
                  if (notSelectors.includes(key)) return;
                  checked++;
                  try { document.querySelectorAll(v); } catch (e) { bad.push(path + ': ' + v); }
                } else if (Array.isArray(v)) v.forEach((x, i) => walk(x, path + '[' + i + ']', key));
                else if (v && typeof v === 'object') Object.entries(v).forEach(([k, x]) => walk(x, path + '.' + k, k));
              };
              reg.sites.forEach(s => walk(s, s.id, ''));
              walk(reg.defaults, 'defaults', '');
              return {bad, checked};
            }""",
            [REGISTRY, NOT_SELECTORS],
        )
        assert result["checked"] > 150
        bad = result["bad"]
        assert bad == []
    finally:
        await page.context.close()
