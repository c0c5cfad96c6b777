"""The one file-name rule of the Markdown export (vectors: fixtures/slug-cases.json).

A name must be safe on Windows, macOS and Linux, the same on every run, and never shared by two
items:
  - characters Windows refuses (<>:"/\\|?* and controls) and any other non-word character
    become "-", runs of "-" collapse; text is NFC (macOS would otherwise store another form)
    and lower-cased (Windows and macOS compare names case-insensitively);
  - trailing dots and spaces are dropped (Windows drops them silently);
  - a reserved device name (CON, PRN, AUX, NUL, COM0-9, LPT0-9, also before an extension:
    "nul.md") gets a leading "_";
  - a component is at most 200 UTF-8 bytes (every file system allows 255), cut on a character;
  - a file name is the title's slug plus 12 hex digits of SHA-256 of the item's identity (its
    page URL, and site for a conversation), so it is stable and two items differ.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata

MAX_BYTES = 200
SLUG_CHARS = 60
HASH_CHARS = 12
_RESERVED = re.compile(r"^(con|prn|aux|nul|com[0-9¹²³]|lpt[0-9¹²³])(\..*)?$", re.I)
_UNSAFE = re.compile(r'[<>:"/\\|?*\x00-\x1f\x7f]')
_NON_WORD = re.compile(r"[^\w.]+")


def safe_component(name: str) -> str:
    """Any text as one path component that every common file system accepts."""
    s = unicodedata.normalize("NFC", name).lower()
    s = _UNSAFE.sub("-", s)
    s = _NON_WORD.sub("-", s)
    s = re.sub(r"-{2,}", "-", s).strip("-")
    s = _cut_bytes(s, MAX_BYTES).rstrip(". -")
    if not s or s.strip(".") == "":
        s = "_"
    if _RESERVED.match(s):
        s = "_" + s
    return s


def stable_id(identity: str) -> str:
    """An item's stable id: 12 hex digits of SHA-256 of its identity (it never changes with
    the title, so a renamed item keeps it; the export's front matter carries it as `id`)."""
    return hashlib.sha256(identity.encode("utf-8")).hexdigest()[:HASH_CHARS]


def file_name(title: str, identity: str, ext: str = ".md") -> str:
    """`<slug of title>-<stable id><ext>`; the slug is "untitled" when nothing is left."""
    slug = safe_component(title).replace(".", "-").strip("-_")[:SLUG_CHARS].rstrip("-") or "untitled"
    return safe_component(f"{slug}-{stable_id(identity)}") + ext


def _cut_bytes(s: str, limit: int) -> str:
    data = s.encode("utf-8")
    if len(data) <= limit:
        return s
    return data[:limit].decode("utf-8", errors="ignore")
