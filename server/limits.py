"""The caps clients must know, in one place. The policy snapshot (GET /api/policy) carries them
as `limits`, and the extension cuts what it sends to these numbers instead of keeping copies."""

from __future__ import annotations

NOTE_CHARS = 20_000  # a note or a clip; more is refused 413
TURN_CHARS = 100_000  # one chat turn; more is refused 413
MARKDOWN_CHARS = 200_000  # one chat turn as Markdown; more is refused 413 (clients cut with cap_markdown)
TURNS = 2_000  # turns in one capture
PAGE_HTML_CHARS = 5_000_000  # "Add this page": the page's HTML
PAGE_TEXT_CHARS = 1_000_000  # "Add this page": the page's text
TITLE_CHARS = 2_000  # a page title as a client sends it (stored shorter, cut, never refused)
STORED_TITLE_CHARS = 500  # a title as stored, whoever gave it (a client, a page's <title>, a file)
STORED_META_CHARS = 300  # a page's author, site name, declared date or language as stored (cut)
SEARCH_RESULTS = 100  # the most results one search answers (the panel asks 20; `wherefrom search --limit`)
FORGET_CONFIRM_SECONDS = 8.0  # a forget confirmation's lifetime


def as_dict() -> dict[str, float]:
    return {
        "note_chars": NOTE_CHARS,
        "turn_chars": TURN_CHARS,
        "markdown_chars": MARKDOWN_CHARS,
        "turns": TURNS,
        "page_html_chars": PAGE_HTML_CHARS,
        "page_text_chars": PAGE_TEXT_CHARS,
        "title_chars": TITLE_CHARS,
        "forget_confirm_seconds": FORGET_CONFIRM_SECONDS,
    }
