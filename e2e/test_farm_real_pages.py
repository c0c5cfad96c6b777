"""Real saved pages: capture against a transcript written from the real site.

The folder (default ../shared/reference/real-dom/, or WF_REAL_PAGES=<dir>) holds `<name>.html` with
`<name>.expected.json` ({site, url, turns: [{role, text}]}). Each page is served at its real URL
(every other request of the page is refused inside the browser), the extension runs in `collect`,
and what the server stored is compared with the transcript. The result goes to the health matrix.

Decision (documented in docs/testing.md): real pages are evidence, not fixtures — a partial or
mismatched capture is *reported*, not failed, because saved DOMs drift from the live sites and the
transcripts were written by others. The test fails only when the registry claims the page's URL
(the extension says it supports that site) and *nothing at all* was captured: that is a broken
claim whatever the cause. The folder missing skips cleanly.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from e2e.harness.blocks import score
from e2e.harness.checks import collapse
from e2e.sites import site_for_url

pytestmark = [pytest.mark.farm, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DIR = REPO.parent / "shared" / "reference" / "real-dom"
LOOPBACK = ("127.0.0.1", "localhost", "[::1]")


def folder() -> Path:
    return Path(os.environ.get("WF_REAL_PAGES") or DEFAULT_DIR)


def pages() -> list[Any]:
    d = folder()
    if not d.is_dir():
        return [pytest.param(None, id="no-real-pages")]
    out = []
    want = (os.environ.get("SITE") or "").strip() or None
    for exp in sorted(d.glob("*.expected.json")):
        html = exp.with_name(exp.name[: -len(".expected.json")] + ".html")
        if not html.is_file():
            continue
        data = json.loads(exp.read_text("utf-8"))
        site = registry_site(data.get("url", "")) or data.get("site", "?")
        if want and site != want:
            continue
        out.append(pytest.param((html, data), id=html.stem))
    return out or [pytest.param(None, id="no-real-pages-selected")]


def registry_site(url: str) -> str | None:
    """The chat site of a saved page's URL: the extension's one matcher (e2e/sites.py site_for_url,
    the twin of extension/shared/sites.js), by match pattern."""
    try:
        return site_for_url(url)
    except (OSError, ValueError):
        return None


@pytest.mark.parametrize("page_case", pages())
async def test_real_page_capture(page_case, make_farm, health):
    if page_case is None:
        health.update(site="_real", phase="real_pages", variant="none")
        pytest.skip(
            f"no real saved pages at {folder()} (optional; set WF_REAL_PAGES to use another folder)"
        )
    html_path, data = page_case
    url = data["url"]
    host = urlsplit(url).hostname or ""
    site = registry_site(url)
    health.update(
        site=site or data.get("site", "?"),
        phase="real_pages",
        variant=html_path.stem,
        supported=bool(site),
    )
    expected = [(t["role"], collapse(t["text"])) for t in data.get("turns", [])]
    health["turns_expected"] = len(expected)

    farm = await make_farm()
    await farm.configure(page_memory=True)
    await farm.server.set_site_mode(host, "collect")
    await farm.refresh_policy()
    body = html_path.read_bytes()

    async def serve(route: Any) -> None:
        req = urlsplit(route.request.url)
        if route.request.url.split("#")[0] == url.split("#")[0] and route.request.method in (
            "GET",
            "HEAD",
        ):
            await route.fulfill(
                status=200, headers={"content-type": "text/html; charset=utf-8"}, body=body
            )
        elif req.hostname == host:
            await route.fulfill(status=404, body="")
        else:
            await route.abort()

    await farm.browser.context.route(
        lambda u: urlsplit(u).scheme in ("http", "https") and urlsplit(u).hostname not in LOOPBACK,
        serve,
    )
    page = await farm.browser.new_page()
    await page.goto(url, wait_until="domcontentloaded", timeout=30000)

    got: list[tuple[str, str]] = []
    last_change = time.monotonic()
    deadline = time.monotonic() + 25
    while time.monotonic() < deadline:
        now = [(t["role"], collapse(t["text"])) for t in await farm.server.conversation(url)]
        if now != got:
            got, last_change = now, time.monotonic()
        if (
            got == expected
            or (got and time.monotonic() - last_change > 4)
            or (not got and time.monotonic() - last_change > 12)
        ):
            break
        await asyncio.sleep(0.5)
    matched = sum(1 for g, w in zip(got, expected, strict=False) if g == w)
    # the structure kept (issue 12): each turn's Markdown scored against the transcript's blocks
    stored = (await farm.server.get("/api/conversations", url=url)).get("turns", [])
    scored = score(data.get("turns", []), stored)
    if scored["total"]:
        health["blocks"] = scored["blocks"]
        health["blocks_found"] = f"{scored['found']}/{scored['total']}"
    if scored["code_mismatches"]:
        health["code_mismatch"] = scored["code_mismatches"][0]
    health.update(
        turns_captured=len(got),
        matched_turns=matched,
        match=got == expected,
        injected=await farm.browser.capture_injected(page),
    )
    if got != expected:
        health["first_diff"] = next(
            (
                f"turn {i}: got {g[0]} {g[1][:120]!r} / want {w[0]} {w[1][:120]!r}"
                for i, (g, w) in enumerate(zip(got, expected, strict=False))
                if g != w
            ),
            f"got {len(got)} turns, want {len(expected)}",
        )
    if site and got:
        assert not scored["code_mismatches"], (
            f"captured code differs from the page's (byte-exact): {scored['code_mismatches']}"
        )
    if site:
        assert got, (
            f"the registry claims {host} ({site}) but nothing was captured from the real page"
        )
