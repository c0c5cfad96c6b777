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
import unicodedata

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
            pieces.append(text[start:m.end()])
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


def safe_boundary(text: str, pos: int, *, floor: int = 1) -> int:
    """The nearest position at or before `pos` (not below `floor`) that does not split a grapheme."""
    p = pos
    while p > floor and not _is_boundary(text, p):
        p -= 1
    return p if _is_boundary(text, p) else pos


def _is_boundary(text: str, p: int) -> bool:
    if p <= 0 or p >= len(text):
        return True
    before, after = text[p - 1], text[p]
    if "\ud800" <= before <= "\udbff" and "\udc00" <= after <= "\udfff":
        return False
    if before == "\r" and after == "\n":
        return False
    if before == "\u200d" or _extends(after):
        return False
    if _is_regional(after) and _is_regional(before):
        run = 0
        i = p - 1
        while i >= 0 and _is_regional(text[i]):
            run += 1
            i -= 1
        return run % 2 == 0
    return not _hangul_joins(before, after)


def _extends(ch: str) -> bool:
    cp = ord(ch)
    return (
        unicodedata.category(ch) in ("Mn", "Me", "Mc")
        or ch in "\u200d\u200c"
        or 0xFE00 <= cp <= 0xFE0F          # variation selectors
        or 0xE0100 <= cp <= 0xE01EF        # variation selectors supplement
        or 0x1F3FB <= cp <= 0x1F3FF        # emoji skin-tone modifiers
        or 0xE0020 <= cp <= 0xE007F        # emoji tag sequences (subdivision flags)
    )


def _is_regional(ch: str) -> bool:
    return 0x1F1E6 <= ord(ch) <= 0x1F1FF


def _hangul_joins(before: str, after: str) -> bool:
    """Conjoining jamo: L+L/V, V+V/T, T+T stay together."""
    b, a = ord(before), ord(after)
    lead = 0x1100 <= b <= 0x115F
    vowel = 0x1160 <= b <= 0x11A7
    trail = 0x11A8 <= b <= 0x11FF
    a_lead, a_vowel, a_trail = 0x1100 <= a <= 0x115F, 0x1160 <= a <= 0x11A7, 0x11A8 <= a <= 0x11FF
    return (lead and (a_lead or a_vowel)) or (vowel and (a_vowel or a_trail)) or (trail and a_trail)
