"""The one conversation renderer: a stored conversation as one Markdown file. The export
(`wherefrom export`), MCP `get_conversation` and the panel's copy and save (through
GET /api/conversations/markdown) all use it; nothing else turns a conversation into Markdown.

  - each turn is its stored Markdown when there is one, else its text;
  - every code fence a turn opens is closed within that turn (a reply cut off mid-code never
    turns the turns after it into code), by the one fence rule (server.textcaps.open_fence);
  - YAML front matter a notes app reads: title, source (the page URL), site, id, created,
    updated, messages, versions, tags — each value a JSON scalar or a flow list (valid YAML);
  - the turns shown, in order; a turn with other versions says which one is shown
    ("version 2 of 3"); the others stay in the store and in the JSON export;
  - the file is named by server.dataio.slugs: the title's slug and the conversation's stable id.

Pure: an item in the export's shape (server.dataio.schema.CONVERSATION) in, text out; the same
item gives the same bytes.
"""

from __future__ import annotations

import json
from typing import Any

from server import ages
from server.dataio.slugs import file_name, safe_component, stable_id
from server.memory.versions import number
from server.textcaps import cap_markdown, open_fence
from server.urls import host_of

WHO = {"user": "User", "assistant": "Assistant", "system": "System", "tool": "Tool"}


def identity(item: dict[str, Any]) -> str:
    """What names a conversation for ever: its site and page URL (never its title)."""
    return f"{item['site']} {item['url']}"


def path(item: dict[str, Any]) -> str:
    """conversations/<site>/<title slug>-<stable id>.md"""
    site = item["site"] or host_of(item["url"])
    return f"conversations/{safe_component(site)}/{file_name(item['title'], identity(item))}"


def front_matter(fields: dict[str, Any]) -> str:
    """YAML: every value written as a JSON scalar or list (valid YAML), nulls left out."""
    lines = ["---"]
    for key, value in fields.items():
        if value is not None:
            lines.append(f"{key}: {json.dumps(value, ensure_ascii=False)}")
    lines.append("---")
    return "\n".join(lines) + "\n"


def turn_body(turn: dict[str, Any]) -> str:
    """A turn's Markdown (its text when none was kept), its open fence closed."""
    md = turn.get("markdown")
    body = (md if isinstance(md, str) and md.strip() else turn["text"]).rstrip()
    fence = open_fence(body)
    return body + "\n" + fence if fence else body


def shown_turns(item: dict[str, Any]) -> list[dict[str, Any]]:
    """The turns shown, in order, each {"row", "version", "versions", "others"}; turns without
    a place (an older export) are each their own, only version."""
    turns = item["turns"]
    if any(t.get("position") is None for t in turns):
        return [{"row": t, "version": 1, "versions": 1, "others": []} for t in turns if t.get("shown", True)]
    return number([{**t, "shown": t.get("shown", True)} for t in turns])


def heading(entry: dict[str, Any]) -> str:
    t = entry["row"]
    head = f"## {WHO.get(t['role'], t['role'].capitalize())} · {ages.iso(t['valid_at'], t['granularity'])}"
    if entry["versions"] > 1:
        head += f" · version {entry['version']} of {entry['versions']}"
    return head


def render(item: dict[str, Any]) -> str:
    """The whole file: front matter, title, the turns shown."""
    return str(page(item)["markdown"])


def page(item: dict[str, Any], start: int = 0, max_chars: int | None = None) -> dict[str, Any]:
    """The file, or with `max_chars` one page of it: the front matter and title always, then the
    turns shown from index `start` while they fit (at least one; a turn longer than the page is
    cut by cap_markdown, its fence closed). `next` is the index to continue from (None: done)."""
    shown = shown_turns(item)
    site = item["site"] or host_of(item["url"])
    first = shown[0]["row"] if shown else None
    last = shown[-1]["row"] if shown else None
    others = len(item["turns"]) - len(shown)
    head = front_matter(
        {
            "title": item["title"] or item["url"],
            "source": item["url"],
            "site": site,
            "id": stable_id(identity(item)),
            "kind": "conversation",
            "created": ages.iso(item["created_at"]) if item.get("created_at") is not None else None,
            "updated": ages.iso(last["valid_at"], last["granularity"]) if last else None,
            "first_message": ages.iso(first["valid_at"], first["granularity"]) if first else None,
            "messages": len(shown),
            "other_versions": others or None,
            "tags": ["wherefrom", "conversation", safe_component(site)],
        }
    )
    title = " ".join((item["title"] or item["url"]).split())
    text = head + "\n" + f"# {title}\n"
    n = max(0, start)
    while n < len(shown):
        block = f"\n{heading(shown[n])}\n\n{turn_body(shown[n]['row'])}\n"
        if max_chars is not None and len(text) + len(block) > max_chars:
            if n > start:
                break
            block = cap_markdown(block, max(200, max_chars - len(text))) + "\n"
        text += block
        n += 1
    return {
        "markdown": text,
        "file_name": path(item).rsplit("/", 1)[-1],
        "path": path(item),
        "turns": len(shown),
        "start": start,
        "next": n if n < len(shown) else None,
    }


def conversation(item: dict[str, Any]) -> tuple[str, str]:
    """(relative path, text) of the export's file for `item`."""
    return path(item), render(item)
