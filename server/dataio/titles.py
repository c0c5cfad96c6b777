"""The title an imported chat gets when the service gave it none."""

from __future__ import annotations

from typing import Any

from server.textcaps import cap

TITLE_FROM_QUESTION_CHARS = 80
UNTITLED = ("", "new chat", "untitled")


def untitled_title(title: str, turns: list[dict[str, Any]]) -> str:
    """An untitled chat (no title, or the service's placeholder) is titled by its first question,
    on one line, cut by the one cap rule; a chat without a question keeps what it had."""
    if title.strip().lower() not in UNTITLED:
        return title
    question = next((t["text"] for t in turns if t["role"] == "user" and t.get("shown", True)), "")
    line = " ".join(question.split())
    return cap(line, TITLE_FROM_QUESTION_CHARS, ellipsis=True) if line else title
