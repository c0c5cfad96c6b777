"""Text caps count characters (code points) and never split one.

Python strings are sequences of code points, so slicing never splits a UTF-8 sequence;
what remains to guard is a surrogate pair arriving as two lone surrogates, and a
base character separated from its combining marks (é as e + U+0301).
"""

from __future__ import annotations

import unicodedata

ELLIPSIS = "…"


def cap(text: str, limit: int, *, ellipsis: bool = False) -> str:
    """At most `limit` characters of `text`, cut on a character boundary."""
    if limit < 0:
        raise ValueError("limit must be >= 0")
    if len(text) <= limit:
        return text
    room = limit - 1 if ellipsis and limit > 0 else limit
    cut = room
    # do not leave a high surrogate without its partner
    if cut > 0 and "\ud800" <= text[cut - 1] <= "\udbff":
        cut -= 1
    # do not strip combining marks from their base character
    while cut > 0 and unicodedata.combining(text[cut]):
        cut -= 1
    return text[:cut] + (ELLIPSIS if ellipsis and limit > 0 else "")
