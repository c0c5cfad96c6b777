"""The side panel's Search, Conversation and Library views, with the real server and extension,
plus screenshots and axe-core over every view and state.

Each test gets its own farm (tap, server, Chromium with the extension; testkit/farm). Data is
written straight to the server (harness calls), then read back through the panel as a person
would: typing in the search box, arrows and Enter, the buttons of each view.

Screenshots: every view and state at a narrow (320 px) and a wide (600 px) panel, in the light
and the dark colour scheme, go to e2e/report/screenshots/views/. axe-core (the pinned npm
devDependency, node_modules/axe-core/axe.min.js) is evaluated in the panel page by the test over
CDP (the page's CSP refuses an inline script tag) — never added to the extension — and runs in
each of those states: any serious or critical WCAG 2.1 AA violation fails, and so does content
outside landmarks (axe's `region` rule).
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from playwright.async_api import Page

from e2e.test_sidepanel import PAGE_HTML, pair_and_accept, panel_of, web_tab
from testkit.farm.browser import REPO, Browser
from testkit.farm.report import REPORT_DIR
from testkit.farm.server import CompanionServer, FarmError

SHOTS = REPORT_DIR / "screenshots" / "views"
AXE = REPO / "node_modules" / "axe-core" / "axe.min.js"
WIDTHS = (320, 600)
SCHEMES = ("light", "dark")
WCAG_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
MARK_S, MARK_E = "\ue000", "\ue001"
UNDO_MS = 8000  # background/library.js

CHAT_URL = "https://chatgpt.com/c/panel-walnuts"
NOTE_URL = "https://notes.example/walnuts"
DOC_URL = "https://docs.example/nut-guide"
TURNS = [
    ("user", "How do I store walnuts after the harvest?"),
    ("assistant", "Keep the walnuts in an airtight jar.\n\n- somewhere dry\n- somewhere cool"),
    ("user", "And for how long do stored walnuts keep?"),
    ("assistant", "About a year frozen, a few months in the pantry."),
]


@pytest_asyncio.fixture(loop_scope="session")
async def farm(make_farm: Any, health: dict[str, Any], request: pytest.FixtureRequest) -> AsyncIterator[Any]:
    health.update(site="_sidepanel", phase="other", variant=request.node.name)
    farm = await make_farm(viewport={"width": 600, "height": 860})
    yield farm
    led = await farm.check_ledger()
    health.update(ledger=led["ledger_requests"])


@pytest.fixture
def browser(farm: Any) -> Browser:
    return farm.browser


@pytest.fixture
def server(farm: Any) -> CompanionServer:
    return farm.server


# ---------------------------------------------------------------- helpers


async def seed(server: CompanionServer) -> dict[str, Any]:
    """Notes, a clip, a captured chat and a library document, written as the extension would."""
    ids: dict[str, Any] = {}
    for url, title, text in (
        (NOTE_URL, "Walnut harvest", "Store the walnut harvest somewhere dry; shelled walnuts keep a year frozen."),
        ("https://notes.example/lanterns", "Paper lanterns", "A paper lantern needs a small weight; a walnut works."),
    ):
        status, body = await server.call("POST", "/api/notes", json_body={"url": url, "title": title, "text": text})
        assert status == 201, body
        ids[url] = body["id"]
    status, _ = await server.call(
        "POST",
        "/api/clips",
        json_body={
            "url": "https://blog.example/autumn",
            "title": "Autumn chores",
            "text": "October is for raking leaves and storing the walnuts in the shed.",
        },
    )
    assert status == 201
    status, body = await server.call(
        "POST",
        "/api/captures",
        json_body={
            "url": CHAT_URL,
            "title": "Walnut storage",
            "site": "chatgpt",
            "turns": [{"role": r, "text": t} for r, t in TURNS],
        },
    )
    assert status == 200 and body["added"] == 4, body
    for url, title, text in (
        (
            DOC_URL,
            "A guide to nuts",
            "Walnuts, pecans and hazelnuts. " * 20 + "Store walnuts cold to keep their oils fresh.",
        ),
        ("https://docs.example/quinces", "Quince paste", "Quince paste takes hours of slow cooking. " * 10),
    ):
        status, body = await server.call(
            "POST", "/api/library/add_text", json_body={"url": url, "title": title, "text": text}
        )
        assert status == 201, body
        ids[url] = body["document"]["id"]
    return ids


async def axe_violations(page: Page) -> list[dict[str, Any]]:
    """axe-core over the panel page as it is now: serious/critical WCAG 2.1 A/AA violations, and
    any content outside landmarks (`region`)."""
    if not await page.evaluate("() => typeof window.axe !== 'undefined'"):
        if not AXE.is_file():
            raise FarmError(f"axe-core is missing ({AXE}): run ./scripts/setup --test")
        # the panel's CSP (script-src 'self') refuses an inline <script> (add_script_tag), so the
        # source is evaluated over CDP, which CSP does not govern; nothing is added to the extension
        cdp = await page.context.new_cdp_session(page)
        try:
            res = await cdp.send("Runtime.evaluate", {"expression": AXE.read_text("utf-8")})
        finally:
            await cdp.detach()
        if "exceptionDetails" in res:
            raise FarmError(f"axe-core did not load in the panel: {res['exceptionDetails']}")
    found: list[dict[str, Any]] = await page.evaluate(
        """async (tags) => {
          const pick = (r) => r.violations.map((v) => ({
            id: v.id, impact: v.impact, help: v.help,
            nodes: v.nodes.slice(0, 4).map((n) =>
              n.target.join(' ') + ' :: ' + (n.failureSummary || '').split('\\n').slice(0, 2).join(' ')),
          }));
          const wcag = await axe.run(document, {runOnly: {type: 'tag', values: tags}, resultTypes: ['violations']});
          const region = await axe.run(
            document, {runOnly: {type: 'rule', values: ['region']}, resultTypes: ['violations']});
          return [...pick(wcag).filter((v) => v.impact === 'serious' || v.impact === 'critical'), ...pick(region)];
        }""",
        WCAG_TAGS,
    )
    return found


async def tour(page: Page, name: str, problems: dict[str, Any]) -> None:
    """Screenshots of the panel as it is, at two widths and in both schemes, each checked by axe."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    for width in WIDTHS:
        await page.set_viewport_size({"width": width, "height": 860})
        for scheme in SCHEMES:
            await page.emulate_media(color_scheme=scheme)
            await page.evaluate("() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")
            await page.screenshot(path=str(SHOTS / f"{name}-{width}-{scheme}.png"), full_page=True)
            bad = await axe_violations(page)
            if bad:
                problems[f"{name} {width}px {scheme}"] = bad
    await page.set_viewport_size({"width": 600, "height": 860})
    await page.emulate_media(color_scheme="light")


