"""What the extractor tests share: headless Chromium with nothing reaching the network, the
content scripts injected in extension/content/files.json order, chrome.runtime stubbed to record
the messages the scripts send, and the saved real pages loaded as documents.

Used by tests/extension/test_extractor*.py, tests/extension/test_markdown_*.py,
tests/extension/test_composer_lines.py and bench/generic_reader.py.
"""

from __future__ import annotations

import difflib
import json
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from testkit.farm import real_pages
from testkit.sites import Fixture, catalog, collapse, route_fixture
from testkit.skips import skip_unless_optional

REPO = Path(__file__).resolve().parents[1]
EXT = REPO / "extension"
REGISTRY = json.loads((EXT / "sites" / "registry.json").read_text(encoding="utf-8"))
SITES = {s["id"]: s for s in REGISTRY["sites"]}
FILES = json.loads((EXT / "content" / "files.json").read_text(encoding="utf-8"))
REAL_DOM = REPO.parent / "shared" / "reference" / "real-dom"
MISS_FIXTURES = REPO / "fixtures" / "misses"
CHROMIUM = os.environ.get("WF_CHROMIUM", "/usr/bin/chromium")
HAVE_CHROMIUM = Path(CHROMIUM).exists()


# Records every chrome.runtime.sendMessage and the onMessage listeners (no extension here).
CHROME_STUB = """
(() => {
  window.__wfMessages = [];
  window.__wfListeners = [];
  const runtime = {
    id: 'wherefrom-test',
    sendMessage(msg) { window.__wfMessages.push(JSON.parse(JSON.stringify(msg))); return Promise.resolve(); },
    onMessage: { addListener(fn) { window.__wfListeners.push(fn); } },
  };
  try {
    Object.defineProperty(window, 'chrome', { value: { runtime }, configurable: true, writable: true });
  } catch (e) {
    Object.defineProperty(window.chrome, 'runtime', { value: runtime, configurable: true });
  }
})();
"""

SETTLED = """() => {
  const ns = window.Wherefrom;
  if (!ns || !ns.runtime) return false;
  const s = ns.runtime.state();
  const caps = window.__wfMessages.filter(m => m.type === ns.messages.CAPTURE_TURNS);
  const last = caps[caps.length - 1];
  const missed = window.__wfMessages.some(m => m.type === ns.messages.SELECTOR_MISS);
  return s.phase === 'idle' && !s.timer && !s.collecting && ((!!last && last.payload.settled) || missed);
}"""

SCROLL_SNAPSHOT = """() => {
  window.__wfScrolls = [...document.querySelectorAll('*')]
    .filter(e => e.scrollHeight > e.clientHeight + 1 && getComputedStyle(e).overflowY !== 'visible')
    .map(e => ({el: e, top: e.scrollTop, height: e.scrollHeight}));
}"""

SCROLL_CHECK = """() => window.__wfScrolls.filter(s => s.el.isConnected).map(s => ({
  what: s.el.tagName + (s.el.id ? '#' + s.el.id : ''), before: s.top, after: s.el.scrollTop,
  fromBottomBefore: s.height - s.top, fromBottomAfter: s.el.scrollHeight - s.el.scrollTop,
}))"""

INSERT = """async (text) => {
  const ns = window.Wherefrom;
  let answer = null;
  for (const fn of window.__wfListeners) {
    fn({type: ns.messages.INSERT_TEXT, payload: {text}}, {id: 'wherefrom-test'}, (r) => { answer = r; });
  }
  await new Promise(r => setTimeout(r, 100));
  const deep = (root, sel, out = []) => {
    root.querySelectorAll(sel).forEach(e => out.push(e));
    root.querySelectorAll('*').forEach(e => e.shadowRoot && deep(e.shadowRoot, sel, out));
    return out;
  };
  const editors = deep(document, '[data-wf-editor]').map(e => {
    const q = e.matches('.ql-editor') ? e : (e.querySelector('.ql-editor') || e);
    return {kind: e.getAttribute('data-wf-editor'), model: q.dataset.wfModel ?? e.dataset.wfModel};
  });
  const sends = deep(document, '[data-wf-send]').map(b =>
    !(b.disabled || b.getAttribute('aria-disabled') === 'true'));
  return {answer, editors, sends, submitted: window.__wfSubmitted || []};
}"""

