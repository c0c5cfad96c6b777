"""What the side panel's actions reach, with the real server and extension: a library delete
waits for its undo window and then reaches the server, search hides a site turned off and a
forgotten one, and the open-search command switches an open panel to Search.

Each test gets its own farm (tap, server, Chromium with the extension; testkit/farm); the seed
data and the screenshot tour are e2e/sidepanel_views_kit.py's.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from e2e.sidepanel_views_kit import (
    DOC_URL,
    UNDO_MS,
    search_in_panel,
    seed,
)
from e2e.test_sidepanel import pair_and_accept, panel_of
from testkit.farm.browser import REPO, Browser
from testkit.farm.server import CompanionServer


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
    # (search may answer other sites' nearest items by meaning; never the hidden note)
    assert "quince recipe" not in await panel.inner_text("#results")

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


async def test_a_note_being_typed_survives_the_panel_re_rendering(
    farm: Any, browser: Browser, server: CompanionServer
) -> None:
    """The page updates (a reload, a capture arriving) and the Memory view re-renders while the
    person is writing a note: the text, the focus and the next keystrokes stay in the note box."""
    await pair_and_accept(browser, server)
    page, tab_id = await browser.web_tab("https://typing.example/article", "<title>Typing page</title><p>A page</p>")
    panel = await panel_of(browser, tab_id=tab_id)
    await panel.wait_for_selector("#note-box:not([hidden])")
    await panel.focus("#note")
    await panel.keyboard.type("half a thought")
    for _ in range(3):
        mark = farm.tap.mark()
        await page.reload()  # the tab's update makes the open panel render the page again
        # positive control: the re-render really happened (it asks the server for the page again)
        rendered = await farm.tap.wait_for(lambda r: r.path == "/api/page-match", within=10, since=mark)
        assert rendered is not None, "the panel did not render the page again after the tab reloaded"
        await panel.wait_for_function("() => !document.getElementById('note-box').hidden")
        await panel.keyboard.type(" and more")
    assert await panel.input_value("#note") == "half a thought and more and more and more"
    assert await panel.evaluate("() => document.activeElement.id") == "note"
