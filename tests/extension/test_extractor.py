"""The content-script extractor over the static chat-site fixtures, in headless Chromium.

No extension is loaded: each page is served at its real https URL (testkit/sites.py routes), the
content scripts listed in extension/content/files.json are injected in order, and
chrome.runtime is stubbed to record the messages the scripts send. Asserted per fixture:
complete capture against expected.json (same turns, order, roles, normalised text; nothing in
must_not_capture), the reader's scroll position restored after scroll-and-collect, and composer
insertion that reaches the editor's own state without submitting. Also: every registry
alternative's evidence count on its named fixture, a SELECTOR_MISS on a page without turns,
and the real saved DOMs in ../shared/reference/real-dom/ (skipped when absent).
"""

from __future__ import annotations

import difflib
import json
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import pytest_asyncio

from testkit.farm import real_pages
from testkit.sites import Fixture, catalog, collapse, route_fixture
from tests.conftest import skip_unless_optional

REPO = Path(__file__).resolve().parents[2]
EXT = REPO / "extension"
REGISTRY = json.loads((EXT / "sites" / "registry.json").read_text(encoding="utf-8"))
SITES = {s["id"]: s for s in REGISTRY["sites"]}
FILES = json.loads((EXT / "content" / "files.json").read_text(encoding="utf-8"))
REAL_DOM = REPO.parent / "shared" / "reference" / "real-dom"
MISS_FIXTURES = REPO / "fixtures" / "misses"
CHROMIUM = os.environ.get("WF_CHROMIUM", "/usr/bin/chromium")
HAVE_CHROMIUM = Path(CHROMIUM).exists()

pytestmark = pytest.mark.asyncio(loop_scope="module")

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
                await route.fulfill(status=404, body="offline")

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


# ----------------------------------------------------------------------------- capture


@pytest.mark.parametrize("fx", fixture_ids())
async def test_capture_matches_ground_truth(chromium: Any, fx: Fixture) -> None:
    assert fx.site in SITES, f"{fx.site} is not in the registry"
    page = await new_page(chromium, fx)
    try:
        await page.evaluate(SCROLL_SNAPSHOT)
        await inject(page)
        got = await capture(page)
        expected = [{"role": t["role"], "text": collapse(t["text"])} for t in fx.expected["turns"]]
        assert got == expected, f"{fx.id} capture differs:\n{diff(expected, got)}"
        for text in fx.expected.get("must_not_capture", []):
            for i, turn in enumerate(got):
                if text not in expected[i]["text"]:
                    assert text not in turn["text"], f"{fx.id} turn {i} captured UI text {text!r}"
        if "streaming" in fx.features:
            caps = await page.evaluate(
                "() => window.__wfMessages.filter(m => m.type === 'content:capture-turns').map(m => m.payload)"
            )
            assert any(not c["settled"] for c in caps), f"{fx.id}: no update while the reply grew"
            for c in caps:
                if c["settled"]:
                    assert c["turns"][-1]["text"] == got[-1]["text"], f"{fx.id}: settled before the reply was done"
        misses = await page.evaluate("() => window.__wfMessages.filter(m => m.type === 'content:selector-miss')")
        assert misses == []
        for s in await page.evaluate(SCROLL_CHECK):
            same_top = abs(s["after"] - s["before"]) <= 1
            same_view = abs(s["fromBottomAfter"] - s["fromBottomBefore"]) <= 1
            assert same_top or same_view, f"{fx.id}: scroll position not restored: {s}"
    finally:
        await page.context.close()


@pytest.mark.parametrize("fx", fixture_ids(composer=True))
async def test_composer_insertion(chromium: Any, fx: Fixture) -> None:
    page = await new_page(chromium, fx)
    try:
        assert await page.evaluate(
            "() => !!document.querySelector('[data-wf-editor]') || "
            "[...document.querySelectorAll('*')].some(e => e.shadowRoot)"
        ), f"{fx.id} declares a composer but the page has none"
        await inject(page)
        result = await page.evaluate(INSERT, INSERTED)
        answer = result["answer"]
        assert answer and answer["ok"], f"{fx.id}: insertion failed: {answer}"
        assert answer["editor"] == fx.expected.get("editor", answer["editor"])
        assert any(e["model"] == INSERTED for e in result["editors"]), (
            f"{fx.id}: the editor's own state did not get the text: {result['editors']}"
        )
        # a streaming page shows a stop button instead of the send button
        assert not result["sends"] or any(result["sends"]), f"{fx.id}: send button still disabled"
        assert result["submitted"] == [], f"{fx.id}: something was submitted"
    finally:
        await page.context.close()


