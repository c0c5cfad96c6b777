"""Links for a page's Markdown, read from the page itself.

trafilatura's Markdown is made from the same pass as the search text, which runs without links
(keeping them changes what it extracts). The links are put back afterwards, conservatively: an
anchor of the page becomes `[text](url)` in the Markdown only when the whole text of the block it
sits in (its paragraph, list item, table cell, heading, quote) is found on one Markdown line and
the anchor's words occur exactly once on that line, as whole words. Anything else stays plain text: a missing
link is better than a wrong one. Only http(s) targets, made absolute against the page's URL.
"""

from __future__ import annotations

import re
from urllib.parse import urljoin, urlsplit

from lxml.html import HtmlElement

BLOCKS = frozenset({"p", "li", "td", "th", "dd", "dt", "blockquote", "figcaption", "h1", "h2", "h3", "h4", "h5", "h6"})
MAX_ANCHORS = 5_000  # a page with more is a link farm, not an article: no links
_FENCE = re.compile(r"^\s*(```|~~~)")
_ESCAPED = re.compile(r"\\([!-/:-@\[-`{-~])")  # Markdown's backslash escapes (trafilatura writes \<)


def _norm(s: str) -> str:
    return " ".join(s.split())


Anchor = tuple[str, str, str]  # (anchor text, its href as written, the text of its block)


def page_anchors(tree: HtmlElement, url: str) -> list[Anchor]:
    """The page's anchors that could become links, read BEFORE extraction changes the tree."""
    found: list[Anchor] = []
    blocks: dict[HtmlElement, str] = {}  # a block's text, read once however many links it holds
    for n, a in enumerate(tree.iter("a")):
        if n >= MAX_ANCHORS:
            return []
        href = (a.get("href") or "").strip()
        if not href or href.startswith(("#", "javascript:", "mailto:")):
            continue
        block = a.getparent()
        while block is not None and (not isinstance(block.tag, str) or block.tag.lower() not in BLOCKS):
            block = block.getparent()
        if block is None:
            continue
        text = _norm(a.text_content() or "")
        if len(text) < 2 or "[" in text or "]" in text or "`" in text:
            continue
        if block not in blocks:
            blocks[block] = _norm(block.text_content() or "")
        found.append((text, href, blocks[block]))  # resolved only if it becomes a link
    return found


def _target(url: str, href: str) -> str | None:
    """The absolute http(s) URL of `href` on the page at `url`, else None."""
    target = urljoin(url, href)
    return target if urlsplit(target).scheme in ("http", "https") else None


def _inside_word(line: str, start: int, end: int) -> bool:
    """Whether line[start:end] begins or ends inside a word ("Info" in "Informationen")."""
    before = start > 0 and line[start - 1].isalnum() and line[start].isalnum()
    after = end < len(line) and line[end].isalnum() and line[end - 1].isalnum()
    return before or after


def _destination(url: str) -> str:
    return f"<{url}>" if re.search(r"[\s()<>]", url) else url


def add_links(markdown: str, anchors: list[Anchor], url: str) -> str:
    """`markdown` with the anchors whose block is on exactly one line, and whose text occurs once
    on it, as Markdown links (never inside code, never on a line that already has one)."""
    if not anchors:
        return markdown
    lines = markdown.split("\n")
    open_lines: dict[int, str] = {}  # line -> its words, for the lines a link may go on
    in_code = False
    for i, line in enumerate(lines):
        if _FENCE.match(line):
            in_code = not in_code
        elif not in_code and "`" not in line and "](" not in line:
            open_lines[i] = _norm(_ESCAPED.sub(r"\1", line))
    wanted: dict[int, list[tuple[str, str]]] = {}
    lines_of: dict[str, list[int]] = {}
    for text, href, block in anchors:
        if block and block not in lines_of:
            lines_of[block] = [i for i, flat in open_lines.items() if block in flat][:2]
        where = lines_of.get(block, [])
        if len(where) == 1:
            wanted.setdefault(where[0], []).append((text, href))
    for i, items in wanted.items():
        line = lines[i]
        spans: list[tuple[int, int, str]] = []
        for text, href in items:
            at = line.find(text)
            if at < 0 or line.find(text, at + 1) >= 0:
                continue
            end = at + len(text)
            if _inside_word(line, at, end) or any(at < e and s < end for s, e, _ in spans):
                continue
            target = _target(url, href)
            if target is not None:
                spans.append((at, end, f"[{text}]({_destination(target)})"))
        out, last = [], 0
        for s, e, link in sorted(spans):
            out += [line[last:s], link]
            last = e
        lines[i] = "".join(out) + line[last:]
    return "\n".join(lines)
