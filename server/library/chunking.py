"""Document-mode chunking: THE owner of the chunk-size decision.

Every caller that needs a document's chunks, or only their number, calls `chunk_text`
(or `count_chunks`, which is the same call). Memory items (notes, clips, turns) are never
chunked; chunks are never facts (they live only in the library's tables).

The rule:
- paragraphs (non-empty lines) are packed, in order, into chunks of at most MAX_CHARS;
- a chunk is closed early only when it already holds MIN_CHARS or more; a shorter chunk is
  filled with the next paragraph's sentences instead;
- a paragraph longer than MAX_CHARS is split at sentence ends, a sentence longer than that
  at spaces, and a run of text without spaces (CJK, a long token) at a grapheme boundary:
  never between a base character and its combining marks, inside an emoji ZWJ sequence,
  before a variation selector or skin-tone modifier, between the two halves of a flag, or
  between the halves of a surrogate pair;
- a short last chunk is merged into the one before it when both fit in MAX_CHARS.
Whitespace inside a chunk is kept as written; paragraphs are joined with a newline.
"""

from __future__ import annotations

import re

from server.textcaps import safe_boundary

MIN_CHARS = 1000
MAX_CHARS = 2000

_SENTENCE_END = re.compile(r"(?<=[.!?…])[\"'”’)\]]*\s+|(?<=[。！？；])\s*")
_WORD = re.compile(r"\S+\s*")


def chunk_text(text: str, *, min_chars: int = MIN_CHARS, max_chars: int = MAX_CHARS) -> list[str]:
    """Split a document's text into paragraph-aligned chunks (see the module docstring)."""
    if min_chars < 1 or max_chars < min_chars:
        raise ValueError("need 1 <= min_chars <= max_chars")
    chunks: list[str] = []
    cur = ""

    def emit() -> None:
        nonlocal cur
        piece = cur.strip()
        if piece:
            chunks.append(piece)
        cur = ""

    for para in _paragraphs(text):
        sep = "\n" if cur else ""
        if len(cur) + len(sep) + len(para) <= max_chars:
            cur += sep + para
            continue
        if len(para) <= max_chars and len(cur) >= min_chars:
            emit()
            cur = para
            continue
        # the paragraph is too long, or the chunk so far too short: go in by sentences
        for unit in _units(para, max_chars):
            if len(cur) + len(sep) + len(unit.rstrip()) <= max_chars:
                cur += sep + unit
            else:
                emit()
                cur = unit
            sep = ""
        cur = cur.rstrip()
    emit()
    if len(chunks) >= 2 and len(chunks[-1]) < min_chars // 2:
        merged = chunks[-2] + "\n" + chunks[-1]
        if len(merged) <= max_chars:
            chunks[-2:] = [merged]
    return chunks


def count_chunks(text: str) -> int:
    """How many chunks `text` makes (a preview); the same decision as chunk_text."""
    return len(chunk_text(text))


def _paragraphs(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


def _units(para: str, max_chars: int) -> list[str]:
    """Sentences of `para` (each keeps its trailing space); longer ones as words or hard cuts."""
    out: list[str] = []
    for sentence in _split_keep(para, _SENTENCE_END):
        if len(sentence.rstrip()) <= max_chars:
            out.append(sentence)
            continue
        for word in _WORD.findall(sentence):
            if len(word.rstrip()) <= max_chars:
                out.append(word)
            else:
                out.extend(_hard_cut(word, max_chars))
    return out


def _split_keep(text: str, pattern: re.Pattern[str]) -> list[str]:
    """Split after each match, keeping every character: "".join(result) == text."""
    pieces, start = [], 0
    for m in pattern.finditer(text):
        if m.end() > start:
            pieces.append(text[start : m.end()])
            start = m.end()
    if start < len(text):
        pieces.append(text[start:])
    return pieces


def _hard_cut(text: str, max_chars: int) -> list[str]:
    """Cut a run without spaces into pieces of at most max_chars, on grapheme boundaries."""
    pieces, start = [], 0
    while len(text) - start > max_chars:
        cut = safe_boundary(text, start + max_chars, floor=start + 1)
        pieces.append(text[start:cut])
        start = cut
    pieces.append(text[start:])
    return pieces