INSERTED = "Remember: the café opens at 7:30 — 東京 🚀"


def file_text(rel: str) -> str | None:
    path = EXT / rel
    return path.read_text(encoding="utf-8") if path.is_file() else None


async def inject(page: Any, skip: tuple[str, ...] = ()) -> None:
    """Add the content scripts to the page in files.json order (missing optional files skipped)."""
    for rel in FILES:
        if rel in skip:
            continue
        text = file_text(rel)
        if text is None:
            assert rel == "shared/protocol.js" or rel.startswith("content/adapters/"), f"missing {rel}"
            continue
        await page.add_script_tag(content=text)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def chromium() -> AsyncIterator[Any]:
    pw_api = pytest.importorskip("playwright.async_api")
    if not HAVE_CHROMIUM:
        skip_unless_optional(f"no Chromium at {CHROMIUM}")
    async with pw_api.async_playwright() as pw:
        b = await pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
        yield b
        await b.close()


async def new_page(
    chromium: Any, fixture: Fixture | None = None, html: str | None = None, url: str | None = None
) -> Any:
    """A fresh context + page with nothing reaching the network; the fixture (or html) served at its URL."""
    context = await chromium.new_context(viewport={"width": 1200, "height": 800})
    await context.route("**/*", lambda route: route.fulfill(status=404, body="offline"))
    if fixture is not None:
        await route_fixture(context, fixture)
        url = fixture.url
    elif html is not None:
        body = html

        async def serve(route: Any) -> None:
            if route.request.url.split("#")[0] == url:
                await route.fulfill(status=200, content_type="text/html; charset=utf-8", body=body)
            else:
                await real_pages.answer_subresource(route)

        await context.route("**/*", serve)
    await context.add_init_script(CHROME_STUB)
    page = await context.new_page()
    await page.goto(url, wait_until="load")
    return page


def diff(expected: list[dict[str, str]], got: list[dict[str, str]]) -> str:
    a = [f"{t['role']}: {collapse(t['text'])}" for t in expected]
    b = [f"{t['role']}: {t['text']}" for t in got]
    return "\n".join(difflib.unified_diff(a, b, "expected", "captured", lineterm="", n=1))


async def capture(page: Any, timeout_ms: int = 30_000) -> list[dict[str, str]]:
    await page.wait_for_function(SETTLED, timeout=timeout_ms, polling=100)
    msgs = await page.evaluate("() => window.__wfMessages")
    caps = [m for m in msgs if m["type"] == "content:capture-turns"]
    if not caps:
        return []
    return [{"role": t["role"], "text": t["text"]} for t in caps[-1]["payload"]["turns"]]


def fixture_ids(*, composer: bool = False) -> list[Any]:
    """Every fixture scenario (with composer=True: those that have a composer to insert into)."""
    return [pytest.param(fx, id=fx.id) for fx in catalog() if fx.has_composer or not composer]


def load_real_dom(expected_path: Path) -> tuple[dict[str, Any], str, str]:
    """expected.json, the page as a full document (fragments wrapped), and the page's name."""
    expected = json.loads(expected_path.read_text(encoding="utf-8"))
    html_path = expected_path.with_name(expected_path.name.replace(".expected.json", ".html"))
    fragment = html_path.read_text(encoding="utf-8")
    head = fragment.lstrip()[:200].lower()
    html = (
        fragment
        if head.startswith(("<!doctype", "<html"))
        else ("<!DOCTYPE html><html><head><meta charset='utf-8'></head><body>" + fragment + "</body></html>")
    )
    return expected, html, html_path.stem


def real_dom_cases() -> list[Any]:
    if not REAL_DOM.is_dir():
        return [pytest.param(None, marks=pytest.mark.skip(reason=f"{REAL_DOM} not present"))]
    return [pytest.param(p, id=p.name[: -len(".expected.json")]) for p in sorted(REAL_DOM.glob("*.expected.json"))]
