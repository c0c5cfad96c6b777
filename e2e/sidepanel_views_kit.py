"""What the side panel view tests share: the seeded notes, chat and documents, axe-core run in
the panel page, the screenshot tour (two widths, both schemes) and small panel read-backs."""

from __future__ import annotations

from typing import Any

from playwright.async_api import Page

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