async def focused_key(page: Page) -> str | None:
    return await page.evaluate(
        "() => document.activeElement && document.activeElement.dataset.key || document.activeElement.id || null"
    )


async def result_keys(page: Page) -> list[str]:
    return await page.eval_on_selector_all("#results button.result", "bs => bs.map((b) => b.dataset.key)")


async def search_in_panel(panel: Page, q: str) -> None:
    await panel.fill("#q", q)
    await panel.press("#q", "Enter")
    await panel.wait_for_function(
        "(q) => (document.getElementById('search-status').textContent || '').includes(q)", arg=q
    )


async def tab_urls(b: Browser) -> list[str]:
    return await b.sw.evaluate("() => chrome.tabs.query({}).then((ts) => ts.map((t) => t.pendingUrl || t.url))")


# ---------------------------------------------------------------- tests


async def test_search_keyboard_path_and_every_view_screenshotted_and_axe_clean(
    browser: Browser, server: CompanionServer
) -> None:
    problems: dict[str, Any] = {}
    await browser.set_server(server.url)
    first = await panel_of(browser)
    await first.wait_for_selector("#disclosure:not([hidden])")
    await tour(first, "00-disclosure", problems)
    await first.click("#not-now")
    await first.wait_for_selector("text=Page memory is off")
    await tour(first, "01-memory-off", problems)
    await first.close()
    await pair_and_accept(browser, server)
    empty_library = await panel_of(browser, view="library")
    await empty_library.wait_for_selector("#library-list li.empty")
    await tour(empty_library, "33-library-empty", problems)
    await empty_library.close()
    ids = await seed(server)

    async def fulfil(route: Any) -> None:
        await route.fulfill(status=200, content_type="text/html", body=PAGE_HTML.format(title="Opened"))

    await browser.context.route("https://notes.example/**", fulfil)
    _, tab_id = await web_tab(browser, "https://start.example/", "Start page")
    panel = await panel_of(browser, tab_id, view="search")
    await panel.wait_for_selector("#view-search:not([hidden])")
    await tour(panel, "10-search-start", problems)
    # the conversation view on a page that has none
    none = await panel_of(browser, tab_id, view="conversation")
    await none.wait_for_selector("#conv-head >> text=No conversation captured here")
    await tour(none, "21-conversation-none", problems)
    await none.close()

    # a sentence finds things (all terms, then any term); the keyboard path from the box
    await panel.click("#q")
    await panel.keyboard.type("how do I store my walnuts")
    await panel.keyboard.press("Enter")
    await panel.wait_for_selector("#results button.result")
    keys = await result_keys(panel)
    assert len(keys) >= 4, keys
    kinds = await panel.eval_on_selector_all("#results > ul > li", "ls => ls.map((l) => l.dataset.kind)")
    assert {"note", "clip", "document", "conversation"} <= set(kinds), kinds
    # chat turns grouped under their conversation, in one card
    groups = await panel.eval_on_selector_all("li[data-kind=conversation]", "ls => ls.length")
    assert groups == 1
    hits = await panel.eval_on_selector_all("li[data-kind=conversation] button.result", "bs => bs.length")
    assert hits >= 2, "the matching turns of one conversation sit together"
    # each result: site, title, age, a snippet with the matched words marked (elements, not HTML)
    note_li = panel.locator("#results li[data-kind=note]").first
    text = await note_li.inner_text()
    assert "notes.example" in text and "just now" in text
    marks = await panel.eval_on_selector_all("#results mark", "ms => ms.map((m) => m.textContent.toLowerCase())")
    assert "walnuts" in marks and "store" in marks, marks
    assert not await panel.evaluate(
        f"() => document.body.textContent.includes('{MARK_S}') || document.body.textContent.includes('{MARK_E}')"
    )
    await tour(panel, "11-search-results", problems)

    # arrows move through the results; Escape/ArrowUp go back to the box; Enter opens
    await panel.focus("#q")
    await panel.keyboard.press("ArrowDown")
    assert await focused_key(panel) == keys[0]
    await panel.keyboard.press("ArrowDown")
    assert await focused_key(panel) == keys[1]
    await panel.keyboard.press("ArrowUp")
    await panel.keyboard.press("ArrowUp")
    assert await focused_key(panel) == "q"
    note_key = f"note:{ids[NOTE_URL]}"
    assert note_key in keys
    await panel.keyboard.press("ArrowDown")
    for _ in range(keys.index(note_key)):
        await panel.keyboard.press("ArrowDown")
    assert await focused_key(panel) == note_key
    before = await tab_urls(browser)
    await panel.keyboard.press("Enter")
    deadline = time.monotonic() + 5
    while NOTE_URL not in await tab_urls(browser) and time.monotonic() < deadline:  # noqa: ASYNC110 - polls the browser
        await asyncio.sleep(0.1)
    assert NOTE_URL in await tab_urls(browser) and NOTE_URL not in before, "Enter opened the source page in a tab"

    # a chat turn opens the conversation view; Back returns to the same results, focus kept
    turn_key = (
        await panel.eval_on_selector_all(
            "li[data-kind=conversation] button.result", "bs => bs.map((b) => b.dataset.key)"
        )
    )[0]
    await panel.focus("#q")
    await panel.keyboard.press("ArrowDown")
    for _ in range(keys.index(turn_key)):
        await panel.keyboard.press("ArrowDown")
    await panel.keyboard.press("Enter")
    await panel.wait_for_selector("#view-conversation:not([hidden]) li.turn >> nth=3")
    roles = await panel.eval_on_selector_all("#conv-turns li.turn", "ls => ls.map((l) => l.dataset.role)")
    assert roles == [r for r, _ in TURNS]
    bodies = await panel.eval_on_selector_all("#conv-turns .turn-body", "bs => bs.map((b) => b.textContent)")
    # the same words in the same order, whether a turn renders as text or from its Markdown
    assert [re.findall(r"\w+", b) for b in bodies] == [re.findall(r"\w+", t) for _, t in TURNS]
    head = await panel.inner_text("#conv-head")
    assert "Walnut storage" in head and CHAT_URL in head and "chatgpt" in head and "captured" in head
    await tour(panel, "20-conversation-from-search", problems)
    await panel.click("#conv-back")
    await panel.wait_for_selector("#view-search:not([hidden]) #results button.result")
    assert await focused_key(panel) == turn_key

    # the empty state says what was searched and suggests fewer words
    await search_in_panel(panel, "zeppelin quasar")
    empty = await panel.inner_text("#results [data-empty=search]")
    assert "zeppelin quasar" in empty and "fewer words" in empty
    await tour(panel, "12-search-empty", problems)

    # Library: list, reader, a pending delete
    await panel.click("nav [data-view=library]")
    await panel.wait_for_selector("#library-list li.doc >> nth=1")
    await tour(panel, "30-library", problems)
    await panel.click(f"li.doc[data-id='{ids[DOC_URL]}'] >> text=Read")
    await panel.wait_for_selector("#doc-reader .reader-text")
    await tour(panel, "31-library-reader", problems)
    await panel.click("#doc-reader > button")
    await panel.wait_for_selector(f"li.doc[data-id='{ids[DOC_URL]}']")
    await panel.click(f"li.doc[data-id='{ids[DOC_URL]}'] >> text=Delete")
    await panel.wait_for_selector(f"[data-deleted='{ids[DOC_URL]}']")
    await tour(panel, "32-library-deleted-undo", problems)
    await panel.click(f"[data-deleted='{ids[DOC_URL]}'] button")
    await panel.wait_for_selector(f"li.doc[data-id='{ids[DOC_URL]}']")

    # Memory, Activity, Settings
    memory = await panel_of(browser, await browser.tab_id(NOTE_URL))
    await memory.wait_for_selector("[data-tier=exact] li.item")
    await tour(memory, "40-memory", problems)
    await memory.click("nav [data-view=activity]")
    await memory.wait_for_selector("#activity li.item")
    await tour(memory, "41-activity", problems)
    await memory.click("nav [data-view=settings]")
    await memory.wait_for_selector("#sensitive details")
    await tour(memory, "42-settings", problems)

    # the checker can fail (its positive control): low-contrast text, and text outside landmarks
    await memory.evaluate("""() => {
        const p = document.createElement('p'); p.id = 'wf-axe-control'; p.textContent = 'faint';
        p.style.cssText = 'color:#bbb;background:#fff'; document.querySelector('main').append(p);
        const q = document.createElement('p'); q.id = 'wf-axe-control-2'; q.textContent = 'stray';
        document.body.append(q); }""")
    seen = {v["id"] for v in await axe_violations(memory)}
    assert {"color-contrast", "region"} <= seen, seen

    assert not problems, "axe-core found problems:\n" + "\n".join(f"{k}: {v}" for k, v in problems.items())


