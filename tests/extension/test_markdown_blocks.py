"""Captured Markdown scored against the real pages' `blocks` (../shared/reference/real-dom/).

The extractor runs in Chromium on each saved page exactly as in tests/extension/test_extractor.py (content
scripts injected in files.json order, chrome.runtime stubbed). Each captured turn's `markdown` is
read back into blocks (testkit/farm/blocks.py) and matched with the transcript's: code with its
exact text and language, tables as rows of cells, lists, headings, math TeX, links. A code block
whose text differs from the page's fails the test (byte-exact); the other kinds are scored against
a floor per page (REAL_DOM_FLOORS) that only goes up. Per-page scores: `-s` prints the table.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from testkit.extractor_kit import (
    SETTLED,
    inject,
    load_real_dom,
    new_page,
    real_dom_cases,
)
from testkit.extractor_kit import chromium as chromium  # noqa: F401  (the fixture, re-exported)
from testkit.farm.blocks import parse_blocks, score

pytestmark = pytest.mark.asyncio(loop_scope="module")

# found/total blocks per page, measured; a lower score fails (raise these, never lower them)
REAL_DOM_FLOORS: dict[str, int] = {
    "chatgpt-chat": 4,
    "claude-chat": 5,
    "deepseek-chat": 4,
    "gemini-chat": 4,
    "meta-chat": 6,
    "mistral-chat": 4,
    "oae-chatgpt-chat-code": 1,
    "oae-chatgpt-chat-simple": 21,
    "oae-claude-artifacts": 9,
    "oae-claude-chat-simple": 11,
    "oae-gemini-chat-simple": 7,
    "perplexity-chat": 9,
    "qwen-chat": 9,
    "z-ai-chat": 4,
    "defuddle-chatgpt-citations": 18,
    "oae-gemini-deep-research": 37,
    "oae-perplexity-deep-research": 23,
    "chatgpt-formatting-showcase": 9,
    "oaix-notebooklm-chat-simple": 3,
}


async def captured_turns(browser: Any, expected: dict[str, Any]) -> list[dict[str, Any]]:
    page = await new_page(browser, html=load_real_dom_html(expected), url=expected["url"])
    try:
        await inject(page)
        try:
            await page.wait_for_function(SETTLED, timeout=20_000, polling=100)
        except Exception:  # noqa: BLE001, S110 - a page the extractor does not settle on: score what it sent
            pass
        msgs = await page.evaluate("() => window.__wfMessages")
        caps = [m for m in msgs if m["type"] == "content:capture-turns"]
        return list(caps[-1]["payload"]["turns"]) if caps else []
    finally:
        await page.context.close()


def load_real_dom_html(expected: dict[str, Any]) -> str:
    return str(expected["_html"])


@pytest.mark.parametrize("expected_path", real_dom_cases())
async def test_markdown_blocks(chromium: Any, expected_path: Path) -> None:
    expected, html, name = load_real_dom(expected_path)
    expected["_html"] = html
    turns = await captured_turns(chromium, expected)
    if not turns:
        pytest.skip(
            f"{name}: the extractor captures no turns on this page "
            "(tests/extension/test_extractor_real_pages.py::test_real_dom)"
        )
    assert all(isinstance(t.get("markdown"), str) and t["markdown"] for t in turns), f"{name}: a turn without markdown"
    result = score(expected["turns"], turns)
    print(f"\n{name}: {json.dumps(result['blocks'])} ({result['found']}/{result['total']})")
    for miss in result["misses"]:
        print("   miss", miss)
    assert not result["code_mismatches"], f"{name}: code differs from the page: {result['code_mismatches']}"
    assert result["found"] >= REAL_DOM_FLOORS.get(name, 0), (
        f"{name}: {result['found']} blocks, floor {REAL_DOM_FLOORS[name]}"
    )


async def test_parse_blocks_reads_what_the_extension_writes() -> None:
    md = (
        "# Title\n\nSee [docs](https://example.org/a?x=1) and $e^{i\\pi}$.\n\n"
        "```py\ndef f():\n    return '`'\n```\n\n| a | b |\n| --- | --- |\n| 1 | $x$ |\n\n"
        "- one\n  - nested\n- two\n\n$$\n\\int_0^1 x\\,dx\n$$"
    )
    kinds = [(b["kind"], {k: v for k, v in b.items() if k != "kind"}) for b in parse_blocks(md)]
    assert kinds == [
        ("heading", {"level": 1, "text": "Title"}),
        ("link", {"text": "docs", "href": "https://example.org/a?x=1"}),
        ("math", {"tex": "e^{i\\pi}", "display": False}),
        ("code", {"lang": "py", "code": "def f():\n    return '`'"}),
        ("table", {"rows": [["a", "b"], ["1", "$x$"]]}),
        ("math", {"tex": "x", "display": False}),
        ("list", {"ordered": False, "items": ["one nested", "two"]}),
        ("math", {"tex": "\\int_0^1 x\\,dx", "display": True}),
    ]
    # the scorer can fail: a code block one character off is a mismatch
    want = [{"role": "assistant", "blocks": [{"kind": "code", "lang": "py", "code": "def f():\n    return '`' "}]}]
    assert score(want, [{"role": "assistant", "text": "", "markdown": md}])["code_mismatches"]


async def test_links_compare_as_one_url() -> None:
    """The page's attribute and the browser's resolved href are one URL (an empty path is "/");
    tracking parameters do not count; another path or host is another link."""
    want = [
        {"role": "assistant", "blocks": [{"kind": "link", "text": "ex", "href": "https://example.com?utm_source=x"}]}
    ]

    def found(href: str) -> int:
        return int(score(want, [{"role": "assistant", "text": "", "markdown": f"[ex]({href})"}])["found"])

    assert found("https://example.com/?utm_source=x") == 1
    assert found("https://example.com/") == 1
    assert found("https://example.com/a") == 0  # the scorer can fail
    assert found("https://example.org/") == 0


async def test_escaped_markup_is_text() -> None:
    """A literal ** the page shows is escaped by the extension and read back as **; real
    emphasis is not text."""
    md = "- the page shows \\*\\*this\\*\\* and **bold** and *it*\n- two"
    assert parse_blocks(md) == [
        {"kind": "list", "ordered": False, "items": ["the page shows **this** and bold and it", "two"]}
    ]
