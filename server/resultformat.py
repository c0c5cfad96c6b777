"""How a stored item is shown outside the panel (`wherefrom search`, the MCP tools): always with
its provenance: where it came from (url, site), what it is (kind, title) and how old it is.

One formatter: the CLI and the agent tools print results through `item_line` / `results_text`,
and `--json` / structured answers through `provenance`. What goes to a terminal passes
`for_terminal` / `json_for_terminal`: stored text is whatever a page held, and an escape
sequence in a title must not move the cursor, retitle the window or hide the lines around it.
"""

from __future__ import annotations

import re
from typing import Any

from server.textcaps import cap

# C0 controls but tab and newline, DEL, C1 controls (8-bit CSI, OSC...), and the bidi overrides
# and isolates that reorder what a line shows
_TERMINAL_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_C1 = re.compile("[\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def for_terminal(text: str) -> str:
    """`text` without the characters a terminal acts on (escape sequences are dropped whole:
    their ESC goes, what follows prints as harmless text)."""
    return _TERMINAL_CONTROLS.sub("", text)


def json_for_terminal(text: str) -> str:
    """JSON text (json.dumps already escapes C0) with C1 and bidi controls escaped as \\uXXXX."""
    return _C1.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


SNIPPET_CHARS = 240
ANSWER_CHARS = 20_000  # one tool answer or printed page, at most (an agent's context is not free)


def provenance(item: dict[str, Any]) -> dict[str, Any]:
    """The fields every shown result carries (the server's answer, renamed for readers)."""
    age = item.get("age") or {}
    out: dict[str, Any] = {
        "kind": item.get("kind", ""),
        "id": item.get("id"),
        "url": item.get("source_url", ""),
        "site": item.get("source_host", ""),
        "title": item.get("title") or item.get("source_ref") or "",
        "age": age.get("label", "") if isinstance(age, dict) else str(age),
        "date": age.get("at") if isinstance(age, dict) else None,  # ISO-8601 beside the label
        "snippet": cap(" ".join(str(item.get("text", "")).split()), SNIPPET_CHARS, ellipsis=True),
    }
    for extra in ("role", "conversation_id", "chunk", "via", "why", "strength"):
        if extra in item:
            out[extra] = item[extra]
    return out


def item_line(n: int, item: dict[str, Any]) -> str:
    """`n. [kind] title — site, age` then the url and the snippet, indented."""
    p = provenance(item)
    kind = p["kind"] + (f" ({p['role']})" if p.get("role") else "") + (f" via {p['via']}" if p.get("via") else "")
    when = f"{p['age']} ({p['date']})" if p.get("date") else p["age"] or "age unknown"
    why = f"  ({p['why']} {p['strength']:.2f})" if p.get("why") and isinstance(p.get("strength"), float) else ""
    head = f"{n}. [{kind}] {p['title'] or '(untitled)'} — {p['site']}, {when}{why}"
    ident = f"  id {p['id']}" if p["kind"] == "document" else ""
    return f"{head}\n   {p['url']}{ident}\n   {p['snippet']}"


def results_text(
    query: str, results: list[dict[str, Any]], meaning: dict[str, Any] | None = None, note: str | None = None
) -> str:
    """A search's answer as text (`wherefrom search`, MCP search_memory); `meaning`: the answer's
    own part on search by meaning, whose `hint` (server.meaning.building) follows the first line;
    `note`: the answer's verdict when no result is close (server.memory.ranking NOTE or UNJUDGED)."""
    hint = [str(meaning["hint"])] if meaning and meaning.get("hint") else []
    if not results:
        return "\n".join([f'No stored item matches "{query}". Try fewer or other words.', *hint])
    noun = "result" if len(results) == 1 else "results"
    head = f'{len(results)} {noun} for "{query}":'
    if note:  # the search's own verdict, given only when no result is close (server.memory.ranking)
        head = f'For "{query}", {note}'
    lines = [head, *hint, ""] + [item_line(n, item) for n, item in enumerate(results, 1)]
    return "\n".join(lines)


def cut(text: str, limit: int = ANSWER_CHARS) -> str:
    """`text` whole, or cut by the one cap rule (server.textcaps) to at most `limit` characters,
    ending with a line that says it was cut and how much is missing."""
    if len(text) <= limit:
        return text
    head = cap(text, max(0, limit - 100))
    return f"{head}…\n\n[cut: showing the first {len(head):,} of {len(text):,} characters]"
