"""The content-script extractor over the static chat-site fixtures, in headless Chromium.

No extension is loaded: each page is served at its real https URL (testkit/sites.py routes), the
content scripts listed in extension/content/files.json are injected in order, and
chrome.runtime is stubbed to record the messages the scripts send (testkit/extractor_kit.py).
Asserted per fixture: complete capture against expected.json (same turns, order, roles,
normalised text; nothing in must_not_capture), the reader's scroll position restored after
scroll-and-collect, and composer insertion that reaches the editor's own state without
submitting; a SELECTOR_MISS on a page without turns; no timer on an idle page. The registry's
evidence: tests/extension/test_extractor_registry.py; the saved real pages and the miss controls:
tests/extension/test_extractor_real_pages.py.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from testkit.extractor_kit import (
    INSERT,
    INSERTED,
    SCROLL_CHECK,
    SCROLL_SNAPSHOT,
    SITES,
    capture,
    diff,
    fixture_ids,
    inject,
    new_page,
)
from testkit.extractor_kit import chromium as chromium  # noqa: F401  (the fixture)
from testkit.sites import Fixture, catalog, collapse
from testkit.skips import skip_unless_optional

pytestmark = pytest.mark.asyncio(loop_scope="module")

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


# ----------------------------------------------------------------------------- selector health


async def test_page_without_turns_reports_selector_miss(chromium: Any) -> None:
    """A conversation URL whose DOM no alternative matches and the generic reader cannot split
    (each message a bare paragraph, like the paragraphs of one message): SELECTOR_MISS, never a
    silent 0 turns."""
    url = "https://chatgpt.com/c/00000000-0000-4000-8000-000000000000"
    html = (
        "<!DOCTYPE html><html><body><main><div class='redesigned-thread'>"
        "<p class='bubble'>Hello?</p><p class='bubble'>Hi there.</p></div>"
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
