"""`wherefrom mcp`: the memory as a Model Context Protocol server over stdio, for agents
(Claude Desktop / Claude Code, Cursor, any MCP client).

It holds no data and no rules of its own: every tool is one request to the RUNNING Wherefrom
server (server.commands.client, with the token), so the server's governance and visibility rule
decide what an agent may read or write, exactly as for the side panel. Answers carry provenance
(server.resultformat) and are cut by the one cap rule, saying so. Read-only unless started with
--allow-writes, which adds `add_note`.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Callable
from typing import Annotated, Any

from pydantic import Field

from server.commands.client import Client, ServerUnavailable, error_message
from server.dataio.markdown import without_title
from server.resultformat import ANSWER_CHARS, cut, item_line, results_text

NAME = "wherefrom"
INSTRUCTIONS = (
    "Wherefrom is the person's local memory of the web: notes and clips they kept about pages, "
    "their captured AI-chat conversations, and documents saved to their library. Every item says "
    "where it came from (url, site) and how old it is; cite the url when you use one. Sites the "
    "person has turned off and things they have forgotten are never shown (a forgotten site's saved "
    "library pages only when the person chose to forget them too; otherwise they stay in the library)."
)
TIER_TITLES = {
    "exact": "On this page",
    "site": "Elsewhere on this site",
    "related": "Related pages",
    "documents": "Library documents",
}

log = logging.getLogger("wherefrom.mcp")


def add_commands(sub: Any, common: Callable[[argparse.ArgumentParser], None]) -> None:
    p = sub.add_parser("mcp", help="serve the memory to AI agents over MCP (stdio); needs the running server")
    common(p)
    p.add_argument(
        "--allow-writes",
        action="store_true",
        help="also offer add_note (agents may then write notes; read-only without it)",
    )
    p.set_defaults(func=cmd_mcp)


class ToolFailed(Exception):
    """A tool's clear refusal (server down, not paired, not found, site mode)."""


class Tools:
    """The tools, each one request to the running server."""

    def __init__(self, client: Client) -> None:
        self.client = client

    def _get(self, path: str, **query: Any) -> Any:
        try:
            status, body = self.client.get(path, **query)
        except ServerUnavailable as err:
            raise ToolFailed(str(err)) from None
        if status != 200:
            raise ToolFailed(error_message(status, body))
        return body

    def search_memory(self, query: str, limit: int = 10) -> str:
        body = self._get("/api/search", q=query, limit=limit)
        return cut(results_text(query, body.get("results", []), body.get("meaning"), body.get("note")))

    def page_memory(self, url: str) -> str:
        body = self._get("/api/page-match", url=url)
        mode = body.get("mode", "")
        tiers: dict[str, list[dict[str, Any]]] = body.get("tiers", {})
        lines = [f"Memory about {url} (site mode: {mode})"]
        if mode == "off":
            lines.append("This site is turned off by the person: nothing from it is stored or shown.")
        n = 0
        for key, title in TIER_TITLES.items():
            items = tiers.get(key, [])
            if not items:
                continue
            lines += ["", f"## {title} ({len(items)})"]
            for item in items:
                n += 1
                lines.append(item_line(n, item))
        if n == 0 and mode != "off":
            lines.append("Nothing is remembered about this page or its site.")
        return cut("\n".join(lines))

    def get_conversation(self, url: str, start: int = 0, offset: int = 0) -> str:
        """The server's one conversation renderer (title, site, url, dates, each turn's role,
        date and Markdown, which version is shown), one page of it from turn `start` (and
        `offset` characters into it); a long chat or a long turn ends with how to continue,
        never cut silently."""
        try:
            status, body = self.client.get(
                "/api/conversations/markdown", url=url, start=start, offset=offset, max_chars=ANSWER_CHARS
            )
        except ServerUnavailable as err:
            raise ToolFailed(str(err)) from None
        if status == 404:
            return f"No captured conversation is stored for {url}."
        if status != 200:
            raise ToolFailed(error_message(status, body))
        text = str(body.get("markdown", ""))
        nxt, cut, total = body.get("next"), body.get("offset"), body["turns"]
        again = f"call get_conversation with url={body.get('url', url)!r}"
        if nxt is not None and cut is not None:
            text += (
                f"\n[page: turns {start + 1}-{nxt + 1} of {total}, turn {nxt + 1} continues; "
                f"{again}, start={nxt} and offset={cut} for the rest]\n"
            )
        elif nxt is not None:
            text += f"\n[page: turns {start + 1}-{nxt} of {total}; {again} and start={nxt} for the rest]\n"
        elif start or offset:
            text += f"\n[page: turns {start + 1}-{total} of {total}; the end]\n"
        return text

    def get_document(self, id: int) -> str:  # noqa: A002 - the tool's argument is called id
        body = self._get(f"/api/library/{int(id)}")
        doc: dict[str, Any] = body.get("document", {})
        meta = [
            f"# {doc.get('title') or '(untitled)'}",
            "",
            f"url: {doc.get('source_url', '')}",
            f"site: {doc.get('source_host', '')}",
            f"kind: document (id {doc.get('id')})",
            f"saved: {(doc.get('age') or {}).get('label', '')} ({(doc.get('age') or {}).get('at', '')})",
        ]
        for key in ("author", "published", "sitename", "language"):
            if doc.get(key):
                meta.append(f"{key}: {doc[key]}")
        body = without_title(str(doc.get("markdown") or doc.get("text", "")), doc.get("title"))
        return cut("\n".join(meta) + "\n\n" + body)

    def add_note(self, url: str, text: str) -> str:
        try:
            status, body = self.client.post("/api/notes", {"url": url, "text": text, "via": "mcp"})
        except ServerUnavailable as err:
            raise ToolFailed(str(err)) from None
        if status != 201:
            raise ToolFailed("the note was not kept: " + error_message(status, body))
        return f"Kept the note (id {body.get('id')}) about {url}."


