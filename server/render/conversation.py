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
from server.dataio.titles import untitled_title
from server.memory.versions import number
from server.textcaps import open_fence, open_fence_line, safe_boundary
from server.urls import host_of

WHO = {"user": "User", "assistant": "Assistant", "system": "System", "tool": "Tool"}


def identity(item: dict[str, Any]) -> str:
    """What names a conversation for ever: its site and page URL (never its title)."""
    return f"{item['site']} {item['url']}"


def path(item: dict[str, Any]) -> str:
    """conversations/<site>/<title slug>-<stable id>.md"""
    site = item["site"] or host_of(item["url"])
    return f"conversations/{safe_component(site)}/{file_name(title_of(item), identity(item))}"


def title_of(item: dict[str, Any]) -> str:
    """The title shown: the stored one, or for a chat without one (no title, a placeholder such as
    "New chat", or the site's own name, the tab's title before the site named the chat) its first
    question, by the import's rule (server.dataio.titles); "" when it has neither."""
    title = item["title"] or ""
    site = item["site"] or host_of(item["url"]).split(".")[0]
    placeholder = title.strip().casefold() in (site.casefold(), host_of(item["url"]).casefold())
    rows = [t for t in item["turns"] if t.get("shown", True)]
    return untitled_title("" if placeholder else title, rows)


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


class OffsetPastTurn(ValueError):
    """A page asked to continue a turn past its end (an `offset` no page of it gave)."""


def page(item: dict[str, Any], start: int = 0, max_chars: int | None = None, offset: int = 0) -> dict[str, Any]:
    """The file, or with `max_chars` one page of it: the front matter and title always, then the
    turns shown from index `start` while they fit (at least part of one). A turn longer than
    the page is never cut silently: the page holds its first part (a code block cut is closed)
    and `next`/`offset` say where it continues (`offset`: characters into that turn's
    Markdown; its next page reopens the code block and says "continued"). `next` None: done."""
    shown = shown_turns(item)
    site = item["site"] or host_of(item["url"])
    first = shown[0]["row"] if shown else None
    last = shown[-1]["row"] if shown else None
    others = len(item["turns"]) - len(shown)
    head = front_matter(
        {
            "title": title_of(item) or item["url"],
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
    if offset > 0 and 0 <= start < len(shown) and offset >= len(turn_body(shown[start]["row"])):
        raise OffsetPastTurn(
            f"offset {offset} is past the end of turn {start} ({len(turn_body(shown[start]['row']))} characters)"
        )
    title = " ".join((title_of(item) or item["url"]).split())
    text = head + "\n" + f"# {title}\n"
    n = max(0, start)
    cut_at: int | None = None
    while n < len(shown):
        body = turn_body(shown[n]["row"])
        skip = min(max(0, offset), len(body)) if n == start else 0
        top = f"\n{heading(shown[n])}{' · continued' if skip else ''}\n\n"
        block = top + _part(body, skip, len(body)) + "\n"
        if max_chars is not None and len(text) + len(block) > max_chars:
            if n > start:
                break
            cut_at = _cut_point(body, skip, max(200, max_chars - len(text) - len(top) - 2 * _fence_room(body)))
            text += top + _part(body, skip, cut_at) + "\n"
            break
        text += block
        n += 1
    return {
        "markdown": text,
        "file_name": path(item).rsplit("/", 1)[-1],
        "path": path(item),
        "turns": len(shown),
        "start": start,
        "next": n if n < len(shown) else None,
        "offset": cut_at,
    }


def _part(body: str, begin: int, end: int) -> str:
    """body[begin:end] as Markdown that stands alone: a code block it starts inside is reopened
    with its opening line, one it leaves open is closed."""
    part = body[begin:end]
    opener = open_fence_line(body[:begin]) if begin else None
    if opener is not None:
        part = opener + "\n" + part
    fence = open_fence(part)
    return part + ("" if part.endswith("\n") else "\n") + fence if fence else part


def _fence_room(body: str) -> int:
    """Room kept for reopening and closing a code block around a cut (its longest fence line)."""
    return max((len(line) + 1 for line in body.split("\n") if line.lstrip().startswith(("```", "~~~"))), default=0)


def _cut_point(body: str, begin: int, room: int) -> int:
    """Where a part of `body` from `begin` ends within `room` characters: after the last line
    break in its second half, else the last space, else a grapheme boundary; always past begin."""
    limit = begin + room
    if limit >= len(body):
        return len(body)
    for sep in ("\n", " "):
        at = body.rfind(sep, begin + room // 2, limit)
        if at > begin:
            return at + 1
    return max(begin + 1, safe_boundary(body, limit))


def conversation(item: dict[str, Any]) -> tuple[str, str]:
    """(relative path, text) of the export's file for `item`."""
    return path(item), render(item)
