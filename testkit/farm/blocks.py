"""Score captured Markdown against a transcript's `blocks` (../shared/reference/real-dom/README.md).

`parse_blocks` reads the GFM the extension writes (content/markdown.js: Turndown + our rules) back
into the README's block kinds — code (lang, exact text), table (rows of collapsed cell text), list
(top-level items), heading, math (TeX), link (text, href). `score` matches the expected blocks of
each turn against the captured turn's blocks and answers per kind "found/expected" plus what was
missed; a code block whose text differs from the page's is listed in `code_mismatches` (the
farm fails on those). Used by tests/extension/test_markdown_blocks.py and e2e/test_farm_real_pages.py.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

KINDS = ("code", "table", "list", "heading", "math", "link")
# the courlan tracker rule of server/urls.py (shared/urls.js TRACKERS_RE): links are compared
# without tracking parameters, which the extension drops before storing
_TRACKERS = re.compile(
    r"^(?:dc|fbc|gc|twc|yc|ysc)lid|^(?:click|gbra|msclk|igsh|partner|wbra)id|"
    r"^(?:ads?|mc|ga|gs|itm|mc|mkt|ml|mtm|oly|pk|utm|vero)_|"
    r"(?:\b|_)(?:aff|affi|affiliate|campaign|cl?id|eid|ga|gl|kwd|keyword|medium|ref|referr?er|session|source|uid|xtor)"
)
_FENCE = re.compile(r"^(`{3,}|~{3,})([^`\s]*)\s*$")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_ITEM = re.compile(r"^([-*+]|\d+[.)])\s+(.*)$")
_LINK = re.compile(r"(?<![!\\])\[((?:\\.|[^\]\\])*)\]\(((?:\\.|[^()\s\\])+)(?:\s+\"[^\"]*\")?\)")
_IMAGE = re.compile(r"!\[((?:\\.|[^\]\\])*)\]\(((?:\\.|[^()\s\\])+)\)")
_INLINE_MATH = re.compile(r"(?<![\\$])\$(?!\$)((?:\\.|[^$\\])+?)\$")
_ESCAPE = re.compile(r"\\([\\`*_{}\[\]()#+\-.!|~>$<])")


def collapse(text: str) -> str:
    return re.sub(r"\s+", " ", text.replace("\u200b", "").replace("\ufeff", "")).strip()


def drop_trackers(href: str) -> str:
    try:
        parts = urlsplit(href)
    except ValueError:
        return href
    if not parts.query:
        return href
    kept = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if not _TRACKERS.search(k)]
    return urlunsplit(parts._replace(query=urlencode(kept)))


def link_key(href: str) -> str:
    """A link as compared: without tracking parameters, and an http(s) URL's empty path as "/"
    (the page's attribute says https://example.com?x, the browser's resolved href, which the
    extension stores, https://example.com/?x: one URL)."""
    href = drop_trackers(href)
    try:
        parts = urlsplit(href)
    except ValueError:
        return href
    if parts.scheme.lower() in ("http", "https") and parts.netloc and not parts.path:
        return urlunsplit(parts._replace(path="/"))
    return href


def inline_text(md: str) -> str:
    """Markdown inline syntax → the text a reader sees (math keeps its TeX)."""
    s = _IMAGE.sub(lambda m: m.group(1), md)
    s = _LINK.sub(lambda m: m.group(1), s)
    # an escaped character is text, never markup (a literal ** the page shows stays **)
    held: list[str] = []

    def hold(m: re.Match[str]) -> str:
        held.append(m.group(1))
        return f"\ue000{len(held) - 1}\ue001"

    s = _ESCAPE.sub(hold, s)
    s = re.sub(r"(\*\*|__|~~)(.+?)\1", r"\2", s)
    s = re.sub(r"(?<![\w*])\*(?!\s)(.+?)(?<!\s)\*", r"\1", s)
    s = re.sub(r"(?<![\w_])_(?!\s)(.+?)(?<!\s)_", r"\1", s)
    s = re.sub(r"`+([^`]*)`+", r"\1", s)
    s = re.sub("\ue000(\\d+)\ue001", lambda m: held[int(m.group(1))], s)
    return collapse(s)


def _cells(line: str) -> list[str]:
    body = line.strip()
    body = body[1:] if body.startswith("|") else body
    body = body[:-1] if body.endswith("|") and not body.endswith("\\|") else body
    return [inline_text(c.replace("\\|", "|")) for c in re.split(r"(?<!\\)\|", body)]


def _inline_blocks(text: str, out: list[dict[str, Any]]) -> None:
    for m in _LINK.finditer(text):
        out.append({"kind": "link", "text": inline_text(m.group(1)), "href": _ESCAPE.sub(r"\1", m.group(2))})
    for m in _INLINE_MATH.finditer(re.sub(r"`[^`]*`", "", text)):
        out.append({"kind": "math", "tex": collapse(m.group(1)), "display": False})


def parse_blocks(md: str) -> list[dict[str, Any]]:
    """The blocks of one turn's Markdown, in reading order."""
    lines = md.split("\n")
    out: list[dict[str, Any]] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        fence = _FENCE.match(line)
        if fence:
            j = i + 1
            while j < len(lines) and lines[j].strip() != fence.group(1):
                j += 1
            out.append({"kind": "code", "lang": fence.group(2).lower() or None, "code": "\n".join(lines[i + 1 : j])})
            i = j + 1
            continue
        if line.strip() == "$$":
            j = i + 1
            while j < len(lines) and lines[j].strip() != "$$":
                j += 1
            out.append({"kind": "math", "tex": collapse(" ".join(lines[i + 1 : j])), "display": True})
            i = j + 1
            continue
        if line.startswith("|"):
            rows: list[list[str]] = []
            math: list[dict[str, Any]] = []
            while i < len(lines) and lines[i].startswith("|"):
                if not re.fullmatch(r"\|?(\s*:?-{3,}:?\s*\|)+\s*", lines[i].strip()):
                    rows.append(_cells(lines[i]))
                    _inline_blocks(lines[i], math)
                i += 1
            if rows and not any(rows[0]):
                rows = rows[1:]  # the empty header a headerless table gets
            out.append({"kind": "table", "rows": rows})
            out.extend(math)
            continue
        heading = _HEADING.match(line)
        if heading:
            out.append({"kind": "heading", "level": len(heading.group(1)), "text": inline_text(heading.group(2))})
            _inline_blocks(heading.group(2), out)
            i += 1
            continue
        item = _ITEM.match(line)
        if item:
            items: list[list[str]] = []
            ordered = item.group(1)[0].isdigit()
            inner: list[dict[str, Any]] = []
            while i < len(lines):
                cur = lines[i]
                if cur.strip() == "$$" and items:  # display math inside an item
                    j = i + 1
                    while j < len(lines) and lines[j].strip() != "$$":
                        j += 1
                    tex = collapse(" ".join(x.strip() for x in lines[i + 1 : j]))
                    items[-1].append(f"${tex}$")
                    inner.append({"kind": "math", "tex": tex, "display": True})
                    i = j + 1
                    continue
                m = _ITEM.match(cur)
                if m:
                    items.append([m.group(2)])
                elif cur.startswith((" ", "\t")) and cur.strip() and items:
                    items[-1].append(re.sub(r"^\s*(?:[-*+]|\d+[.)])\s+", "", cur))
                elif (
                    not cur.strip()
                    and i + 1 < len(lines)
                    and (_ITEM.match(lines[i + 1]) or lines[i + 1].startswith((" ", "\t")))
                ):
                    pass
                else:
                    break
                _inline_blocks(cur, inner)
                i += 1
            out.append({"kind": "list", "ordered": ordered, "items": [inline_text(" ".join(x)) for x in items]})
            out.extend(inner)
            continue
        _inline_blocks(line, out)
        i += 1
    return out


def same_text(want: str, got: str) -> bool:
    """Equal text, where a formula in `got` ($TeX$) stands for its rendering in `want` (which the
    transcript writes as the page shows it; the TeX itself is scored as its own math block)."""
    if collapse(want) == got:
        return True
    parts = _INLINE_MATH.split(got)
    if len(parts) == 1:
        return False
    pattern = ".+?".join(re.escape(re.sub(r"\s+", "", p)) for p in parts[::2])
    return re.fullmatch(pattern, re.sub(r"\s+", "", want)) is not None


def _same(kind: str) -> Callable[[dict[str, Any], dict[str, Any]], bool]:
    if kind == "code":
        return lambda w, g: w["code"] == g["code"] and (w.get("lang") or None) == (g.get("lang") or None)
    if kind == "table":
        return lambda w, g: (
            len(w["rows"]) == len(g["rows"])
            and all(
                len(a) == len(b) and all(same_text(x, y) for x, y in zip(a, b, strict=True))
                for a, b in zip(w["rows"], g["rows"], strict=True)
            )
        )
    if kind == "list":
        return lambda w, g: (
            len(w["items"]) == len(g["items"])
            and all(same_text(x, y) for x, y in zip(w["items"], g["items"], strict=True))
        )
    if kind == "heading":
        return lambda w, g: collapse(w["text"]) == g["text"]
    if kind == "math":
        return lambda w, g: re.sub(r"\s+", "", w["tex"]) == re.sub(r"\s+", "", g["tex"])
    return lambda w, g: collapse(w["text"]) == g["text"] and link_key(w["href"]) == link_key(g["href"])


def align(expected_turns: Sequence[dict[str, Any]], captured: Sequence[dict[str, Any]]) -> list[int | None]:
    """For each expected turn, the captured turn that holds it: the same index when the counts
    agree, else (turns split or merged differently) the most similar captured turn of that role,
    in order."""
    if len(expected_turns) == len(captured):
        return list(range(len(captured)))
    out: list[int | None] = []
    start = 0
    for want in expected_turns:
        best, best_ratio = None, 0.3
        text = collapse(want.get("text", ""))[:600]
        for k in range(start, len(captured)):
            if captured[k].get("role") != want.get("role"):
                continue
            ratio = difflib.SequenceMatcher(None, text, collapse(captured[k].get("text", ""))[:600]).ratio()
            if ratio > best_ratio:
                best, best_ratio = k, ratio
        out.append(best)
        if best is not None:
            start = best + 1
    return out


def score(expected_turns: Sequence[dict[str, Any]], captured: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Per kind "found/expected" over a page, the misses, and code blocks whose text differs.
    `captured`: the turns as captured or stored ({role, text, markdown})."""
    found = dict.fromkeys(KINDS, 0)
    total = dict.fromkeys(KINDS, 0)
    misses: list[str] = []
    code_mismatches: list[dict[str, Any]] = []
    places = align(expected_turns, captured)
    for n, turn in enumerate(expected_turns):
        k = places[n]
        got = parse_blocks(captured[k].get("markdown") or "") if k is not None else []
        for want in turn.get("blocks", []):
            kind = want["kind"]
            total[kind] += 1
            same = _same(kind)
            pool = [g for g in got if g["kind"] == kind]
            hit = next((g for g in pool if same(want, g)), None)
            if hit is not None:
                got.remove(hit)
                found[kind] += 1
                continue
            misses.append(f"turn {n} {kind}: {str({k: v for k, v in want.items() if k != 'kind'})[:160]}")
            if kind == "code" and not any(g["code"] == want["code"] for g in pool):
                # the text itself differs (a wrong language alone is a miss, not a mismatch)
                code_mismatches.append({"turn": n, "want": want["code"], "got": [g["code"] for g in pool]})
    return {
        "blocks": {k: f"{found[k]}/{total[k]}" for k in KINDS if total[k]},
        "found": sum(found.values()),
        "total": sum(total.values()),
        "misses": misses,
        "code_mismatches": code_mismatches,
    }