# ----------------------------------------------------------------------------- evidence


def evidence_cases() -> list[Any]:
    """Every layout alternative's and page-data reader's evidence: fixtures, and saved real pages
    under ../shared/reference/ (skipped when absent)."""
    by_path = {str(fx.html_path.relative_to(REPO)): fx for fx in catalog()}
    cases = []
    for site in REGISTRY["sites"]:
        entries = [("layout", lay["id"], lay["evidence"]) for lay in site["layouts"]]
        entries += [("page_data", d["id"], d["evidence"]) for d in site.get("page_data", [])]
        entries += [("panel", p["id"], p["evidence"]) for p in site.get("panels", [])]
        for kind, alt_id, evidence in entries:
            for ev in evidence:
                where = ev.get("fixture") or ev["page"]
                marks = []
                if "fixture" in ev:
                    target: Any = by_path.get(ev["fixture"])
                    if target is None:
                        marks = [pytest.mark.skip(reason=f"{ev['fixture']} not written yet")]
                else:
                    target = REAL_DOM.parent / ev["page"]
                    if not target.is_file():
                        marks = [pytest.mark.skip(reason=f"{target} not present")]
                cases.append(
                    pytest.param(
                        site["id"],
                        kind,
                        alt_id,
                        target,
                        ev["count"],
                        id=f"{site['id']}/{alt_id}@{where.split('/')[-1]}",
                        marks=marks,
                    )
                )
    return cases


@pytest.mark.parametrize(("site_id", "kind", "alt_id", "target", "count"), evidence_cases())
async def test_registry_evidence(chromium: Any, site_id: str, kind: str, alt_id: str, target: Any, count: int) -> None:
    """Each alternative's turn selectors (or page-data reader) find the recorded number of turns
    on its fixture or saved real page."""
    if isinstance(target, Path):
        expected, html, name = load_real_dom(target.with_name(target.stem + ".expected.json"))
        page = await new_page(chromium, html=html, url=expected["url"])
    else:
        page = await new_page(chromium, target)
        name = target.id
    try:
        await inject(page, skip=("content/capture.js",))
        got = await page.evaluate(
            """([siteId, kind, altId]) => {
              const ns = window.Wherefrom;
              const site = ns.registry.sites.find(s => s.id === siteId);
              if (kind === 'page_data') {
                return ns.pageData.readWith(document, site.page_data.find(d => d.id === altId)).length;
              }
              if (kind === 'panel') {
                const only = Object.assign({}, site, {panels: site.panels.filter(p => p.id === altId)});
                return ns.extractor.readPanels(document, only, []).length;
              }
              return ns.extractor.countMatches(document, site, site.layouts.find(l => l.id === altId));
            }""",
            [site_id, kind, alt_id],
        )
        assert got == count, f"{site_id}/{alt_id} finds {got} on {name}, registry says {count}"
    finally:
        await page.context.close()


async def test_evidence_is_newest_first() -> None:
    """Evidence entries carrying a `checked` date are listed newest first."""
    for site in REGISTRY["sites"]:
        for alt in site["layouts"] + site.get("page_data", []) + site.get("panels", []):
            dates = [ev["checked"] for ev in alt["evidence"] if "checked" in ev]
            assert dates == sorted(dates, reverse=True), f"{site['id']}/{alt['id']}: {dates}"


# registry keys whose string values are not CSS selectors
NOT_SELECTORS = [
    "id",
    "name",
    "hosts",
    "matches",
    "conversation",
    "reason",
    "fixture",
    "lazy",
    "editor",
    "attr",
    "value",
    "values",
    "default",
    "",
    "paths",
    "marker",
    "format",
    "messages",
    "role",
    "roles",
    "join",
    "checked",
    "page",
]


async def test_every_registry_selector_parses(chromium: Any) -> None:
    """A typo in a selector would throw in querySelectorAll on the real site: parse them all."""
    page = await new_page(chromium, html="<!DOCTYPE html><p>x</p>", url="https://example.org/")
    try:
        result = await page.evaluate(
            """([reg, notSelectors]) => {
              const bad = [];
              let checked = 0;
              const walk = (v, path, key) => {
                if (key === 'page_data') {  // data paths, not selectors: only `script` is one
                  v.forEach((d, i) => d.script && walk(d.script, path + '[' + i + '].script', 'script'));
                  return;
                }
                if (typeof v === 'string') {
                  if (notSelectors.includes(key)) return;
                  checked++;
                  try { document.querySelectorAll(v); } catch (e) { bad.push(path + ': ' + v); }
                } else if (Array.isArray(v)) v.forEach((x, i) => walk(x, path + '[' + i + ']', key));
                else if (v && typeof v === 'object') Object.entries(v).forEach(([k, x]) => walk(x, path + '.' + k, k));
              };
              reg.sites.forEach(s => walk(s, s.id, ''));
              walk(reg.defaults, 'defaults', '');
              return {bad, checked};
            }""",
            [REGISTRY, NOT_SELECTORS],
        )
        assert result["checked"] > 150
        bad = result["bad"]
        assert bad == []
    finally:
        await page.context.close()


