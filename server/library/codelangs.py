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

MAX_BLOCKS = 2_000  # more code blocks than this: no languages (a listing, not an article)
_CLASS_LANG = re.compile(r"(?:^|\s)(?:language|lang)-([A-Za-z0-9_+#.-]{1,30})(?:\s|$)")
_PLAIN_FENCE = re.compile(r"^( {0,3})(`{3,}|~{3,})\s*$")


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
    opened with that block's language."""
    if not languages:
        return markdown
    lines = markdown.split("\n")
    i = 0
    while i < len(lines):
        m = _PLAIN_FENCE.match(lines[i])
        if m is None:
            if re.match(r"^ {0,3}(`{3,}|~{3,})", lines[i]):  # a fence with an info string: skip its block
                i = _closing(lines, i, lines[i].lstrip()[:3]) + 1
                continue
            i += 1
            continue
        end = _closing(lines, i, m.group(2))
        lang = languages.get(_norm("\n".join(lines[i + 1 : end])))
        if lang is not None and end < len(lines):
            lines[i] = f"{m.group(1)}{m.group(2)}{lang}"
        i = end + 1
    return "\n".join(lines)


def _closing(lines: list[str], start: int, fence: str) -> int:
    """The index of the line closing the fence opened at `start` (len(lines): none)."""
    for j in range(start + 1, len(lines)):
        stripped = lines[j].strip()
        if stripped.startswith(fence[:3]) and set(stripped) == {fence[0]} and len(stripped) >= len(fence):
            return j
    return len(lines)
