""" "A note turns the icon green", proven on a page that captured nothing.

Phase B's notes are taken on chat pages that have already captured turns, which make the page's
probe green on their own — there that check cannot fail. Here the page is a plain article
(https://en.wikipedia.org/wiki/Juggling, route-fulfilled with a small inline article; the host is
`collect` by default and no capture script exists for it), and the site tier is exercised too:

1. a note is saved through the side panel's note box on *another* page of the same host (Diabolo);
2. the article is opened: its probe goes out (seen by the tap) and the icon is **not** green — the
   positive control, on a host that already has memory: a site-tier item is not "from this page";
   the panel shows the Diabolo note under "Elsewhere on en.wikipedia.org", not "From this page";
3. a note is saved through the article's side panel note box: it reaches the wire, shows under
   "From this page", a new probe for the article goes out and the icon turns green.
Screenshots of both panel states go to e2e/report/screenshots/.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from typing import Any
from urllib.parse import urlsplit

import pytest

from testkit.farm.browser import dump
from testkit.farm.phase_a import route_html
from testkit.farm.report import REPORT_DIR

pytestmark = [pytest.mark.farm]

HOST = "en.wikipedia.org"
ARTICLE = f"https://{HOST}/wiki/Juggling"
OTHER = f"https://{HOST}/wiki/Diabolo"
SHOTS = REPORT_DIR / "screenshots"

ARTICLE_HTML = """<!doctype html><html lang=en><head><meta charset=utf-8><title>Juggling - Wikipedia</title></head>
<body><main id=content><h1 id=firstHeading>Juggling</h1>
<p><b>Juggling</b> is a physical skill, performed by a juggler, involving the movement of objects
for entertainment, art or sport. The most recognizable form of juggling is toss juggling.</p>
<h2>History</h2><p>Juggling has been depicted in ancient Egyptian tombs, and jugglers performed in
medieval courts and fairs.</p>
<h2>Patterns</h2><p>The cascade, the fountain and the shower are the basic patterns.</p></main></body></html>"""

OTHER_HTML = """<!doctype html><html lang=en><head><meta charset=utf-8><title>Diabolo - Wikipedia</title></head>
<body><main id=content><h1 id=firstHeading>Diabolo</h1>
<p>The <b>diabolo</b> is a juggling or circus prop consisting of an axle and two cups, spun on a
string tied to two hand sticks.</p></main></body></html>"""


def probes_for(records: list[Any], url: str) -> list[Any]:
    want = (urlsplit(url).hostname, urlsplit(url).path)
    return [
        r
        for r in records
        if r.method == "GET"
        and r.path == "/api/page-probe"
        and (
            urlsplit(r.query.get("url", "")).hostname,
            urlsplit(r.query.get("url", "")).path,
        )
        == want
    ]


async def title_settles(farm: Any, tab_id: int, within: float = 5.0) -> str:
    """The action title once the worker has drawn the tab after its probe: about this host (not
    the manifest's default, nor a state drawn while the tab was still loading)."""
    deadline = time.monotonic() + within
    title = ""
    while time.monotonic() < deadline:
        title = await farm.browser.action_title(tab_id)
        if HOST in title or "from this page" in title:
            return title
        await asyncio.sleep(0.1)
    return title


async def wait_green(farm: Any, tab_id: int, within: float = 5.0) -> str:
    deadline = time.monotonic() + within
    title = ""
    while time.monotonic() < deadline:
        title = await farm.browser.action_title(tab_id)
        if "from this page" in title:
            return title
        await asyncio.sleep(0.1)
    return title


async def save_note(panel: Any, text: str) -> None:
    await panel.locator("#note-box:not([hidden])").wait_for(timeout=5000)
    await panel.locator("#note").fill(text, timeout=5000)
    await panel.locator("#save-note").click(timeout=5000)


async def test_note_turns_a_page_without_capture_green(make_farm, health):
    health.update(site="_note_green", phase="other", variant="note-green")
    farm = await make_farm()
    await farm.configure(page_memory=True)
    mode = await farm.server.get("/api/site-mode", host=HOST)
    assert mode.get("mode") == "collect", f"{HOST} should be collect by default: {mode}"
    await farm.refresh_policy()
    await route_html(farm, ARTICLE, ARTICLE_HTML)
    await route_html(farm, OTHER, OTHER_HTML)
    start = farm.tap.mark()

    # 1. a note on another page of the same host
    other = await farm.open(OTHER)
    other_tab = await farm.browser.tab_id(other.url)
    assert other_tab is not None
    site_note = f"Diabolo tricks to try {secrets.token_hex(3)}"
    other_panel = await farm.browser.open_panel(other_tab)
    await save_note(other_panel, site_note)
    await other_panel.locator('[data-tier="exact"]', has_text=site_note).first.wait_for(timeout=5000)
    await other_panel.close()

    # 2. the article: probed, and not green (positive control), the note in the site tier
    mark = farm.tap.mark()
    page = await farm.open(ARTICLE)
    await page.bring_to_front()
    tab_id = await farm.browser.tab_id(page.url)
    assert tab_id is not None
    first_probe = await farm.tap.wait_for(lambda r: bool(probes_for([r], ARTICLE)), within=10, since=mark)
    assert first_probe is not None, f"no probe for the article on the wire:\n{dump(farm.tap.records(mark))}"
    before = await title_settles(farm, tab_id)
    health["title_before"] = before
    assert before == f"Wherefrom — collect on {HOST}", (
        f"positive control: the article's icon should be drawn, not green: {before!r}"
    )
    server_probe = await farm.server.get("/api/page-probe", url=ARTICLE)
    assert server_probe.get("green") is False and not server_probe.get("exact"), server_probe

    panel = await farm.browser.open_panel(tab_id)
    site_tier = panel.locator('[data-tier="site"]')
    await site_tier.filter(has_text=site_note).first.wait_for(timeout=5000)
    assert await site_tier.first.locator("h2 span").first.text_content() == f"Elsewhere on {HOST}"
    assert await panel.locator('[data-tier="exact"]').count() == 0, (
        "a note of another page shows under 'From this page'"
    )
    SHOTS.mkdir(parents=True, exist_ok=True)
    await panel.screenshot(path=str(SHOTS / "11-note-site-tier-not-green.png"), full_page=True)
    assert "from this page" not in await farm.browser.action_title(tab_id)

    # 3. a note on the article itself, through the panel's own note box
    note = f"Cascade first, then the fountain {secrets.token_hex(3)}"
    mark = farm.tap.mark()
    await save_note(panel, note)
    exact = panel.locator('[data-tier="exact"]', has_text=note)
    try:
        await exact.first.wait_for(timeout=5000)
    except Exception:  # noqa: BLE001 - the panel re-renders after a save; reload once
        await panel.reload()
        await exact.first.wait_for(timeout=5000)
    heading = panel.locator('[data-tier="exact"] h2 span').first
    assert await heading.text_content() == "From this page"
    green = await wait_green(farm, tab_id)
    health["title_after"] = green
    await panel.screenshot(path=str(SHOTS / "12-note-from-this-page-green.png"), full_page=True)
    notes_sent = [
        r
        for r in farm.tap.records(mark)
        if r.method == "POST" and r.path == "/api/notes" and (r.json() or {}).get("text") == note
    ]
    after_probe = probes_for(farm.tap.records(mark), ARTICLE)
    records = farm.tap.records(start)
    captures = [r for r in records if r.method == "POST" and r.path == "/api/captures"]
    injected = await farm.browser.capture_injected(page)
    health.update(
        notes_sent=len(notes_sent),
        probe_requests=len(probes_for(records, ARTICLE)),
        capture_requests=len(captures),
        injected=injected,
        note_green="from this page" in green,
    )
    health["ledger"] = (await farm.check_ledger())["ledger_requests"]

    assert not captures and not injected, "this page must capture nothing (not a chat site)"
    assert notes_sent, "no POST /api/notes with the note on the wire"
    assert after_probe, "the note did not make the extension probe the article again"
    assert green == "Wherefrom — 1 item from this page", f"the icon did not turn green: {green!r}"
