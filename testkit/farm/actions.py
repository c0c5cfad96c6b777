"""What a person does on a tab, for Phase A: switch tabs, type, select, let a reply stream, idle.

Every wait here ends on a positive signal, not on a guess:
- a tab switch ends when the service worker itself sees the tab active (`chrome.tabs.query`), so
  the worker's `tabs.onActivated` has fired for it;
- a streaming reply ends when the fixture's stream says it is done (on whichever of the two tabs
  holds it: the watched page, or the chat tab next to a sensitive one)
  (`documentElement.dataset.wfStreamDone`, set by fixtures/sites/_lib/stream.js); a reply that
  never finishes makes the window invalid (FarmError), never "passed";
- the idle after the last action lasts as long as the capture script needs to decide that a page is
  still and send (DEBOUNCE_MS + QUIET_MS, read from extension/content/capture.js, plus a margin),
  so a capture script that should not be there has had its chance to speak inside the window.
"""

from __future__ import annotations

import asyncio
import os
import re
import time
from pathlib import Path
from typing import Any

from .server import FarmError

CAPTURE_JS = Path(__file__).resolve().parents[2] / "extension" / "content" / "capture.js"
STREAM_TIMEOUT_S = 15.0  # stream.js delivers a reply over ~4 s
SWITCH_TIMEOUT_S = 5.0
IDLE_MARGIN_S = 0.25  # the capture script's message still has to reach the worker and the wire

SELECT_JS = """() => {
  const skip = new Set(['SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE']);
  const w = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  let best = null;
  for (let n = w.nextNode(); n; n = w.nextNode()) {
    if (skip.has(n.parentElement && n.parentElement.tagName)) continue;
    const t = n.textContent.trim();
    if (t.length >= 20) { best = n; break; }
  }
  if (!best) return '';
  const r = document.createRange();
  r.selectNodeContents(best);
  const s = window.getSelection();
  s.removeAllRanges();
  s.addRange(r);
  document.dispatchEvent(new Event('selectionchange'));
  return s.toString();
}"""

ACTIVE_URLS_JS = "() => chrome.tabs.query({active: true}).then(ts => ts.map(t => t.url))"
HAS_STREAM_JS = "() => !!document.querySelector('[data-wf-stream]')"
STREAM_DONE_JS = "() => document.documentElement.dataset.wfStreamDone === 'true'"


def capture_settle_s(source: Path = CAPTURE_JS) -> float:
    """How long the capture script waits after the last change before it sends (DEBOUNCE_MS +
    QUIET_MS in capture.js). Read from the script so the idle follows the extension: a longer
    QUIET_MS lengthens the window instead of silently outliving it."""
    text = source.read_text("utf-8")
    found = {name: re.search(rf"\b{name}\s*=\s*(\d+)\s*;", text) for name in ("DEBOUNCE_MS", "QUIET_MS")}
    missing = [n for n, m in found.items() if m is None]
    if missing:
        raise FarmError(f"{source}: cannot read {missing}; the Phase A idle is derived from them")
    return sum(int(m.group(1)) for m in found.values() if m is not None) / 1000


def idle_s() -> float:
    """The idle at the end of a window: WF_IDLE_S when set (never below the capture script's
    settle time), else that settle time plus a margin."""
    settle = capture_settle_s() + IDLE_MARGIN_S
    return max(settle, float(os.environ.get("WF_IDLE_S") or 0))


async def bring_to_front(page: Any, sw: Any) -> None:
    """Activate the tab, and return once the service worker sees it active."""
    await page.bring_to_front()
    deadline = time.monotonic() + SWITCH_TIMEOUT_S
    while page.url not in await sw.evaluate(ACTIVE_URLS_JS):
        if time.monotonic() > deadline:
            raise FarmError(f"the worker never saw {page.url} active after bring_to_front")
        await asyncio.sleep(0.02)


async def switch_tabs(pages: list[Any], sw: Any, rounds: int = 2) -> None:
    for _ in range(rounds):
        for p in pages:
            await bring_to_front(p, sw)


async def type_in_composer(page: Any, text: str) -> bool:
    for sel in ("[data-wf-editor]", "textarea:visible", "[contenteditable='true']:visible"):
        editor = page.locator(sel).first
        if await editor.count():
            break
    else:
        return False
    await editor.focus(timeout=3000)
    await page.keyboard.type(text, delay=2)
    return True


async def select_text(page: Any) -> str:
    return str(await page.evaluate(SELECT_JS))


async def wait_streams_done(pages: list[Any]) -> None:
    """Wait until every page that holds a fixture stream (`[data-wf-stream]`) says it is done.
    The fixture is a streaming one, so a stream must exist on one of the pages."""
    streaming = [p for p in pages if await p.evaluate(HAS_STREAM_JS)]
    if not streaming:
        raise FarmError(
            f"a streaming fixture, yet no [data-wf-stream] on {[p.url for p in pages]}; "
            "the window would prove nothing about streaming"
        )
    for page in streaming:
        try:
            await page.wait_for_function(STREAM_DONE_JS, timeout=STREAM_TIMEOUT_S * 1000)
        except Exception as exc:
            raise FarmError(
                f"the streaming reply on {page.url} did not finish within {STREAM_TIMEOUT_S} s; "
                "the window would prove nothing about streaming"
            ) from exc


async def exercise(page: Any, other: Any, sw: Any, *, nonce: str, streaming: bool) -> dict[str, Any]:
    """Load is done; now: tabs back and forth, type, select, tabs again, the stream to its end,
    a last round of tabs, then idle (the capture script's settle time after the last action).
    Returns the typed and selected text and how long each step took (`steps`, seconds)."""
    typed = f"wherefrom typed words {nonce}"
    steps: dict[str, float] = {}
    t = time.monotonic()

    def lap(name: str) -> None:
        nonlocal t
        now = time.monotonic()
        steps[name] = round(steps.get(name, 0) + now - t, 2)
        t = now

    await switch_tabs([other, page], sw)
    lap("tabs")
    did_type = await type_in_composer(page, typed)
    selected = await select_text(page)
    lap("type_select")
    await switch_tabs([other, page], sw)
    lap("tabs")
    if streaming:
        await wait_streams_done([page, other])
        lap("stream")
    await switch_tabs([other, page], sw, rounds=1)
    lap("tabs")
    await asyncio.sleep(idle_s())
    lap("idle")
    return {"typed": typed if did_type else "", "selected": selected, "steps": steps}
