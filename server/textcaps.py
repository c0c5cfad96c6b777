"""Text caps count characters (code points) and never split one.

Python strings are sequences of code points, so slicing never splits a UTF-8 sequence; what
remains to guard is what a reader sees as one character: a surrogate pair arriving as two lone
surrogates, a base and its marks (é as e + U+0301, variation selectors, skin tones, emoji tags),
a zero-width-joiner sequence, a flag (a pair of regional indicators), conjoining Hangul jamo,
CR LF. `is_boundary` is that rule for every cut (caps here, chunks in server/library/chunking.py);
extension/shared/text.js applies the same rule; both run fixtures/cap-cases.json.
"""

from __future__ import annotations

import re
import unicodedata

ELLIPSIS = "…"


def cap(text: str, limit: int, *, ellipsis: bool = False) -> str:
    """At most `limit` characters of `text`, cut on a character boundary."""
    if limit < 0:
        raise ValueError("limit must be >= 0")
    if len(text) <= limit:
        return text
    cut = limit - 1 if ellipsis and limit > 0 else limit
    cut = safe_boundary(text, cut, floor=0)
    return text[:cut] + (ELLIPSIS if ellipsis and limit > 0 else "")


def safe_boundary(text: str, pos: int, *, floor: int = 1) -> int:
    """The nearest position at or before `pos` (not below `floor`) that does not split a grapheme."""
    p = pos
    while p > floor and not is_boundary(text, p):
        p -= 1
    return p if is_boundary(text, p) else pos


def is_boundary(text: str, p: int) -> bool:
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
        or 0xFE00 <= cp <= 0xFE0F  # variation selectors
        or 0xE0100 <= cp <= 0xE01EF  # variation selectors supplement
        or 0x1F3FB <= cp <= 0x1F3FF  # emoji skin-tone modifiers
        or 0xE0020 <= cp <= 0xE007F  # emoji tag sequences (subdivision flags)
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


_FENCE_LINE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


def open_fence(markdown: str) -> str | None:
    """The fence (``` or ~~~ run) a Markdown text leaves open at its end, or None."""
    m = _FENCE_LINE.match(open_fence_line(markdown) or "")
    return m.group(1) if m else None


def fence_run(line: str) -> str | None:
    """The fence a line opens or closes (its ``` or ~~~ run), or None: not a fence line."""
    m = _FENCE_LINE.match(line)
    return m.group(1) if m else None


def closes_fence(line: str, fence: str) -> bool:
    """Whether `line` closes a code block opened by `fence`: a run of the same character, at
    least as long, and nothing after it."""
    run = fence_run(line)
    return run is not None and run[0] == fence[0] and len(run) >= len(fence) and not line.strip()[len(run) :].strip()


def open_fence_line(markdown: str) -> str | None:
    """The line that opened the fence a Markdown text leaves open at its end (```python), or
    None: what reopens a code block continued after a cut."""
    opened: str | None = None
    fence = ""
    for line in markdown.split("\n"):
        run = fence_run(line)
        if run is None:
            continue
        if opened is None:
            opened, fence = line, run
        elif closes_fence(line, fence):
            opened = None
    return opened


def cap_markdown(markdown: str, limit: int) -> str:
    """At most `limit` characters of Markdown, cut by `cap`; a cut inside a code fence closes it
    (the closing line counts in the limit), so what is kept never swallows what follows it."""
    if len(markdown) <= limit:
        return markdown
    cut = cap(markdown, limit)
    fence = open_fence(cut)
    if fence is None:
        return cut
    head = cap(markdown, max(0, limit - len(fence) - 1))
    fence = open_fence(head)
    if fence is None:  # the shorter cut ends before the fence opened
        return head
    return head + ("" if head.endswith("\n") else "\n") + fence
