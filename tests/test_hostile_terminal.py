"""Stored text is whatever a page held: `wherefrom search` prints it without the characters a
terminal acts on (ESC sequences, C1 controls such as 8-bit CSI, carriage returns, bidi
overrides), in its text and its --json output; what is stored is kept as it was."""

from __future__ import annotations

import json

from server.settings import Settings
from tests.conftest import Api
from tests.dataio.test_dataio_import import wherefrom

TITLE = "Walnut\x1b]0;owned\x07 groves\x1b[2J\r\x9b31m\u202eevil"
TEXT = "walnut note\x1b[1A\x1b[Kreplaced line"
CONTROLS = ("\x1b", "\x07", "\x9b", "\r", "\u202e")


async def test_search_output_carries_no_terminal_controls(api: Api, settings: Settings) -> None:
    status, body = await api.post("/api/notes", {"url": "https://example.com/w", "title": TITLE, "text": TEXT})
    assert status == 201, body
    row = await api.store.fetchone("SELECT title, text FROM facts")
    assert row is not None and (row["title"], row["text"]) == (TITLE, TEXT)  # stored as given
    code, out, err = await wherefrom(settings, "search", "walnut")
    assert code == 0, err
    assert "groves" in out and "replaced line" in out  # positive control: the item is printed
    assert not [c for c in CONTROLS if c in out], repr(out)
    code, out, err = await wherefrom(settings, "search", "walnut", "--json")
    assert code == 0, err
    assert not [c for c in CONTROLS if c in out], repr(out)
    printed = json.loads(out)["results"][0]
    assert "\u202e" in printed["title"] and "\x9b" in printed["title"]  # escaped on screen, intact as data