# ----------------------------------------------------------------------------- selector health


async def test_page_without_turns_reports_selector_miss(chromium: Any) -> None:
    """A conversation URL whose DOM no alternative matches: SELECTOR_MISS, never a silent 0 turns."""
    url = "https://chatgpt.com/c/00000000-0000-4000-8000-000000000000"
    html = (
        "<!DOCTYPE html><html><body><main><div class='redesigned-thread'>"
        "<div class='bubble'>Hello?</div><div class='bubble'>Hi there.</div></div>"
        "<div id='prompt-textarea' class='ProseMirror' contenteditable='true'></div></main></body></html>"
    )
    page = await new_page(chromium, html=html, url=url)
    try:
        await inject(page)
        await page.wait_for_function(
            "() => window.__wfMessages.some(m => m.type === 'content:selector-miss')", timeout=10_000
        )
        msgs = await page.evaluate("() => window.__wfMessages")
        miss = [m for m in msgs if m["type"] == "content:selector-miss"]
        assert len(miss) == 1 and miss[0]["payload"]["site"] == "chatgpt" and miss[0]["payload"]["detail"]
        assert not [m for m in msgs if m["type"] == "content:capture-turns"]
        assert "url" not in json.dumps(miss[0]["payload"]).lower()
    finally:
        await page.context.close()


async def test_unregistered_host_runs_nothing(chromium: Any) -> None:
    """On a host the registry does not cover: no runtime, no listener, no message, no timer."""
    page = await new_page(
        chromium, html="<!DOCTYPE html><p>news</p><textarea></textarea>", url="https://example.org/c/123"
    )
    try:
        await inject(page)
        await page.wait_for_timeout(600)
        state = await page.evaluate(
            "() => ({msgs: window.__wfMessages.length, listeners: window.__wfListeners.length,"
            " runtime: !!(window.Wherefrom && window.Wherefrom.runtime)})"
        )
        assert state == {"msgs": 0, "listeners": 0, "runtime": False}
    finally:
        await page.context.close()


async def test_idle_page_schedules_no_timer(chromium: Any) -> None:
    """Once a capture has settled and nothing changes, the runtime holds no timer at all."""
    fixtures = [fx for fx in catalog() if "streaming" not in fx.features]
    if not fixtures:
        skip_unless_optional("no fixtures found")
    page = await new_page(chromium, fixtures[0])
    try:
        await inject(page)
        await capture(page)
        await page.wait_for_timeout(2500)
        state = await page.evaluate("() => window.Wherefrom.runtime.state()")
        assert state["phase"] == "idle" and not state["timer"]
    finally:
        await page.context.close()


async def sample_timer(page: Any, n: int = 20) -> int:
    """In how many of n samples, 50 ms apart, the runtime holds a timer."""
    return int(
        await page.evaluate(
            """async (n) => { let busy = 0;
            for (let i = 0; i < n; i++) {
                if (window.Wherefrom.runtime.state().timer) busy++;
                await new Promise((r) => setTimeout(r, 50));
            }
            return busy; }""",
            n,
        )
    )


async def test_animation_outside_the_thread_does_not_keep_the_runtime_busy(chromium: Any) -> None:
    """A page element animated by script elsewhere (a sidebar spinner) leaves the settled runtime
    idle; the same animation inside the thread wakes it (the positive control)."""
    fixtures = [fx for fx in catalog() if "streaming" not in fx.features and "shadow-root" not in fx.features]
    page = await new_page(chromium, fixtures[0])
    try:
        await inject(page)
        await capture(page)
        await page.evaluate("""() => {
            const spinner = document.createElement('div');
            document.body.appendChild(spinner);
            window.__wfSpin = setInterval(() => spinner.classList.toggle('on'), 40);
        }""")
        await page.wait_for_timeout(1500)
        busy = await sample_timer(page)
        assert busy == 0, f"the runtime held a timer in {busy} of 20 samples while only a spinner moved"
        # control: animate something inside a captured turn instead
        await page.evaluate("""() => {
            clearInterval(window.__wfSpin);
            const t = window.Wherefrom.runtime.state().turns.length;
            const el = document.querySelectorAll('*');
            let target = null;
            for (const e of el) if (e.textContent && e.children.length === 0 &&
                window.Wherefrom.runtime.state().turns.some(
                  (x) => x.text.includes(e.textContent.trim().slice(0, 20))) &&
                e.textContent.trim().length > 20) { target = e; break; }
            window.__wfSpin = setInterval(() => target.classList.toggle('on'), 40);
        }""")
        woke = await sample_timer(page)
        await page.evaluate("() => clearInterval(window.__wfSpin)")
        assert woke > 0, "a change inside the thread must wake the runtime (else the check above proves nothing)"
    finally:
        await page.context.close()


