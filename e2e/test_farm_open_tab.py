"""A chat tab that is already open when its site becomes `collect` starts capturing, without a reload.

Registered content scripts reach only pages loaded after the registration; the person who opens a
conversation, then turns its site to `collect` in the side panel, expects it to be remembered. The
tab is opened while the site is `suggest`: no capture script runs and no capture goes out (the
positive control: the same page, same farm, is captured once the rule changes). Then the rule is
set to `collect` and the conversation reaches the wire and the store, in the same document (a
marker set in the page before the change is still there afterwards: nothing reloaded it).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from e2e.test_farm_phase_b import norm, wait_conversation
from testkit.sites import find

pytestmark = [pytest.mark.farm]


async def test_an_open_chat_tab_is_captured_once_its_site_turns_collect(make_farm: Any, health: dict[str, Any]) -> None:
    fixture = find("chatgpt", "layout-a")
    health.update(site=fixture.site, phase="other", variant="open-tab-turns-collect")
    expected = norm(fixture.expected.get("turns", []))
    farm = await make_farm()
    await farm.configure(page_memory=True)
    await farm.server.set_site_mode(fixture.host, "suggest")
    await farm.refresh_policy()
    mark = farm.tap.mark()
    page = await farm.open(fixture.url, fixture)
    await page.evaluate("() => { window.__wfSameDocument = 'before the rule changed'; }")
    await asyncio.sleep(3)
    assert not await farm.browser.capture_injected(page), "a capture script runs on a `suggest` site"
    before = [r for r in farm.tap.records(mark) if r.path == "/api/captures"]
    assert before == [], "a capture went out while the site was `suggest`"

    await farm.server.set_site_mode(fixture.host, "collect")
    await farm.refresh_policy()
    got = await wait_conversation(farm, fixture.url, expected)
    captures = [r for r in farm.tap.records(mark) if r.method == "POST" and r.path == "/api/captures"]
    assert captures, "no POST /api/captures after the open tab's site became `collect`"
    assert got == expected, f"stored {len(got)} turns, want {len(expected)}"
    assert await page.evaluate("() => window.__wfSameDocument") == "before the rule changed", "the tab was reloaded"
    health.update(capture_requests=len(captures), turns_captured=len(got), match=True)
