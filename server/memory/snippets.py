"""Search snippets: a window of a hit's own text around the words that matched, those words marked.

FTS5's highlight() knows which words of a row matched (it runs the table's tokenizer: porter
stems, folded diacritics), but it returns the *indexed* form, where a possessive is folded
("Alice's" is indexed as "Alices"). So the matched words are read from highlight() and the marks
are put on the original text, token by token (a token compares by its indexed form).

Marks are two private-use characters, never HTML: MARK_START (U+E000) before a matched word,
MARK_END (U+E001) after it. Clients build their own nodes from them (the side panel: <mark>
elements through textContent); any of the two already in the text is dropped first, so a mark
always comes from here. Only the final results of a search are highlighted (at most its limit).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from server.governance.visibility import visible
from server.searchtext import index_form
from server.store.db import Store

MARK_START = "\ue000"
MARK_END = "\ue001"
SNIPPET_CHARS = 240          # the window of text shown around the first matched word
LEAD_CHARS = 60              # how much of it comes before that word
_MARKED = re.compile(f"{MARK_START}(.*?){MARK_END}", re.DOTALL)
_TOKEN = re.compile(r"\w+(?:['’‘`]s\b)?", re.UNICODE)
_MARKERS = str.maketrans("", "", MARK_START + MARK_END)

_FACT_HIGHLIGHTS = f"""
SELECT facts_fts.rowid AS id, f.title AS title, f.text AS text,
       highlight(facts_fts, 0, char(57344), char(57345)) AS h_title,
       highlight(facts_fts, 1, char(57344), char(57345)) AS h_body
FROM facts_fts JOIN facts f ON f.id = facts_fts.rowid
WHERE facts_fts MATCH ? AND facts_fts.rowid IN ({{marks}}) AND {visible("facts", "f")}
"""  # noqa: S608 - built by visible()
_CHUNK_HIGHLIGHTS = f"""
SELECT c.document_id AS document_id, c.seq AS seq, c.text AS text,
       highlight(document_chunks_fts, 0, char(57344), char(57345)) AS h_title,
       highlight(document_chunks_fts, 1, char(57344), char(57345)) AS h_body
FROM document_chunks_fts JOIN document_chunks c ON c.id = document_chunks_fts.rowid
WHERE document_chunks_fts MATCH ? AND {visible("document_chunks", "c")} AND document_chunks_fts.rowid IN (
  SELECT d.id FROM document_chunks d WHERE d.document_id IN ({{marks}}) AND {visible("document_chunks", "d")})
"""  # noqa: S608 - built by visible()


def matched_words(*highlighted: str) -> set[str]:
    """The words FTS marked in highlight() output, lowercased, in their indexed form."""
    words: set[str] = set()
    for h in highlighted:
        for span in _MARKED.findall(h or ""):
            words.update(w.lower() for w in re.findall(r"\w+", span))
    return words


def mark(text: str, words: set[str]) -> str:
    """The whole text with every token whose indexed form is in `words` marked."""
    text = text.translate(_MARKERS)
    if not words:
        return text
    out: list[str] = []
    last = 0
    for m in _TOKEN.finditer(text):
        if index_form(m.group()).lower() in words:
            out += [text[last:m.start()], MARK_START, m.group(), MARK_END]
            last = m.end()
    out.append(text[last:])
    return "".join(out)


def snippet(text: str, words: set[str], width: int = SNIPPET_CHARS) -> str:
    """A window of about `width` characters of the text (whitespace collapsed) around its first
    matched word, cut at spaces, with "…" where it was cut, the matched words marked."""
    flat = " ".join(text.translate(_MARKERS).split())
    first = next((m.start() for m in _TOKEN.finditer(flat) if index_form(m.group()).lower() in words), 0)
    if len(flat) <= width:
        start, end = 0, len(flat)
    else:
        start = max(0, min(first - LEAD_CHARS, len(flat) - width))
        if start > 0:
            space = flat.find(" ", start, first)
            start = space + 1 if space >= 0 else start
        end = min(len(flat), start + width)
        if end < len(flat):
            space = flat.rfind(" ", max(first, start + 1), end)
            end = space if space > start else end
    window = flat[start:end]
    return ("…" if start > 0 else "") + mark(window, words) + ("…" if end < len(flat) else "")


def _in(n: int) -> str:
    return ",".join("?" * n)


async def add_snippets(store: Store, match: str, results: Iterable[dict[str, Any]]) -> None:
    """Give every result of one MATCH string its `snippet` and `title_marked` (in place).
    Facts by id; documents by their best chunk (`id` + `chunk`, as search_chunks answers)."""
    results = list(results)
    facts = {r["id"]: r for r in results if r.get("kind") != "document"}
    docs = {(r["id"], r.get("chunk")): r for r in results if r.get("kind") == "document"}
    if facts:
        sql = _FACT_HIGHLIGHTS.format(marks=_in(len(facts)))
        for row in await store.fetchall(sql, [match, *facts]):
            words = matched_words(row["h_title"], row["h_body"])
            hit = facts[row["id"]]
            hit["snippet"] = snippet(row["text"], words)
            hit["title_marked"] = mark(row["title"], words)
    if docs:
        ids = sorted({d for d, _seq in docs})
        sql = _CHUNK_HIGHLIGHTS.format(marks=_in(len(ids)))
        for row in await store.fetchall(sql, [match, *ids]):
            doc = docs.get((row["document_id"], row["seq"]))
            if doc is None:
                continue
            words = matched_words(row["h_title"], row["h_body"])
            doc["snippet"] = snippet(row["text"], words)
            doc["title_marked"] = mark(doc.get("title") or "", words)
    for r in results:  # a row FTS did not return (it cannot happen for a hit; never leave a gap)
        r.setdefault("snippet", snippet(str(r.get("text") or ""), set()))
        r.setdefault("title_marked", str(r.get("title") or "").translate(_MARKERS))
