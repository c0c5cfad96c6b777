"""Inserting a memory keeps its lines (turns are kept as Markdown): a turn's Markdown with paragraphs, a list and an
indented code block lands in every fixture's composer with every line break and every leading
space, read back from the editor's own model (fixtures/sites/_lib/editors.js emulates
ProseMirror, TipTap, Lexical, Quill, textarea and contenteditable), and nothing is submitted."""

from __future__ import annotations

from typing import Any

import pytest

from testkit.sites import Fixture
from tests.extension.test_extractor import INSERT, fixture_ids, inject, new_page
from tests.extension.test_extractor import chromium as chromium  # noqa: F401  (the fixture, re-exported)

pytestmark = pytest.mark.asyncio(loop_scope="module")

MARKDOWN = (
    "Use this:\n\n"
    "```python\n"
    "def area(r):\n"
    "    if r < 0:\n"
    "        raise ValueError('negative')\n"
    "\n"
    "    return 3.14159 * r ** 2\n"
    "```\n\n"
    "- one\n"
    "  - nested\n"
    "- two"
)


@pytest.mark.parametrize("fx", fixture_ids(composer=True))
async def test_insert_keeps_lines_and_indentation(chromium: Any, fx: Fixture) -> None:  # noqa: F811
    page = await new_page(chromium, fx)
    try:
        assert await page.evaluate(
            "() => !!document.querySelector('[data-wf-editor]') || "
            "[...document.querySelectorAll('*')].some(e => e.shadowRoot)"
        ), f"{fx.id} declares a composer but the page has none"
        await inject(page)
        result = await page.evaluate(INSERT, MARKDOWN)
        answer = result["answer"]
        assert answer and answer["ok"], f"{fx.id}: insertion failed: {answer}"
        models = [e["model"] for e in result["editors"]]
        assert MARKDOWN in models, f"{fx.id} ({answer['editor']}): lines lost: {models!r}"
        assert result["submitted"] == [], f"{fx.id}: something was submitted"
    finally:
        await page.context.close()