def build_server(client: Client, *, allow_writes: bool) -> Any:
    """The MCP server with its tools (add_note only when `allow_writes`)."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError
    from mcp.types import ToolAnnotations

    tools = Tools(client)
    server = MCPServer(NAME, instructions=INSTRUCTIONS, log_level="WARNING")

    def run(fn: Callable[..., str], *args: Any) -> str:
        try:
            return fn(*args)
        except ToolFailed as err:
            raise ToolError(str(err)) from None

    read_only = ToolAnnotations(read_only_hint=True, open_world_hint=False)

    async def search_memory(
        query: Annotated[
            str,
            Field(
                min_length=1,
                max_length=4000,
                description="words or a whole question, e.g. 'sourdough starter' or "
                "'what did I note about the lease renewal?'",
            ),
        ],
        limit: Annotated[int, Field(ge=1, le=100, description="most results to return")] = 10,
    ) -> str:
        import anyio.to_thread

        return await anyio.to_thread.run_sync(run, tools.search_memory, query, limit)

    async def page_memory(
        url: Annotated[str, Field(min_length=1, max_length=4096, description="the page's full http(s) URL")],
    ) -> str:
        import anyio.to_thread

        return await anyio.to_thread.run_sync(run, tools.page_memory, url)

    async def get_conversation(
        url: Annotated[
            str,
            Field(
                min_length=1, max_length=4096, description="the chat page's URL, as search_memory gives it for a turn"
            ),
        ],
        start: Annotated[
            int, Field(ge=0, le=1_000_000, description="the turn to start from (0: the beginning), for the next page")
        ] = 0,
        offset: Annotated[
            int,
            Field(ge=0, le=1_000_000, description="characters into turn `start` (a long turn's next page says it)"),
        ] = 0,
    ) -> str:
        import anyio.to_thread

        return await anyio.to_thread.run_sync(run, tools.get_conversation, url, start, offset)

    async def get_document(
        id: Annotated[int, Field(ge=1, description="the document id, as search_memory shows it (`id N`)")],  # noqa: A002
    ) -> str:
        import anyio.to_thread

        return await anyio.to_thread.run_sync(run, tools.get_document, id)

    async def add_note(
        url: Annotated[str, Field(min_length=1, max_length=4096, description="the page the note is about")],
        text: Annotated[str, Field(min_length=1, max_length=20000, description="the note, in the person's words")],
    ) -> str:
        import anyio.to_thread

        return await anyio.to_thread.run_sync(run, tools.add_note, url, text)

    server.add_tool(
        search_memory,
        annotations=read_only,
        structured_output=False,
        description=(
            "Search everything the person has kept: notes, clips, captured AI-chat turns and saved library "
            "documents. Use it before answering from general knowledge when the person may have read, "
            "noted or discussed the topic. Each result gives kind, title, site, age, url and a snippet; "
            "follow up with get_conversation (for a turn's url), get_document (for a document's id) or "
            "page_memory (for any url). Keyword queries and full sentences both work."
        ),
    )
    server.add_tool(
        page_memory,
        annotations=read_only,
        structured_output=False,
        description=(
            "What is remembered about one web page, in four tiers: items on this exact page, elsewhere on "
            "its site, on related pages, and library documents - what the person's side panel shows. "
            "Use it when the person mentions or is looking at a URL."
        ),
    )
    server.add_tool(
        get_conversation,
        annotations=read_only,
        structured_output=False,
        description=(
            "The captured AI-chat conversation at a chat page URL (e.g. a claude.ai or chatgpt.com "
            "URL from a search_memory turn) as Markdown: front matter with title, site, url and ISO dates, "
            "then each turn in order with its role, ISO date and Markdown (and 'version 2 of 3' where the "
            "person regenerated or edited it). A long chat comes in pages: the answer ends with the "
            "`start` to pass for the next page."
        ),
    )
    server.add_tool(
        get_document,
        annotations=read_only,
        structured_output=False,
        description=(
            "A library document's extracted text with its metadata (title, url, site, saved age, author). "
            "Take the id from search_memory or page_memory results of kind 'document'."
        ),
    )
    if allow_writes:
        server.add_tool(
            add_note,
            annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False),
            structured_output=False,
            description=(
                "Keep a note about a web page in the person's memory, with the page as its provenance. "
                "Only when the person asks you to remember something about a page. Refused, with the "
                "reason, when the person has not set that site to collect."
            ),
        )
    return server


def cmd_mcp(args: argparse.Namespace) -> int:
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="wherefrom mcp: %(message)s")
    client = Client.from_args(args)
    try:
        status, _body = client.get("/api/health")
    except ServerUnavailable as err:
        # keep serving: the agent gets this message from every tool until the server is up
        log.warning("%s", err)
    else:
        if status != 200:
            log.warning("the server answered its health check with HTTP %s", status)
    build_server(client, allow_writes=args.allow_writes).run("stdio")
    return 0