async def test_conversation_of_the_current_chat_page_copy_and_save(
    browser: Browser, server: CompanionServer, tmp_path: Path
) -> None:
    await pair_and_accept(browser, server)
    await seed(server)
    _, tab_id = await web_tab(browser, CHAT_URL, "Walnut storage - ChatGPT")
    panel = await panel_of(browser, tab_id)
    # from the Memory view of a chat page: the whole conversation
    await panel.click("#open-conversation")
    await panel.wait_for_selector("#conv-turns li.turn >> nth=3")
    problems: dict[str, Any] = {}
    await tour(panel, "22-conversation-current-page", problems)
    assert not problems, problems
    assert await panel.is_hidden("#conv-back"), "no way 'back to search' when it was not opened from search"
    assert await panel.eval_on_selector_all("#conv-turns li.turn", "ls => ls.map((l) => l.dataset.role)") == [
        r for r, _ in TURNS
    ]

    await browser.context.grant_permissions(["clipboard-read", "clipboard-write"])
    await panel.click("#conv-copy")
    await panel.wait_for_selector("#conv-status[data-tone=ok]")
    copied = await panel.evaluate("() => navigator.clipboard.readText()")
    async with panel.expect_download() as dl_info:
        await panel.click("#conv-save")
    download = await dl_info.value
    # the server's one renderer names and writes the file: the same bytes as the export's
    status, rendered = await server.call("GET", "/api/conversations/markdown", params={"url": CHAT_URL})
    assert status == 200, rendered
    assert download.suggested_filename == rendered["file_name"]
    assert re.fullmatch(r"walnut-storage-[0-9a-f]{12}\.md", download.suggested_filename), download.suggested_filename
    saved_path = tmp_path / download.suggested_filename
    await download.save_as(saved_path)
    saved = saved_path.read_text("utf-8")
    assert saved == copied == rendered["markdown"], "copy and save give the server's Markdown"
    front, body = saved.split("---\n")[1], saved.split("---\n", 2)[2]
    meta = dict(line.split(": ", 1) for line in front.strip().splitlines())
    assert meta["title"] == '"Walnut storage"' and meta["source"] == f'"{CHAT_URL}"' and meta["site"] == '"chatgpt"'
    assert re.fullmatch(r'"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"', meta["updated"]), meta
    positions = [body.index(t) for _, t in TURNS]
    assert positions == sorted(positions), "turns in order"
    assert body.count("## User · ") == 2 and body.count("## Assistant · ") == 2

    # the last reply regenerated on the site: "2 of 2" in its place, the first one a click away
    regenerated = [{"role": r, "text": t} for r, t in TURNS[:3]] + [{"role": "assistant", "text": "Half a year."}]
    status, answer = await server.call(
        "POST",
        "/api/captures",
        json_body={"url": CHAT_URL, "title": "Walnut storage", "site": "chatgpt", "turns": regenerated},
    )
    assert status == 200 and answer["versions"] == 1, answer
    await panel.click("nav [data-view=memory]")
    await panel.click("#open-conversation")
    last = "#conv-turns li.turn >> nth=3"
    await panel.wait_for_selector(f"{last} >> .version-label")
    assert await panel.locator("#conv-turns li.turn").count() == 4, "a version, not a turn after it"
    assert await panel.inner_text(f"{last} >> .version-label") == "2 of 2"
    assert "Half a year." in await panel.inner_text(f"{last} >> .turn-version")
    await panel.click(f"{last} >> .version-prev")
    assert await panel.inner_text(f"{last} >> .version-label") == "1 of 2 (shown: 2)"
    assert TURNS[3][1] in await panel.inner_text(f"{last} >> .turn-version")
    await tour(panel, "23-conversation-versions", problems)
    assert not problems, problems


