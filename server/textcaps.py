"""Text caps count characters (code points) and never split one.

Python strings are sequences of code points, so slicing never splits a UTF-8 sequence; what
remains to guard is a surrogate pair arriving as two lone surrogates, a base character
separated from its marks (é as e + U+0301, a variation selector), and an emoji sequence cut
right after a zero-width joiner. extension/shared/text.js applies the same rule; both run
fixtures/cap-cases.json.
"""

from __future__ import annotations

import unicodedata

ELLIPSIS = "…"
ZWJ = "\u200d"


def _joined_to_previous(ch: str) -> bool:
    return unicodedata.category(ch).startswith("M")


def cap(text: str, limit: int, *, ellipsis: bool = False) -> str:
    """At most `limit` characters of `text`, cut on a character boundary."""
    if limit < 0:
        raise ValueError("limit must be >= 0")
    if len(text) <= limit:
        return text
    cut = limit - 1 if ellipsis and limit > 0 else limit
    # do not leave a high surrogate without its partner
    if cut > 0 and "\ud800" <= text[cut - 1] <= "\udbff":
        cut -= 1
    # do not strip marks from their base, nor cut an emoji sequence at its joiner
    while cut > 0 and (_joined_to_previous(text[cut]) or ZWJ in (text[cut], text[cut - 1])):
        cut -= 1
    return text[:cut] + (ELLIPSIS if ellipsis and limit > 0 else "")
