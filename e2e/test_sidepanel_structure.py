"""The panel shows structure: a library page read from its Markdown (headings, lists, a table,
code) and chat turns with math (KaTeX, rendered after the sanitiser), in the real extension with
the real server. Nothing from the page runs: raw HTML in the Markdown stays text.

Screenshots (light and dark, 420 px): e2e/report/screenshots/views/50-library-reader-markdown-*.png
and 51-conversation-math-*.png. axe-core runs in each state (as in test_sidepanel_views).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from e2e.sidepanel_views_kit import SHOTS, axe_violations
from e2e.test_sidepanel import pair_and_accept, panel_of, web_tab
from testkit.farm.browser import Browser
from testkit.farm.server import CompanionServer


@pytest_asyncio.fixture(loop_scope="session")
async def farm(make_farm: Any, health: dict[str, Any], request: pytest.FixtureRequest) -> AsyncIterator[Any]:
    health.update(site="_sidepanel", phase="other", variant=request.node.name)
    farm = await make_farm(viewport={"width": 420, "height": 860})
    yield farm
    led = await farm.check_ledger()
    health.update(ledger=led["ledger_requests"])


@pytest.fixture
def browser(farm: Any) -> Browser:
    return farm.browser


@pytest.fixture
def server(farm: Any) -> CompanionServer:
    return farm.server


PAGE_URL = "https://orchard.example/grafting"
PAGE_HTML = (
    "<!doctype html><html lang=en><head><title>Grafting walnut trees</title></head><body>"
    "<nav><a href='/'>Home</a></nav><main><article><h1>Grafting walnut trees</h1>"
    "<p>Grafting joins a scion of a chosen variety to a hardy rootstock, the usual way to grow a named "
    "walnut cultivar, because seedlings rarely keep the traits of their parent tree.</p>"
    "<h2>When to graft</h2><p>Graft in spring, when the rootstock's sap is rising and the buds of the "
    "scion are still dormant; warm days help the union heal quickly.</p>"
    "<ul><li>Cut scions in winter and keep them cold</li><li>Wait for the rootstock to leaf out</li>"
    "<li>Graft on a warm, still morning</li></ul>"
    "<h2>Methods compared</h2><table><thead><tr><th>Method</th><th>Success</th><th>Skill</th></tr></thead>"
    "<tbody><tr><td>Bark graft</td><td>High</td><td>Low</td></tr><tr><td>Whip and tongue</td><td>Medium</td>"
    "<td>High</td></tr></tbody></table>"
    "<h2>Record keeping</h2><p>Keep a log of every graft, so you can see which methods work in your "
    "<a href='/orchard'>orchard</a> over the years: &lt;img src=x onerror=alert(1)&gt; stays text.</p>"
    "<pre><code>date,tree,method,result\n2024-04-12,A3,bark,took</code></pre>"
    "<p>Seal every cut with grafting wax and label the tree.</p></article></main></body></html>"
)
CHAT_URL = "https://chatgpt.com/c/panel-math"
MATH_TURNS = [
    ("user", "What is the area of a circle, and how does $e^{i\\pi}$ fit in?"),
    (
        "assistant",
        "The area is $A = \\pi r^2$, and Euler's identity is \\(e^{i\\pi} + 1 = 0\\).\n\n"
        "$$\n\\int_0^1 x^2\\,dx = \\frac{1}{3}\n$$\n\n"
        "Also \\[\\sum_{n=1}^{\\infty} \\frac{1}{n^2} = \\frac{\\pi^2}{6}\\]\n\n"
        "A price of $5 and $10 is not math, and neither is `$x$` in code.",
    ),
    ("user", "And is $\\href{javascript:alert(1)}{\\text{this}}$ a link?"),
]


async def tour(page: Any, name: str, problems: dict[str, Any]) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    await page.set_viewport_size({"width": 420, "height": 860})
    for scheme in ("light", "dark"):
        await page.emulate_media(color_scheme=scheme)
        await page.evaluate("() => document.fonts.ready")
        await page.evaluate("() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")
        await page.screenshot(path=str(SHOTS / f"{name}-{scheme}.png"), full_page=True)
        bad = await axe_violations(page)
        if bad:
            problems[f"{name} {scheme}"] = bad
    await page.emulate_media(color_scheme="light")


async def test_the_library_reader_shows_the_pages_structure(browser: Browser, server: CompanionServer) -> None:
    await pair_and_accept(browser, server)
    status, body = await server.call(
        "POST", "/api/library/add_text", json_body={"url": PAGE_URL, "title": "", "html": PAGE_HTML}
    )
    assert status == 201, body
    doc_id = body["document"]["id"]
    panel = await panel_of(browser, view="library")
    await panel.click(f"li.doc[data-id='{doc_id}'] >> text=Read")
    await panel.wait_for_selector("#doc-reader .reader-text.md")
    reader = "#doc-reader .reader-text"
    assert await panel.eval_on_selector_all(f"{reader} h2", "hs => hs.map((h) => h.textContent)") == [
        "When to graft",
        "Methods compared",
        "Record keeping",
    ]
    # the page's own h1 is the title shown above the reader: said once (fixtures/title-heading-cases.json)
    assert await panel.locator(f"{reader} h1").count() == 0
    assert "Grafting walnut trees" in await panel.inner_text("#doc-reader")
    assert await panel.locator(f"{reader} ul > li").count() == 3
    assert await panel.locator(f"{reader} table tbody tr").count() == 2
    assert "2024-04-12,A3,bark,took" in await panel.inner_text(f"{reader} pre code")
    link = panel.locator(f"{reader} a[href='https://orchard.example/orchard']")
    assert await link.inner_text() == "orchard" and await link.get_attribute("rel") == "noopener noreferrer"
    # the page's escaped markup is text, never an element
    assert await panel.locator(f"{reader} img").count() == 0
    assert "<img src=x onerror=alert(1)> stays text" in await panel.inner_text(reader)
    problems: dict[str, Any] = {}
    await tour(panel, "50-library-reader-markdown", problems)
    assert not problems, problems


async def test_math_in_chat_turns_renders_and_dollar_amounts_stay_text(
    browser: Browser, server: CompanionServer
) -> None:
    await pair_and_accept(browser, server)
    status, body = await server.call(
        "POST",
        "/api/captures",
        json_body={
            "url": CHAT_URL,
            "title": "Circles and series",
            "site": "chatgpt",
            "turns": [{"role": r, "text": t, "markdown": t} for r, t in MATH_TURNS],
        },
    )
    assert status == 200, body
    _, tab_id = await web_tab(browser, CHAT_URL, "Circles and series - ChatGPT")
    panel = await panel_of(browser, tab_id)
    await panel.click("#open-conversation")
    await panel.wait_for_selector("#conv-turns li.turn >> nth=1")
    await panel.wait_for_selector("#conv-turns .katex")
    answer = "#conv-turns li.turn >> nth=1"
    # four formulas in the answer: $…$, \(…\), $$…$$ and \[…\], the last two displayed
    found = await panel.eval_on_selector_all(
        "#conv-turns li.turn >> nth=1 >> .math", "ms => ms.map((m) => m.getAttribute('title'))"
    )
    assert len(found) == 4, found
    assert await panel.locator(f"{answer} >> .math-display .katex-display").count() == 2
    assert await panel.locator("#conv-turns li.turn >> nth=0 >> .math .katex").count() == 1
    tex = await panel.eval_on_selector_all(
        "#conv-turns annotation[encoding='application/x-tex']", "as => as.map((a) => a.textContent)"
    )
    assert "A = \\pi r^2" in tex and "e^{i\\pi} + 1 = 0" in tex
    text = await panel.inner_text(answer)
    assert "A price of $5 and $10 is not math" in text
    assert await panel.inner_text(f"{answer} >> code") == "$x$"
    assert await panel.locator(f"{answer} >> .katex-error").count() == 0
    # TeX cannot make a link (KaTeX's trust is off): \href shows as the refused command, never an <a>
    third = "#conv-turns li.turn >> nth=2"
    assert await panel.locator(f"{third} >> .katex").count() == 1
    assert await panel.locator(f"{third} >> a").count() == 0 and "\\href" in await panel.inner_text(third)
    problems: dict[str, Any] = {}
    await tour(panel, "51-conversation-math", problems)
    assert not problems, problems