async def test_library_delete_waits_for_undo_then_reaches_the_server(browser: Browser, server: CompanionServer) -> None:
    await pair_and_accept(browser, server)
    ids = await seed(server)
    keep, drop = ids[DOC_URL], ids["https://docs.example/quinces"]
    panel = await panel_of(browser, view="library")
    await panel.wait_for_selector(f"li.doc[data-id='{keep}']")
    row = await panel.inner_text(f"li.doc[data-id='{keep}']")
    doc = (await server.call("GET", f"/api/library/{keep}"))[1]["document"]
    assert "A guide to nuts" in row and "docs.example" in row and "saved just now" in row
    assert doc["chars"] < 1000 and f"{doc['chars']} characters" in row, row
    assert await panel.get_attribute(f"li.doc[data-id='{keep}'] a.button", "href") == DOC_URL
    # read: the extracted text as the server stores it
    await panel.click(f"li.doc[data-id='{keep}'] >> text=Read")
    await panel.wait_for_selector("#doc-reader .reader-text")
    assert await panel.text_content("#doc-reader .reader-text") == doc["text"]
    await panel.click("#doc-reader > button")

    # delete then undo: nothing reaches the server, even after the window
    await panel.click(f"li.doc[data-id='{keep}'] >> text=Delete")
    await panel.wait_for_selector(f"[data-deleted='{keep}']")
    await panel.click(f"[data-deleted='{keep}'] button")
    await panel.wait_for_selector(f"li.doc[data-id='{keep}']")
    # delete without undo (the positive control): gone from the server once the window ends
    await panel.click(f"li.doc[data-id='{drop}'] >> text=Delete")
    await panel.wait_for_selector(f"[data-deleted='{drop}']")
    assert (await server.call("GET", f"/api/library/{drop}"))[0] == 200, "held during the undo window"
    deadline = time.monotonic() + UNDO_MS / 1000 + 6
    while (await server.call("GET", f"/api/library/{drop}"))[0] != 404 and time.monotonic() < deadline:  # noqa: ASYNC110
        await asyncio.sleep(0.3)
    assert (await server.call("GET", f"/api/library/{drop}"))[0] == 404, "the delete was sent"
    assert (await server.call("GET", f"/api/library/{keep}"))[0] == 200, "the undone delete never was"
    assert browser.tap.records(), "the tap saw the panel's traffic"
    deletes = [r for r in browser.tap.records() if r.method == "DELETE"]
    assert [r.url.rsplit("/", 1)[-1] for r in deletes] == [str(drop)], "one DELETE, for the one not undone"
    await panel.wait_for_selector(f"[data-deleted='{drop}']", state="detached", timeout=15000)
    assert not await panel.is_visible(f"li.doc[data-id='{drop}']")


