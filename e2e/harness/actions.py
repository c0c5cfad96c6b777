"""What a person does on a tab, for Phase A: switch tabs, type, select, let a reply stream, idle."""

from __future__ import annotations

import asyncio
import os
from typing import Any

IDLE_S = float(os.environ.get("WF_IDLE_S", "1.5"))
STREAM_S = 5.0  # stream.js delivers a reply over ~4 s

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


async def switch_tabs(pages: list[Any], rounds: int = 2) -> None:
    for _ in range(rounds):
        for p in pages:
            await p.bring_to_front()
            await asyncio.sleep(0.15)


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


async def exercise(page: Any, other: Any, *, nonce: str, streaming: bool) -> dict[str, Any]:
    """Load is done; now: tabs back and forth, type, select, stream, idle, tabs again, idle."""
    typed = f"wherefrom typed words {nonce}"
    await switch_tabs([other, page])
    did_type = await type_in_composer(page, typed)
    selected = await select_text(page)
    await switch_tabs([other, page])
    await asyncio.sleep(STREAM_S if streaming else 0.2)
    await asyncio.sleep(IDLE_S)
    await switch_tabs([other, page], rounds=1)
    await asyncio.sleep(IDLE_S / 2)
    return {"typed": typed if did_type else "", "selected": selected}