# ----------------------------------------------------------------------------- real saved DOMs


def real_dom_cases() -> list[Any]:
    if not REAL_DOM.is_dir():
        return [pytest.param(None, marks=pytest.mark.skip(reason=f"{REAL_DOM} not present"))]
    return [pytest.param(p, id=p.name[: -len(".expected.json")]) for p in sorted(REAL_DOM.glob("*.expected.json"))]


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


@pytest.mark.parametrize("expected_path", real_dom_cases())
async def test_real_dom(chromium: Any, expected_path: Path) -> None:
    """The real-page gate: a page whose host the registry claims is captured exactly (turn count,
    roles, order, collapsed text; a second reading only where the notes allow one, from
    e2e/real_pages_readings.json), with no selector miss and no UI text; it may fail only when
    e2e/real_pages_expected_failures.json lists it (reason and date)."""
    expected, html, name = load_real_dom(expected_path)
    listed = real_pages.expected_failures().get(name)
    if listed:
        pytest.xfail(f"listed in {real_pages.EXPECTED_FAILURES.name}: {listed['reason']} ({listed['date']})")
    page = await new_page(chromium, html=html, url=expected["url"])
    try:
        await inject(page)
        got = await capture(page)
        cmp = real_pages.compare(name, expected["turns"], [(t["role"], t["text"]) for t in got])
        misses = await page.evaluate("() => window.__wfMessages.filter(m => m.type === 'content:selector-miss')")
        assert cmp.exact, (
            f"{name}: {cmp.matched}/{cmp.expected} turns match, {cmp.captured} captured; "
            f"{cmp.first_diff}; misses {[m['payload'].get('kind') for m in misses]}"
        )
        assert misses == [], f"{name}: a complete capture recorded a miss: {misses}"
        for text in expected.get("exclude_examples", []):
            for i, turn in enumerate(got):
                if text not in collapse(expected["turns"][i]["text"]):
                    assert text not in turn["text"], f"{name} turn {i} captured UI text {text!r}"
    finally:
        await page.context.close()


# ----------------------------------------------------------------------------- miss controls


def miss_controls() -> list[Any]:
    from testkit.sites import _load, read_meta

    out = []
    for html_path in sorted(MISS_FIXTURES.glob("*.html")):
        fx = _load(read_meta(html_path)["site"], html_path)
        out.append(pytest.param(fx, id=html_path.stem))
    return out


@pytest.mark.parametrize("fx", miss_controls())
async def test_partial_capture_records_its_miss(chromium: Any, fx: Fixture) -> None:
    """Positive controls, one per miss kind: a conversation page built to fail that way records
    exactly that miss (site, kind, layouts tried, path pattern) and no page text; the turns it
    did find are still sent. (Every complete fixture and real page records none: see above.)"""
    page = await new_page(chromium, fx)
    try:
        await inject(page)
        got = await capture(page)
        want = [{"role": t["role"], "text": collapse(t["text"])} for t in fx.expected["turns"]]
        assert got == want, f"{fx.id}: {diff(want, got)}"
        misses = [
            m["payload"]
            for m in await page.evaluate("() => window.__wfMessages.filter(m => m.type === 'content:selector-miss')")
        ]
        assert [m["kind"] for m in misses] == [fx.expected["miss"]], misses
        miss = misses[0]
        site = SITES[fx.site]
        assert miss["site"] == fx.site
        assert miss["layouts"][: len(site["layouts"])] == [lay["id"] for lay in site["layouts"]]
        assert miss["path"] == fx.expected["miss_path"]
        wire = json.dumps(miss, ensure_ascii=False)
        for t in fx.expected["turns"]:
            assert t["text"][:20] not in wire, "a miss must never carry page text"
        assert urlsplit(fx.url).path.split("/")[-1] not in wire, "a miss names the path pattern, not the URL"
    finally:
        await page.context.close()