async def test_search_hides_a_site_turned_off_and_a_forgotten_one(browser: Browser, server: CompanionServer) -> None:
    await pair_and_accept(browser, server)
    status, _ = await server.call(
        "POST",
        "/api/notes",
        json_body={"url": "https://hidden.example/recipes", "title": "Recipes", "text": "my secret quince recipe"},
    )
    assert status == 201
    panel = await panel_of(browser, view="search")
    # positive control: found while the site is collect
    await search_in_panel(panel, "quince recipe")
    assert await panel.locator("#results li[data-kind=note]").count() == 1
    status, _ = await server.call("PUT", "/api/site-mode", json_body={"host": "hidden.example", "mode": "off"})
    assert status == 200
    await search_in_panel(panel, "secret quince")
    assert await panel.locator("#results li[data-kind=note]").count() == 0
    assert "secret quince" in await panel.inner_text("#results [data-empty=search]")

    # forget: found before, gone after (the soft forget every reader honours)
    status, _ = await server.call(
        "POST",
        "/api/notes",
        json_body={"url": "https://forgot.example/jam", "title": "Jam", "text": "medlar jelly needs bletted fruit"},
    )
    assert status == 201
    await search_in_panel(panel, "medlar jelly")
    assert await panel.locator("#results li[data-kind=note]").count() == 1
    status, dry = await server.call("POST", "/api/forget", json_body={"host": "forgot.example", "dry_run": True})
    assert status == 200 and dry["facts"] == 1, dry
    status, done = await server.call(
        "POST", "/api/forget", json_body={"host": "forgot.example", "confirm": dry["confirm"]}
    )
    assert status == 200, done
    await search_in_panel(panel, "medlar")
    assert await panel.locator("#results li[data-kind=note]").count() == 0


