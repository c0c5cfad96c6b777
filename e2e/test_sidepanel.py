"""The side panel with the real extension and a real companion server.

The panel page is opened as a tab (chrome-extension://<id>/sidepanel/index.html?tabId=N, N being
the web tab it is about). Every test starts its own server (own data dir and port) and its own
Chromium profile. Screenshots of each view go to e2e/report/screenshots/.

Covers: the disclosure gate, the three connection states, a rule edit read back from the
server's GET /api/site-mode, forget's two clicks and its 8-second window (then Undo), and the
outbox delivering after a server restart with no duplicate.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import BrowserContext, Page, Worker, async_playwright

REPO = Path(__file__).resolve().parent.parent
EXTENSION = REPO / "extension"
EXT_ID = "gidncpejkfcnakpojbbbhocinihfkjmj"
PANEL = f"chrome-extension://{EXT_ID}/sidepanel/index.html"
SHOTS = Path(__file__).resolve().parent / "report" / "screenshots"
WHEREFROM = REPO / ".venv" / "bin" / "wherefrom"
CHROMIUM = os.environ.get("WHEREFROM_CHROMIUM", "/usr/bin/chromium")
PAGE_HTML = (
    "<!doctype html><html><head><title>{title}</title></head><body><h1>{title}</h1>"
    "<p>A page about provenance, memory and where things come from.</p></body></html>"
)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    """A companion server subprocess this test started (own port, own data dir)."""

    def __init__(self, port: int, data_dir: Path) -> None:
        self.port = port
        self.data_dir = data_dir
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def token(self) -> str:
        return subprocess.check_output([str(WHEREFROM), "pair", "--data-dir", str(self.data_dir)], text=True).strip()

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [str(WHEREFROM), "serve", "--port", str(self.port), "--data-dir", str(self.data_dir)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"{self.url}/api/health", timeout=1) as r:  # noqa: S310 - loopback
                    if r.status == 200:
                        break
            except OSError:
                time.sleep(0.1)
        else:
            raise RuntimeError("server did not start")
        assert self.health()["ok"], "the server answering is the one this test started"

    def health(self) -> dict[str, Any]:
        status, body = self.call("GET", "/api/health")
        assert status == 200
        pid = body.get("build", {}).get("pid")
        if pid is not None and self.proc is not None:
            assert pid == self.proc.pid, "another process answers on this port"
        return body

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(10)
            self.proc = None

    def call(self, method: str, path: str, body: Any = None, **query: str) -> tuple[int, Any]:
        url = self.url + path + ("?" + urllib.parse.urlencode(query) if query else "")
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(url, data=data, method=method)
        req.add_header("Authorization", f"Bearer {self.token}")
        if data is not None:
            req.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(req, timeout=10) as r:  # noqa: S310 - loopback
                return r.status, json.loads(r.read() or b"null")
        except urllib.error.HTTPError as err:
            return err.code, json.loads(err.read() or b"null")


@pytest.fixture
def server() -> Iterator[Server]:
    with tempfile.TemporaryDirectory(prefix="wf-e2e-") as d:
        srv = Server(free_port(), Path(d))
        srv.start()
        try:
            yield srv
        finally:
            srv.stop()


class Browser:
    def __init__(self, ctx: BrowserContext, worker: Worker) -> None:
        self.ctx = ctx
        self.sw = worker

    async def set_server(self, url: str) -> None:
        await self.sw.evaluate("(u) => chrome.storage.local.set({serverUrl: u})", url)

    async def storage(self, key: str) -> Any:
        return await self.sw.evaluate("async (k) => (await chrome.storage.local.get(k))[k]", key)

    async def web_tab(self, url: str, title: str) -> tuple[Page, int]:
        page = await self.ctx.new_page()
        await page.route(url, lambda r: r.fulfill(status=200, content_type="text/html", body=PAGE_HTML.format(title=title)))
        await page.goto(url)
        tab_id = await self.sw.evaluate("async (u) => (await chrome.tabs.query({url: u}))[0].id", url)
        return page, int(tab_id)

    async def panel(self, tab_id: int | None = None, view: str | None = None) -> Page:
        page = await self.ctx.new_page()
        query = {k: str(v) for k, v in (("tabId", tab_id), ("view", view)) if v is not None}
        await page.goto(PANEL + ("?" + urllib.parse.urlencode(query) if query else ""))
        await page.wait_for_function("() => document.getElementById('conn').textContent !== '…'")
        return page


@pytest.fixture
async def browser() -> AsyncIterator[Browser]:
    with tempfile.TemporaryDirectory(prefix="wf-profile-") as profile:
        async with async_playwright() as p:
            args = [
                f"--disable-extensions-except={EXTENSION}", f"--load-extension={EXTENSION}",
                "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run",
            ]
            if hasattr(os, "geteuid") and os.geteuid() == 0:
                args.append("--no-sandbox")
            ctx = await p.chromium.launch_persistent_context(
                profile, executable_path=CHROMIUM, headless=True, args=args, viewport={"width": 420, "height": 860},
            )
            worker = ctx.service_workers[0] if ctx.service_workers else await ctx.wait_for_event("serviceworker")
            assert EXT_ID in worker.url
            try:
                yield Browser(ctx, worker)
            finally:
                await ctx.close()


async def shot(page: Page, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    await page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


async def pair_and_accept(b: Browser, server: Server) -> None:
    await b.set_server(server.url)
    panel = await b.panel()
    await panel.click("#accept")
    await panel.click("nav [data-view=settings]")
    await panel.fill("#token", server.token)
    await panel.click("#pair")
    await panel.wait_for_selector("#conn[data-state=connected]")
    await panel.close()


# ---------------------------------------------------------------- tests


async def test_disclosure_gates_page_memory(browser: Browser, server: Server) -> None:
    await browser.set_server(server.url)
    assert await browser.storage("pageMemory") in (None, False)
    panel = await browser.panel()
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


async def test_three_connection_states(browser: Browser, server: Server) -> None:
    closed = free_port()
    await browser.set_server(f"http://127.0.0.1:{closed}")
    panel = await browser.panel(view="settings")
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


async def test_rule_edit_round_trip(browser: Browser, server: Server) -> None:
    await pair_and_accept(browser, server)
    panel = await browser.panel(view="settings")
    await panel.fill("#rule-host", "Example.org")
    await panel.select_option("#rule-mode", "suggest")
    await panel.click("#rule-form button[type=submit]")
    await panel.wait_for_selector("li.rule[data-host='example.org']")
    assert "this site and its subdomains" in (await panel.text_content("li.rule[data-host='example.org']") or "")
    status, body = server.call("GET", "/api/site-mode", host="news.example.org")
    assert status == 200 and body["mode"] == "suggest" and body["reason"] == "rule:example.org"

    await panel.select_option("li.rule[data-host='example.org'] select", "off")
    await panel.wait_for_selector("#rule-status[data-tone=ok]")
    await panel.wait_for_function(
        "() => document.querySelector(\"li.rule[data-host='example.org'] select\").value === 'off'"
    )
    assert server.call("GET", "/api/site-mode", host="example.org")[1]["mode"] == "off"
    policy = await browser.storage("policy")
    assert {"host": "example.org", "mode": "off"} in policy["rules"], "the cached snapshot follows the edit"
    await panel.click("details.sensitive >> nth=0")
    await shot(panel, "05-settings-rules")

    await panel.click("li.rule[data-host='example.org'] button")
    await panel.wait_for_selector("li.rule[data-host='example.org']", state="detached")
    assert server.call("GET", "/api/site-mode", host="example.org")[1] == {
        "host": "example.org", "mode": "collect", "reason": "default"}


async def test_forget_needs_two_clicks_within_eight_seconds(browser: Browser, server: Server) -> None:
    await pair_and_accept(browser, server)
    url = "https://forget.example/article"
    for text in ("first thing I noted", "second thing I noted"):
        status, _ = server.call("POST", "/api/notes", {"url": url, "title": "Forget me", "text": text})
        assert status == 201
    _, tab_id = await browser.web_tab(url, "Forget me")
    panel = await browser.panel(tab_id=tab_id)
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

    def exact_count() -> int:
        return len(server.call("GET", "/api/page-match", url=url)[1]["tiers"]["exact"])

    # first click: a dry run, nothing forgotten
    await panel.click("#forget")
    await panel.wait_for_selector("#forget.armed")
    assert "2 items" in (await panel.text_content("#forget-status") or "")
    await shot(panel, "07-forget-armed")
    assert exact_count() == 2
    # the window runs out: the button disarms and nothing was forgotten
    await asyncio.sleep(8.6)
    assert not await panel.is_visible("#forget.armed")
    assert "ran out" in (await panel.text_content("#forget-status") or "")
    assert exact_count() == 2
    # two clicks inside the window forget
    await panel.click("#forget")
    await panel.wait_for_selector("#forget.armed")
    await panel.click("#forget")
    await panel.wait_for_selector("#undo:not([hidden])")
    assert "Forgot 2 items" in (await panel.text_content("#forget-status") or "")
    assert exact_count() == 0
    await shot(panel, "08-forgotten")
    await panel.click("#undo")
    await panel.wait_for_selector("#undo", state="hidden")
    assert exact_count() == 2


async def test_outbox_delivers_once_after_server_restart(browser: Browser, server: Server) -> None:
    await pair_and_accept(browser, server)
    url = "https://outbox.example/page"
    _, tab_id = await browser.web_tab(url, "Outbox page")
    panel = await browser.panel(tab_id=tab_id)
    await panel.wait_for_selector("#note-box:not([hidden])")
    server.stop()

    await panel.fill("#note", "written while the server was down")
    await panel.click("#save-note")
    await panel.wait_for_selector("#note-status[data-tone=warn]")
    assert "outbox" in (await panel.text_content("#note-status") or "")
    outbox = await browser.storage("outbox")
    assert len(outbox) == 1 and outbox[0]["key"]
    await panel.click("nav [data-view=activity]")
    await panel.wait_for_selector("#outbox li.item.pending")
    await shot(panel, "09-activity-outbox-pending")

    server.start()
    # delivery attempts: panel open, tab activation, and the explicit button — all at once
    await panel.click("#outbox button")
    again = await browser.panel(tab_id=tab_id)
    await browser.sw.evaluate("(id) => chrome.tabs.update(id, {active: true})", tab_id)
    await again.wait_for_function("() => true")
    deadline = time.monotonic() + 10
    while await browser.storage("outbox") and time.monotonic() < deadline:
        await asyncio.sleep(0.2)
    assert await browser.storage("outbox") == []
    await asyncio.sleep(1)
    match = server.call("GET", "/api/page-match", url=url)[1]
    notes = [f for f in match["tiers"]["exact"] if f["text"] == "written while the server was down"]
    assert len(notes) == 1, "delivered exactly once"
    await panel.click("nav [data-view=memory]")
    await panel.click("nav [data-view=activity]")
    await panel.wait_for_selector("text=Nothing waiting")
    await shot(panel, "10-activity-delivered")
