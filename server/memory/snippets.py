"""Search snippets: a window of a hit's own text around the words that matched, those words marked.

FTS5's highlight() knows which words of a row matched (it runs the table's tokenizer: porter
stems, folded diacritics), but it returns the *indexed* form, where a possessive is folded
("Alice's" is indexed as "Alices"). So the matched words are read from highlight() and the marks
are put on the original text by one regex of those words (each also in the possessive form it
may have been folded from), which runs in C: a 200k-character turn costs no Python loop.

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
from server.searchtext import THAI_MARKS, is_unspaced
from server.store.db import Store

MARK_START = "\ue000"
MARK_END = "\ue001"
SNIPPET_CHARS = 240  # the window of text shown around the first matched word
LEAD_CHARS = 60  # how much of it comes before that word
_MARKED = re.compile(f"{MARK_START}(.*?){MARK_END}", re.DOTALL)

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
    """The words FTS marked in highlight() output, lowercased, in their indexed form; the
    character pairs of an unspaced script joined back into the word they spell ("東京 京で" ->
    "東京で", see searchtext.index_form)."""
    words: set[str] = set()
    for h in highlighted:
        for span in _MARKED.findall(h or ""):
            tokens = [w.lower() for w in re.findall(r"\w+", span)]
            joined: list[str] = []
            for tok in tokens:
                if joined and is_unspaced(tok) and is_unspaced(joined[-1]) and tok[0] == joined[-1][-1]:
                    joined[-1] += tok[1:]
                else:
                    joined.append(tok)
            words.update(joined)
    return words


def _word_pattern(word: str) -> str:
    """A word of an unspaced script is found anywhere (no word boundaries there), its Thai marks
    (dropped from the indexed form) allowed between its characters."""
    return f"[{THAI_MARKS}]*".join(re.escape(c) for c in word)


def _pattern(words: set[str]) -> re.Pattern[str] | None:
    """One regex for the matched words as they may appear in the original text: the word itself,
    or, for an indexed "...s", the possessive it was folded from ("dogs" <- "dog's")."""
    alts: list[str] = []
    unspaced: list[str] = []
    for w in sorted(words, key=len, reverse=True):
        if is_unspaced(w):
            unspaced.append(_word_pattern(w))
            continue
        alts.append(re.escape(w))
        if len(w) > 1 and w.endswith("s"):
            alts.append(re.escape(w[:-1]) + "['’‘`]s")
    parts = ([r"(?<!\w)(?:" + "|".join(alts) + r")(?!\w)"] if alts else []) + unspaced
    if not parts:
        return None
    return re.compile("|".join(parts), re.IGNORECASE)


def _mark(text: str, pattern: re.Pattern[str] | None) -> str:
    return text if pattern is None else pattern.sub(lambda m: MARK_START + m.group() + MARK_END, text)


def mark(text: str, words: set[str]) -> str:
    """The whole text with every occurrence of a matched word marked."""
    return _mark(_unmarked(text), _pattern(words))


def snippet(text: str, words: set[str], width: int = SNIPPET_CHARS) -> str:
    """A window of about `width` characters of the text (whitespace collapsed) around its first
    matched word, cut at spaces, with "…" where it was cut, the matched words marked."""
    raw = _unmarked(text)
    pattern = _pattern(words)
    hit = pattern.search(raw) if pattern is not None else None
    # only a region around the first match is flattened (a turn may be 200k characters)
    lo = max(0, (hit.start() if hit else 0) - 4 * width)
    hi = min(len(raw), lo + 12 * width)
    flat = " ".join(raw[lo:hi].split())
    cut_before, cut_after = lo > 0, hi < len(raw)
    found = pattern.search(flat) if pattern is not None else None
    first = found.start() if found else 0
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
    cut_before = cut_before or start > 0
    cut_after = cut_after or end < len(flat)
    return ("…" if cut_before else "") + _mark(flat[start:end], pattern) + ("…" if cut_after else "")


def _unmarked(text: str) -> str:
    """The text without either mark (str.replace: no per-character work when there is none)."""
    return text.replace(MARK_START, "").replace(MARK_END, "")


def _in(n: int) -> str:
    return ",".join("?" * n)


async def add_snippets(store: Store, match: str, results: Iterable[dict[str, Any]]) -> None:
    """Give every result of one MATCH string its `snippet` and `title_marked` (in place).
    Facts by id; documents by their best chunk (`id` + `chunk`, as search_chunks answers)."""
    results = list(results)
    facts = {r["id"]: r for r in results if r.get("kind") != "document"}
    docs = {(r["id"], r.get("chunk")): r for r in results if r.get("kind") == "document"}
    if facts and match:
        sql = _FACT_HIGHLIGHTS.format(marks=_in(len(facts)))
        for row in await store.fetchall(sql, [match, *facts]):
            words = matched_words(row["h_title"], row["h_body"])
            hit = facts[row["id"]]
            hit["snippet"] = snippet(row["text"], words)
            hit["title_marked"] = mark(row["title"], words)
    if docs and match:
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
        r.setdefault("title_marked", _unmarked(str(r.get("title") or "")))
