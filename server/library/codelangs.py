"""Code blocks' languages for a page's Markdown, read from the page itself.

trafilatura's Markdown fences a page's code blocks but drops the language the page marked them
with (`<code class="language-python">`, highlight.js's `lang-sh`, on the code or its `<pre>`). It
is put back conservatively, as links are (server.library.links): a plain fence gets a language
only when its whole content, whitespace aside, is the text of one marked block of the page, and
all blocks with that text agree on the language. Anything else stays a plain fence.
"""

from __future__ import annotations

import re

from lxml.html import HtmlElement

from server.textcaps import closes_fence, fence_run

MAX_BLOCKS = 2_000  # more code blocks than this: no languages (a listing, not an article)
_CLASS_LANG = re.compile(r"(?:^|\s)(?:language|lang)-([A-Za-z0-9_+#.-]{1,30})(?:\s|$)")


def _norm(text: str) -> str:
    return " ".join(text.split())


def _lang(el: HtmlElement | None) -> str | None:
    if el is None:
        return None
    m = _CLASS_LANG.search(el.get("class") or "")
    return m.group(1).lower() if m else None


def page_code_languages(tree: HtmlElement) -> dict[str, str]:
    """{a marked code block's text, whitespace collapsed: its language}, read BEFORE extraction
    changes the tree; a text marked with two languages is left out."""
    found: dict[str, str | None] = {}
    for n, pre in enumerate(tree.iter("pre")):
        if n >= MAX_BLOCKS:
            return {}
        code = next(pre.iter("code"), None)
        lang = _lang(code) or _lang(pre)
        if lang is None:
            continue
        text = _norm(pre.text_content())
        if text:
            found[text] = lang if found.get(text, lang) == lang else None
    return {text: lang for text, lang in found.items() if lang is not None}


def add_code_languages(markdown: str, languages: dict[str, str]) -> str:
    """`markdown` with each plain fenced block whose content is a marked block of the page
    opened with that block's language (fences as server.textcaps reads them)."""
    if not languages:
        return markdown
    lines = markdown.split("\n")
    i = 0
    while i < len(lines):
        fence = fence_run(lines[i])
        if fence is None:
            i += 1
            continue
        end = next((j for j in range(i + 1, len(lines)) if closes_fence(lines[j], fence)), len(lines))
        plain = not lines[i].strip()[len(fence) :].strip()  # a fence with an info string keeps it
        lang = languages.get(_norm("\n".join(lines[i + 1 : end]))) if plain else None
        if lang is not None and end < len(lines):
            lines[i] = f"{lines[i].rstrip()}{lang}"
        i = end + 1
    return "\n".join(lines)
