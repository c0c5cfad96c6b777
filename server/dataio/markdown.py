"""Markdown files of the export, one per conversation (server.render.conversation, the one
conversation renderer), per page's notes and clips, per library document; each with YAML front
matter (url, site, title, kind, dates). Pure functions: an item
(schema.EXPORT shape) in, (relative path, text) out. The same store gives the same bytes."""

from __future__ import annotations

import re
from typing import Any

from server import ages
from server.dataio.slugs import file_name, safe_component
from server.render import conversation as render_conversation
from server.render.conversation import front_matter
from server.urls import host_of


def when(epoch: float | None, granularity: str = "instant") -> str | None:
    """An instant as ISO-8601 UTC; a day-granular time as its (local) date only (server.ages.iso:
    None for a time out of range, never an error)."""
    return None if epoch is None else ages.iso(epoch, granularity)


def conversation(item: dict[str, Any]) -> tuple[str, str]:
    """A conversation's file: the one renderer (server.render.conversation)."""
    return render_conversation.conversation(item)


def page_notes(url: str, facts: list[dict[str, Any]]) -> tuple[str, str]:
    """Every note and clip of one page, oldest first."""
    facts = sorted(facts, key=lambda f: (f["valid_at"], f["kind"], f["text"]))
    title = next((f["title"] for f in reversed(facts) if f["title"]), "")
    host = host_of(url)
    head = front_matter(
        {
            "kind": "page-notes",
            "url": url,
            "site": host,
            "title": title,
            "first": when(facts[0]["valid_at"], facts[0]["granularity"]),
            "last": when(facts[-1]["valid_at"], facts[-1]["granularity"]),
            "notes": sum(1 for f in facts if f["kind"] == "note"),
            "clips": sum(1 for f in facts if f["kind"] == "clip"),
        }
    )
    body = [f"# {title or url}\n"]
    for f in facts:
        label = ("Note" if f["kind"] == "note" else "Clip") + (f" (via {f['via']})" if f.get("via") else "")
        text = f["text"].rstrip()
        if f["kind"] == "clip":
            text = "\n".join("> " + line for line in text.splitlines())
        body.append(f"## {label} · {when(f['valid_at'], f['granularity']) or ages.UNKNOWN}\n\n{text}\n")
    return f"notes/{safe_component(host)}/{file_name(title, url)}", head + "\n" + "\n".join(body)


def document(item: dict[str, Any]) -> tuple[str, str]:
    host = host_of(item["url"])
    head = front_matter(
        {
            "kind": "document",
            "url": item["url"],
            "site": host,
            "title": item["title"],
            "saved": when(item["created_at"]),
            "updated": when(item["updated_at"]),
            "author": item.get("author"),
            "published": item.get("published"),
            "canonical_url": item.get("canonical_url"),
        }
    )
    body = without_title(item.get("markdown") or item["text"], item["title"])
    return (
        f"library/{safe_component(host)}/{file_name(item['title'], item['url'])}",
        head + "\n" + f"# {item['title'] or item['url']}\n\n{body}\n",
    )


def without_title(markdown: str, title: str | None) -> str:
    """A saved page's Markdown under a title heading of its own: the page's first heading (# or
    ##) dropped when it is that title, so the title is said once. The panel's reader runs the same
    rule (extension/shared/text.js withoutTitle) on the shared fixtures/title-heading-cases.json."""
    body = markdown.strip()
    first, _, rest = body.partition("\n")
    heading = re.match(r"#{1,2}\s+(.*?)\s*#*$", first)
    if heading and title and _norm(heading.group(1)) == _norm(title):
        return rest.strip()
    return body


def _norm(text: str) -> str:
    return " ".join(text.split()).lower()  # lower(), as JavaScript's toLowerCase
