"""The one result formatter: provenance on every line, and cuts by the one cap rule."""

from __future__ import annotations

from server.memory.ranking import NOTE, UNJUDGED
from server.resultformat import cut, item_line, provenance, results_text
from server.textcaps import is_boundary

ITEM = {
    "id": 7,
    "kind": "turn",
    "role": "user",
    "text": "Why   do my\ntomato leaves turn yellow?",
    "title": "Tomato blight",
    "source_url": "https://claude.ai/chat/4f1c",
    "source_host": "claude.ai",
    "source_ref": "Tomato blight",
    "age": {"label": "3d", "granularity": "instant", "at": "2026-11-28T10:00:00Z"},
    "conversation_id": 2,
}


def test_provenance_names_url_site_kind_title_and_age() -> None:
    assert provenance(ITEM) == {
        "kind": "turn",
        "id": 7,
        "url": "https://claude.ai/chat/4f1c",
        "site": "claude.ai",
        "title": "Tomato blight",
        "age": "3d",
        "date": "2026-11-28T10:00:00Z",
        "snippet": "Why do my tomato leaves turn yellow?",
        "role": "user",
        "conversation_id": 2,
    }
    assert item_line(1, ITEM) == (
        "1. [turn (user)] Tomato blight — claude.ai, 3d (2026-11-28T10:00:00Z)\n"
        "   https://claude.ai/chat/4f1c\n   Why do my tomato leaves turn yellow?"
    )


def test_no_results_says_what_was_searched() -> None:
    assert results_text("quinces", []) == 'No stored item matches "quinces". Try fewer or other words.'
    assert results_text("q", [ITEM]).startswith('1 result for "q":\n\n1. [turn (user)]')
    far = [{**ITEM, "close": False}]
    assert results_text("q", far, note=NOTE).startswith(f'For "q", {NOTE}\n\n1. [turn (user)]')
    assert results_text("q", far, note=UNJUDGED).startswith(f'For "q", {UNJUDGED}\n')


def test_cut_keeps_short_text_and_never_splits_a_character() -> None:
    assert cut("short", 100) == "short"
    for filler in ("a", "é", "e\u0301", "🇫🇷", "👩\u200d💻"):
        text = filler * 500
        out = cut(text, 300)
        assert len(out) <= 300 and out.endswith(f"of {len(text):,} characters]")
        shown = int(out.rsplit("[cut: showing the first ", 1)[1].split(" ")[0].replace(",", ""))
        assert text.startswith(out[:shown]) and is_boundary(text, shown), filler
