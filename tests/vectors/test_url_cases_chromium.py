"""extension/shared/urls.js in real Chromium (the browser the extension runs in) against the
shared vectors and the issue-15 host forms, compared with server/urls.py. Node's `URL` (the
parser tests/js runs on) is not Chrome's: Chromium accepts some hosts the WHATWG standard
refuses (`xn--a`, a space as `exa%20mple.com`), and urls.js refuses those itself so that the
extension and the server agree in the browser too.

The one known difference is allowed by name: Chromium refuses `1.ي` (its bidi check is stricter
than the standard's), where the server follows the standard. The extension then never sends
such a URL, so nothing is stored that the server would read differently.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from server.urls import BadUrl, normalise_url
from tests.conftest import skip_unless_optional

REPO = Path(__file__).resolve().parents[2]
CHROMIUM = os.environ.get("WF_CHROMIUM", "/usr/bin/chromium")
CASES = json.loads((REPO / "fixtures" / "url-cases.json").read_text("utf-8"))["cases"]
HOST_SPELLINGS = [
    f"http://{h}:8080/x"
    for h in (
        "127。0。0。1",
        "１２７.0.0.1",
        "2130706433",
        "0177.0.0.1",
        "0x7f000001",
        "127.1",
        "chase%2Ecom",
        "[::ffff:127.0.0.1]",
        "[::127.0.0.1]",
        "xn--a",
        "exa mple.com",
        "exa%00mple",
        "a..b",
        "intranet",
    )
]
CHROMIUM_STRICTER = {"http://1.ي/x"}
HAVE_CHROMIUM = Path(CHROMIUM).exists()
URLS_JS_SOURCE = (REPO / "extension" / "shared" / "urls.js").read_text("utf-8")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def chromium() -> AsyncIterator[Any]:
    pw_api = pytest.importorskip("playwright.async_api")
    if not HAVE_CHROMIUM:
        skip_unless_optional(f"no Chromium at {CHROMIUM}")
    async with pw_api.async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
        yield browser
        await browser.close()


async def in_chromium(browser: Any, urls: list[str]) -> list[str | None]:
    page = await browser.new_page()
    try:
        await page.goto("about:blank")
        out: list[str | None] = await page.evaluate(
            """async ([src, urls]) => {
                const mod = await import(URL.createObjectURL(new Blob([src], {type: 'text/javascript'})));
                return urls.map((u) => mod.tryNormaliseUrl(u));
            }""",
            [URLS_JS_SOURCE, urls],
        )
        return out
    finally:
        await page.close()


def server_answer(url: str) -> str | None:
    try:
        return normalise_url(url)
    except BadUrl:
        return None


@pytest.mark.asyncio(loop_scope="module")
async def test_chromium_and_the_server_agree_on_every_vector(chromium: Any) -> None:
    urls = [c["url"] for c in CASES] + HOST_SPELLINGS
    got = await in_chromium(chromium, urls)
    diffs = [
        (u, server_answer(u), g)
        for u, g in zip(urls, got, strict=True)
        if server_answer(u) != g and u not in CHROMIUM_STRICTER
    ]
    assert not diffs, json.dumps(diffs, ensure_ascii=False, indent=1)
    expected = {c["url"]: c["expect"] for c in CASES}
    wrong = [
        (u, expected[u], g)
        for u, g in zip(urls, got, strict=True)
        if u in expected and g != expected[u] and u not in CHROMIUM_STRICTER
    ]
    assert not wrong, json.dumps(wrong, ensure_ascii=False, indent=1)


@pytest.mark.asyncio(loop_scope="module")
async def test_control_chromium_itself_accepts_what_urls_js_refuses(chromium: Any) -> None:
    """Without urls.js's own checks Chromium would give these hosts: the check is doing work."""
    page = await chromium.new_page()
    try:
        hosts = await page.evaluate(
            "(urls) => urls.map((u) => { try { return new URL(u).hostname } catch { return null } })",
            ["http://xn--a/", "http://exa mple.com/"],
        )
    finally:
        await page.close()
    if hosts == [None, None]:
        pytest.skip("this Chromium refuses both itself")
    assert hosts == ["xn--a", "exa%20mple.com"]
    assert server_answer("http://xn--a/") is None and server_answer("http://exa mple.com/") is None
