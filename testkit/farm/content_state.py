"""The capture runtime's own state in a page, read in our extension's isolated world over CDP.

For the farm's real-page rows: which reader found the turns (a registry layout or `generic`) and
the covered share of the conversation region's visible text (Wherefrom.runtime.state()).
"""

from __future__ import annotations

import asyncio
from typing import Any

from .browser import EXTENSION_ORIGIN, Browser

STATE_JS = "globalThis.Wherefrom && Wherefrom.runtime ? Wherefrom.runtime.state() : null"


async def content_state(browser: Browser, page: Any) -> dict[str, Any] | None:
    """Wherefrom.runtime.state() in this page; None when no capture script runs there."""
    cdp = await browser.context.new_cdp_session(page)
    found: list[dict[str, Any]] = []
    cdp.on("Runtime.executionContextCreated", lambda e: found.append(e.get("context", {})))
    try:
        await cdp.send("Runtime.enable")
        await asyncio.sleep(0.1)
        for c in found:
            ours = str(c.get("origin", "")).startswith(EXTENSION_ORIGIN) or c.get("name") == "Wherefrom"
            if c.get("auxData", {}).get("type") != "isolated" or not ours:
                continue
            res = await cdp.send(
                "Runtime.evaluate", {"expression": STATE_JS, "contextId": c["id"], "returnByValue": True}
            )
            value = res.get("result", {}).get("value")
            if isinstance(value, dict):
                return value
        return None
    finally:
        try:
            await cdp.send("Runtime.disable")
        finally:
            await cdp.detach()
