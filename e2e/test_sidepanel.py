"""The side panel with the real extension and a real companion server.

The panel page is opened as a tab (chrome-extension://<id>/sidepanel/index.html?tabId=N, N being
the web tab it is about). Every test gets its own farm from the harness (testkit/farm): its own
server (own data dir and port, checked to be ours), its own Chromium profile with the extension,
forced through the wire tap. Screenshots of each view go to e2e/report/screenshots/.

Covers: the disclosure gate, the three connection states, a rule edit read back from the
server's GET /api/site-mode, forget's two clicks and its 8-second window (then Undo), its saved
pages named with the choice to forget them too, and the
outbox delivering after a server restart (same port and data dir) with no duplicate.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio
from playwright.async_api import Page

from testkit.farm.browser import Browser
from testkit.farm.report import REPORT_DIR
from testkit.farm.server import CompanionServer
from testkit.server_process import free_port

SHOTS = REPORT_DIR / "screenshots"
VIEWPORT = {"width": 420, "height": 860}
PAGE_HTML = (
    "<!doctype html><html><head><title>{title}</title></head><body><h1>{title}</h1>"
    "<p>A page about provenance, memory and where things come from.</p></body></html>"
)


@pytest_asyncio.fixture(loop_scope="session")
async def farm(make_farm: Any, health: dict[str, Any], request: pytest.FixtureRequest) -> AsyncIterator[Any]:
    health.update(site="_sidepanel", phase="other", variant=request.node.name)
    farm = await make_farm(viewport=VIEWPORT)
    yield farm
    # what the server saw (across restarts) is exactly what the tap forwarded
    led = await farm.check_ledger()
    health.update(ledger=led["ledger_requests"])


@pytest.fixture
def browser(farm: Any) -> Browser:
    return farm.browser


@pytest.fixture
def server(farm: Any) -> CompanionServer:
    return farm.server


async def panel_of(b: Browser, tab_id: int | None = None, view: str | None = None) -> Page:
    return await b.open_panel(tab_id, view=view, settled=True)


async def web_tab(b: Browser, url: str, title: str) -> tuple[Page, int]:
    return await b.web_tab(url, PAGE_HTML.format(title=title))


async def shot(page: Page, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    await page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


async def pair_and_accept(b: Browser, server: CompanionServer) -> None:
    await b.set_server(server.url)
    panel = await panel_of(b)
    await panel.click("#accept")
    await panel.click("nav [data-view=settings]")
    await panel.fill("#token", server.token)
    await panel.click("#pair")
    await panel.wait_for_selector("#conn[data-state=connected]")
    await panel.close()


# ---------------------------------------------------------------- tests


async def test_disclosure_gates_page_memory(browser: Browser, server: CompanionServer) -> None:
    await browser.set_server(server.url)
    assert await browser.storage("pageMemory") in (None, False)
    panel = await panel_of(browser)
    assert await panel.is_visible("#disclosure")
    assert not await panel.is_visible("nav.tabs"), "nothing else until the person decides"
    await shot(panel, "01-disclosure")
    await panel.click("#not-now")
    assert await panel.is_visible("text=Page memory is off")
    assert await browser.storage("pageMemory") in (None, False)
    await panel.click("nav [data-view=settings]")
    assert not await panel.is_checked("#page-memory")
    await panel.click("#page-memory")  # asks for the disclosure again instead of switching on
    assert await panel.is_visible("#disclosure")
    assert await browser.storage("pageMemory") in (None, False)
    await panel.click("#accept")
    await panel.wait_for_selector("#disclosure", state="hidden")
    assert await browser.storage("pageMemory") is True
    assert await browser.storage("disclosureAccepted") is True


async def test_three_connection_states(browser: Browser, server: CompanionServer) -> None:
    closed = free_port()
    await browser.set_server(f"http://127.0.0.1:{closed}")
    panel = await panel_of(browser, view="settings")
    await panel.click("#not-now")
    await panel.wait_for_selector("#conn[data-state=down]")
    assert await panel.text_content("#conn") == "Server not running"
    await shot(panel, "02-connection-down")

    await browser.set_server(server.url)
    await panel.reload()
    await panel.wait_for_selector("#conn[data-state=unpaired]")
    assert await panel.text_content("#conn") == "Not paired"
    await panel.click("#not-now")
    await shot(panel, "03-connection-unpaired")

    await panel.fill("#token", "not-the-token")
    await panel.click("#pair")
    await panel.wait_for_selector("#pair-status[data-tone=bad]")
    assert "did not accept" in (await panel.text_content("#pair-status") or "")
    assert await browser.storage("token") in (None, "")

    await panel.fill("#token", server.token)
    await panel.click("#pair")
    await panel.wait_for_selector("#conn[data-state=connected]")
    assert await panel.text_content("#conn") == "Connected"
    await shot(panel, "04-connection-connected")


async def test_rule_edit_round_trip(browser: Browser, server: CompanionServer) -> None:
    await pair_and_accept(browser, server)
    panel = await panel_of(browser, view="settings")
    await panel.fill("#rule-host", "Example.org")
    await panel.select_option("#rule-mode", "suggest")
    await panel.click("#rule-form button[type=submit]")
    await panel.wait_for_selector("li.rule[data-host='example.org']")
    assert "this site and its subdomains" in (await panel.text_content("li.rule[data-host='example.org']") or "")
    status, body = await server.call("GET", "/api/site-mode", params={"host": "news.example.org"})
    assert status == 200 and body["mode"] == "suggest" and body["reason"] == "rule:example.org"

    await panel.select_option("li.rule[data-host='example.org'] select", "off")
    # the status of THIS save (the add's "…: suggest." is already there and ok): the answer comes
    # after the worker has stored the new snapshot
    await panel.wait_for_selector("#rule-status[data-tone=ok]:has-text('example.org and its subdomains: off.')")
    await panel.wait_for_function(
        "() => document.querySelector(\"li.rule[data-host='example.org'] select\").value === 'off'"
    )
    assert (await server.call("GET", "/api/site-mode", params={"host": "example.org"}))[1]["mode"] == "off"
    policy = await browser.storage("policy")
    assert {"host": "example.org", "mode": "off"} in policy["rules"], "the cached snapshot follows the edit"
    await panel.click("details.sensitive >> nth=0")
    await shot(panel, "05-settings-rules")

    await panel.click("li.rule[data-host='example.org'] button")
    await panel.wait_for_selector("li.rule[data-host='example.org']", state="detached")
    assert (await server.call("GET", "/api/site-mode", params={"host": "example.org"}))[1] == {
        "host": "example.org",
        "mode": "collect",
        "reason": "default",
    }


async def test_forget_needs_two_clicks_within_eight_seconds(browser: Browser, server: CompanionServer) -> None:
    await pair_and_accept(browser, server)
    url = "https://forget.example/article"
    for text in ("first thing I noted", "second thing I noted"):
        status, _ = await server.call("POST", "/api/notes", json_body={"url": url, "title": "Forget me", "text": text})
        assert status == 201
    _, tab_id = await web_tab(browser, url, "Forget me")
    panel = await panel_of(browser, tab_id=tab_id)
    await panel.wait_for_selector("[data-tier=exact] li.item >> nth=1")
    await shot(panel, "06-memory")
    # the toolbar icon of the web tab is redrawn green (its title is set right after the drawing)
    await browser.sw.evaluate("(id) => chrome.tabs.update(id, {active: true})", tab_id)
    await browser.sw.evaluate(
        """async (id) => { for (let i = 0; i < 50; i++) {
            if ((await chrome.action.getTitle({tabId: id})).includes('from this page')) return;
            await new Promise((r) => setTimeout(r, 100)); } throw new Error('icon not redrawn'); }""",
        tab_id,
    )
    assert "2 items from this page" in await browser.sw.evaluate("(id) => chrome.action.getTitle({tabId: id})", tab_id)

    async def exact_count() -> int:
        return len((await server.call("GET", "/api/page-match", params={"url": url}))[1]["tiers"]["exact"])

    # first click: a dry run, nothing forgotten
    await panel.click("#forget")
    await panel.wait_for_selector("#forget.armed")
    assert "2 items" in (await panel.text_content("#forget-status") or "")
    await shot(panel, "07-forget-armed")
    assert await exact_count() == 2
    # the window runs out: the button disarms and nothing was forgotten
    await asyncio.sleep(8.6)
    assert not await panel.is_visible("#forget.armed")
    assert "ran out" in (await panel.text_content("#forget-status") or "")
    assert await exact_count() == 2
    # two clicks inside the window forget
    await panel.click("#forget")
    await panel.wait_for_selector("#forget.armed")
    await panel.click("#forget")
    await panel.wait_for_selector("#undo:not([hidden])")
    assert "Forgot 2 items" in (await panel.text_content("#forget-status") or "")
    assert await exact_count() == 0
    await shot(panel, "08-forgotten")
    await panel.click("#undo")
    await panel.wait_for_selector("#undo", state="hidden")
    assert await exact_count() == 2


async def test_forget_names_the_saved_pages_and_forgets_them_only_when_ticked(
    browser: Browser, server: CompanionServer
) -> None:
    await pair_and_accept(browser, server)
    url = "https://pages.example/article"
    page_text = "The rowan berry preserve keeps a year in a cool cellar. " * 12
    assert (await server.call("POST", "/api/notes", json_body={"url": url, "title": "Rowan", "text": "a rowan note"}))[
        0
    ] == 201
    for path in ("/rowan", "/elder"):
        status, _ = await server.call(
            "POST",
            "/api/library/add_text",
            json_body={"url": f"https://pages.example{path}", "title": f"Saved {path[1:]}", "text": page_text},
        )
        assert status == 201

    async def saved() -> set[str]:
        _, body = await server.call("GET", "/api/library")
        return {d["source_url"] for d in body["documents"] if d["source_host"] == "pages.example"}

    _, tab_id = await web_tab(browser, url, "Rowan")
    panel = await panel_of(browser, tab_id=tab_id)
    await panel.wait_for_selector("[data-tier=exact] li.item")
    # the dry run names both saved pages and offers the choice, unticked
    await panel.click("#forget")
    await panel.wait_for_selector("#forget-pages:not([hidden])")
    listed = await panel.inner_text("#forget-pages")
    assert "2 saved library pages" in listed and "https://pages.example/rowan" in listed and "Saved elder" in listed
    assert not await panel.is_checked("#forget-documents")
    await shot(panel, "07b-forget-saved-pages")
    await panel.check("#forget-documents")
    await panel.click("#forget")
    await panel.wait_for_selector("#undo:not([hidden])")
    said = await panel.text_content("#forget-status") or ""
    assert "Forgot 1 item" in said and "2 saved pages forgotten too" in said, said
    assert await saved() == set()
    _, found = await server.call("GET", "/api/search", params={"q": "rowan berry preserve"})
    assert [r for r in found["results"] if r["kind"] == "document"] == []
    await panel.click("#undo")
    await panel.wait_for_selector("#undo", state="hidden")
    assert "and 2 saved pages" in (await panel.text_content("#forget-status") or "")
    assert await saved() == {"https://pages.example/rowan", "https://pages.example/elder"}
    # unticked: the pages stay
    await panel.click("#forget")
    await panel.wait_for_selector("#forget-pages:not([hidden])")
    await panel.click("#forget")
    await panel.wait_for_selector("#undo:not([hidden])")
    assert "2 saved pages kept in the library" in (await panel.text_content("#forget-status") or "")
    assert await saved() == {"https://pages.example/rowan", "https://pages.example/elder"}


async def test_outbox_delivers_once_after_server_restart(browser: Browser, server: CompanionServer) -> None:
    await pair_and_accept(browser, server)
    url = "https://outbox.example/page"
    _, tab_id = await web_tab(browser, url, "Outbox page")
    panel = await panel_of(browser, tab_id=tab_id)
    await panel.wait_for_selector("#note-box:not([hidden])")
    await server.stop()

    await panel.fill("#note", "written while the server was down")
    await panel.click("#save-note")
    await panel.wait_for_selector("#note-status[data-tone=warn]")
    assert "outbox" in (await panel.text_content("#note-status") or "")
    outbox = await browser.storage("outbox")
    assert len(outbox) == 1 and outbox[0]["key"]
    await panel.click("nav [data-view=activity]")
    await panel.wait_for_selector("#outbox li.item.pending")
    await shot(panel, "09-activity-outbox-pending")

    await server.restart()  # the same port and data dir
    # delivery attempts: panel open, tab activation, and the explicit button — all at once
    await panel.click("#outbox button")
    again = await panel_of(browser, tab_id=tab_id)
    await browser.sw.evaluate("(id) => chrome.tabs.update(id, {active: true})", tab_id)
    await again.wait_for_function("() => true")
    deadline = time.monotonic() + 10
    while await browser.storage("outbox") and time.monotonic() < deadline:  # noqa: ASYNC110 - polls the extension
        await asyncio.sleep(0.2)
    assert await browser.storage("outbox") == []
    await asyncio.sleep(1)
    match = (await server.call("GET", "/api/page-match", params={"url": url}))[1]
    notes = [f for f in match["tiers"]["exact"] if f["text"] == "written while the server was down"]
    assert len(notes) == 1, "delivered exactly once"
    await panel.click("nav [data-view=memory]")
    await panel.click("nav [data-view=activity]")
    await panel.wait_for_selector("text=Nothing waiting")
    await shot(panel, "10-activity-delivered")


HOSTILE_MD = (
    "Look: <img src=x onerror=\"window.__wfPwned='img'\"> and "
    "<script>window.__wfPwned='script'</script>\n\n"
    "[click me](javascript:window.__wfPwned='link') and ![pixel](http://tracker.invalid/p.png) "
    "and [a real link](https://docs.example.org/x)\n\n"
    "<a href=\"javascript:window.__wfPwned='raw'\">raw anchor</a>\n\n"
    "```python\ndef f():\n    return '<b>not bold</b>'\n```"
)


async def test_captured_markdown_renders_and_nothing_from_the_page_runs(
    farm: Any, browser: Browser, server: CompanionServer
) -> None:
    """A stored turn carrying <img onerror>, <script> and javascript: links renders as Markdown in
    the panel: the HTML shows as text, no handler or script runs (a global flag stays unset), no
    javascript: href exists, the image is never fetched (nothing in the tap), the code block is a
    <pre> with a Copy button and the code's exact text."""
    await pair_and_accept(browser, server)
    url = "https://www.example.org/chat/xss"
    status, _ = await server.call(
        "POST",
        "/api/captures",
        json_body={
            "url": url,
            "title": "Hostile turn",
            "site": "test",
            "turns": [
                {"role": "user", "text": "show me"},
                {"role": "assistant", "text": "Look: and click me", "markdown": HOSTILE_MD},
            ],
        },
    )
    assert status == 200
    _page, tab_id = await web_tab(browser, url, "Hostile turn")
    mark = farm.tap.mark()
    panel = await panel_of(browser, tab_id)
    md = panel.locator("[data-tier=exact] .md").filter(has_text="raw anchor")
    await md.wait_for()
    await panel.wait_for_timeout(500)
    got = await panel.evaluate("""() => {
        const box = [...document.querySelectorAll('[data-tier=exact] .md')]
          .find(e => e.textContent.includes('raw anchor'));
        return {
          pwned: window.__wfPwned ?? null,
          imgs: box.querySelectorAll('img, script, iframe, [onerror]').length,
          hrefs: [...box.querySelectorAll('a')].map(a => a.getAttribute('href')),
          text: box.textContent,
          pre: [...box.querySelectorAll('.code-block pre code')].map(c => c.textContent),
          copy: box.querySelectorAll('.code-block button.copy').length,
        };
    }""")
    assert got["pwned"] is None and got["imgs"] == 0
    assert got["hrefs"] == ["http://tracker.invalid/p.png", "https://docs.example.org/x"]
    assert "<img src=x onerror=\"window.__wfPwned='img'\">" in got["text"], "page HTML is shown as text"
    assert "<script>" in got["text"] and "click me" in got["text"]
    assert got["pre"] == ["def f():\n    return '<b>not bold</b>'\n"] and got["copy"] == 1
    # positive control: the flag is observable in this page (a script of ours can set it)
    assert await panel.evaluate("() => { window.__wfProbe = 1; return window.__wfProbe; }") == 1
    await panel.wait_for_timeout(300)
    seen = farm.tap.records(since=mark)
    assert any("/api/page-match" in r.path for r in seen), "the tap sees the panel's requests"
    assert not [r.summary() for r in seen if "tracker.invalid" in r.haystack() or "p.png" in r.path]
    await shot(panel, "13-markdown-turn")