async def test_open_search_command_switches_an_open_panel_to_search(browser: Browser, server: CompanionServer) -> None:
    """The open-search command opens the panel and writes the view it wants (background/main.js);
    a real key press cannot reach a headless browser's command handler, so the second half is
    driven here: the worker writes what the command writes, the open panel shows Search."""
    await pair_and_accept(browser, server)
    panel = await panel_of(browser)
    await panel.wait_for_selector("#view-memory:not([hidden])")
    await browser.sw.evaluate("() => chrome.storage.session.set({panelView: {view: 'search', at: Date.now()}})")
    await panel.wait_for_selector("#view-search:not([hidden])")
    assert await panel.evaluate("() => document.activeElement.id") == "q"
    assert await browser.sw.evaluate("() => chrome.storage.session.get('panelView')") == {}
    manifest = (REPO / "extension" / "manifest.json").read_text("utf-8")
    assert '"open-search"' in manifest
    # the tab list by keyboard: arrows move between views (wrapping), the focus stays on the tabs
    await panel.focus("#tab-search")
    await panel.keyboard.press("ArrowRight")
    await panel.wait_for_selector("#view-library:not([hidden])")
    assert await panel.evaluate("() => document.activeElement.id") == "tab-library"
    await panel.keyboard.press("End")
    await panel.keyboard.press("ArrowRight")
    await panel.wait_for_selector("#view-memory:not([hidden])")
    assert await panel.evaluate("() => document.activeElement.id") == "tab-memory"
    assert await panel.get_attribute("#tab-memory", "tabindex") == "0"
    assert await panel.get_attribute("#tab-library", "tabindex") == "-1"
