"""What a search says while search by meaning is still being built: the embedder's progress
(server.meaning.embedder `progress`) as the part of a search's answer the side panel, `wherefrom
search` and MCP's search_memory show (server.resultformat renders it as text, the panel as a hint).
One voice is named at a time, the first still at work: the static model (until it has read every
item, some are found by their words only), the second model (paraphrases are found less often
meanwhile), the third voice (items in other languages are found by their words meanwhile)."""

from __future__ import annotations

from typing import Any

_SAYS = {
    "static": ("Search by meaning is being built", "matches by words are complete"),
    "deep": ("Search by meaning is being sharpened", "every item is found meanwhile"),
    "third": (
        "Search by meaning across languages is being built",
        "items in other languages are found by their words meanwhile",
    ),
}


def building(progress: dict[str, Any]) -> tuple[str, int] | None:
    """(the voice still at work, its items to go) or None once every voice has read every item.
    The static model counts while it loads its index too; a voice that has read every item and
    is only taking its scale (server.meaning.scale) is not at work for the person."""
    if progress.get("state") in ("loading", "building"):
        return "static", int(progress.get("pending") or 0)
    for voice in ("deep", "third"):
        part = progress.get(voice)
        if isinstance(part, dict) and part.get("state") == "building" and int(part.get("pending") or 0) > 0:
            return voice, int(part["pending"])
    return None


def meaning_state(progress: dict[str, Any]) -> dict[str, Any]:
    """The `meaning` part of a search's answer: each voice's state and items to go, and while one
    is at work, `building` (which) and `hint` (the sentence to show)."""
    out: dict[str, Any] = {"state": progress["state"], "pending": progress["pending"]}
    for key in ("deep", "third"):
        voice = progress.get(key)
        if isinstance(voice, dict):
            out[key] = {"state": voice["state"], "pending": voice["pending"]}
    at_work = building(progress)
    if at_work is not None:
        voice, left = at_work
        doing, meanwhile = _SAYS[voice]
        out["building"] = voice
        out["hint"] = f"{doing}{f' ({left:,} items to go)' if left else ''}; {meanwhile}."
    return out


__all__ = ["building", "meaning_state"]
