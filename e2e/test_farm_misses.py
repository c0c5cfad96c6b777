"""No silent partial capture, in the real extension: one positive control per miss kind.

Each page under fixtures/misses/ is a conversation built to fail one way (no turns, one role only,
an empty turn). In Chromium with the extension loaded and the site on `collect`, the miss is
recorded with its kind, the site, the layouts tried and the URL's path pattern (never page text)
and shows in the side panel's Activity; the turns that were found are still stored. A complete
fixture of the same site records no miss (the control that the observer is not just silent).
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from testkit.farm.selection import site_filter
from testkit.sites import Fixture, _load, catalog, collapse, read_meta

pytestmark = [pytest.mark.farm, pytest.mark.slow]

MISSES = Path(__file__).resolve().parents[1] / "fixtures" / "misses"


def controls() -> list[Any]:
    want = site_filter()
    out = []
    for html_path in sorted(MISSES.glob("*.html")):
        fx = _load(read_meta(html_path)["site"], html_path)
        if want and fx.site != want:
            continue
        # the control: a complete static page of the same site (a share page: no streaming, no
        # scroll-and-collect, so it settles at once)
        fixtures = catalog(fx.site)
        complete = next(
            (c for c in fixtures if "share" in c.features and "page-data" not in c.features),
            next((c for c in fixtures if "streaming" not in c.features), None),
        )
        out.append(pytest.param(fx, complete, id=html_path.stem))
    return out or [pytest.param(None, None, id="no-miss-controls-selected")]


async def misses_after(farm: Any, within: float) -> list[dict[str, Any]]:
    deadline = time.monotonic() + within
    got: list[dict[str, Any]] = []
    while time.monotonic() < deadline:
        got = (await farm.browser.storage_get(["selectorMisses"])).get("selectorMisses") or []
        if got:
            return got
        await asyncio.sleep(0.3)
    return got


@pytest.mark.parametrize(("fx", "complete"), controls())
async def test_miss_control(fx: Fixture | None, complete: Fixture | None, make_farm: Any, health: Any) -> None:
    if fx is None:
        pytest.skip("no miss control for this SITE")
    health.update(site=fx.site, phase="misses", variant=fx.scenario, expected_miss=fx.expected["miss"])
    farm = await make_farm()
    await farm.configure(page_memory=True)
    await farm.server.set_site_mode(fx.host, "collect")
    if complete is not None:
        await farm.server.set_site_mode(complete.host, "collect")
    await farm.refresh_policy()
    # the capture script is registered asynchronously after a policy change: a page opened before
    # that would never be captured (seen once as an empty control)
    assert await farm.browser.wait_registered(fx.site, within=10), f"no capture script for {fx.site}"

    # control first: a complete page of the same site records none
    if complete is not None:
        await farm.open(complete.url, complete)
        want = [(t["role"], collapse(t["text"])) for t in complete.expected["turns"]]
        deadline = time.monotonic() + 30
        stored: list[tuple[str, str]] = []
        while time.monotonic() < deadline and stored != want:
            stored = [(t["role"], collapse(t["text"])) for t in await farm.server.conversation(complete.url)]
            await asyncio.sleep(0.4)
        assert stored == want, f"control {complete.id} not captured completely"
        await asyncio.sleep(2.0)  # past the quiet period in which a miss would be decided
        none = (await farm.browser.storage_get(["selectorMisses"])).get("selectorMisses") or []
        health["control_misses"] = len(none)
        assert none == [], f"the complete page {complete.id} recorded misses: {none}"

    page = await farm.open(fx.url, fx)
    misses = await misses_after(farm, 20)
    kinds = [m.get("kind") for m in misses]
    health["misses"] = kinds
    assert kinds == [fx.expected["miss"]], misses
    miss = misses[0]
    assert miss["site"] == fx.site and miss["path"] == fx.expected["miss_path"], miss
    assert miss["layouts"], miss
    payload = json.dumps({k: v for k, v in miss.items() if k not in ("url", "host")}, ensure_ascii=False)
    for t in fx.expected["turns"]:
        assert t["text"][:20] not in payload, "a miss must never carry page text"
    assert urlsplit(fx.url).path.split("/")[-1] not in payload

    # the turns that were found are still stored
    want = [(t["role"], collapse(t["text"])) for t in fx.expected["turns"]]
    stored = []
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        stored = [(t["role"], collapse(t["text"])) for t in await farm.server.conversation(fx.url)]
        if stored == want:
            break
        await asyncio.sleep(0.3)
    health["captured"] = len(stored)
    assert stored == want

    # and the person sees it in the side panel's Activity
    tab_id = await farm.browser.tab_id(page.url)
    # opened at its Activity view (?view=activity), as the panel shows a view it is asked for: a
    # click on the tab while the panel was still starting was seen lost under load
    panel = await farm.browser.open_panel(tab_id, view="activity", settled=True)
    await panel.wait_for_selector("#view-activity:not([hidden])")
    item = panel.locator("#misses li").first
    await item.wait_for(timeout=20_000)
    text = await panel.locator("#misses").inner_text()
    assert fx.expected["miss"] in text and fx.host in text, text
