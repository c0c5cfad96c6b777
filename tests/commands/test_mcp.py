"""`wherefrom mcp` as an agent's client runs it: the MCP SDK's stdio client starts the command
as a subprocess, against our server running as another subprocess with its own data dir. The
tools are listed and called; what they answer is checked against what was stored over HTTP."""

from __future__ import annotations

import contextlib
import os
import re
import sqlite3
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.stdio import get_default_environment

from server.resultformat import ANSWER_CHARS
from server.textcaps import open_fence
from testkit.server_process import REPO, ServerProcess, free_port

WHEREFROM = Path(sys.executable).parent / "wherefrom"  # the installed console script, as a host runs it
READ_TOOLS = {"search_memory", "page_memory", "get_conversation", "get_document"}


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ServerProcess]:
    proc = ServerProcess(tmp_path / "data").start()
    try:
        yield proc
    finally:
        proc.stop()


@contextlib.asynccontextmanager
async def agent(port: int, data_dir: Path, *extra: str) -> AsyncIterator[ClientSession]:
    """An MCP client session with `wherefrom mcp` started over stdio, as Claude Desktop does."""
    params = StdioServerParameters(
        command=str(WHEREFROM),
        args=["mcp", "--port", str(port), "--data-dir", str(data_dir), *extra],
        cwd=REPO,
        # the SDK passes only a few variables; PYTHONPATH too, so a worktree's checkout is the
        # code the console script runs (the editable install points at the main checkout)
        env={**get_default_environment(), **({"PYTHONPATH": str(REPO)} if os.environ.get("PYTHONPATH") else {})},
    )
    with (data_dir.parent / "mcp-stderr.log").open("w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            yield session


async def call(session: ClientSession, tool: str, **arguments: Any) -> tuple[bool, str]:
    """(is_error, the text answered)."""
    result = await session.call_tool(tool, arguments)
    text = "\n".join(getattr(c, "text", "") for c in result.content)
    return bool(result.is_error), text


def store(server: ServerProcess, path: str, body: dict[str, Any], expect: int = 201) -> Any:
    status, answer = server.call("POST", path, body)
    assert status == expect, answer
    return answer


def seed(server: ServerProcess) -> dict[str, Any]:
    note = store(
        server,
        "/api/notes",
        {
            "url": "https://recipes.example/soup",
            "title": "Tomato soup",
            "text": "Roast the tomatoes with garlic before blending the soup",
        },
    )
    clip = store(
        server,
        "/api/clips",
        {
            "url": "https://garden.example/beds",
            "title": "Raised beds",
            "text": "Tomatoes want eight hours of sun in a raised bed",
        },
    )
    store(
        server,
        "/api/captures",
        {
            "url": "https://claude.ai/chat/4f1c",
            "title": "Tomato blight",
            "site": "claude",
            "turns": [
                {"role": "user", "text": "Why do my tomato leaves turn yellow?"},
                {"role": "assistant", "text": "Early blight, most likely: **remove** the lower leaves."},
            ],
        },
        expect=200,
    )
    doc = store(
        server,
        "/api/library/add_text",
        {
            "url": "https://extension.example/tomato-guide",
            "title": "Growing tomatoes",
            "text": "A field guide to tomato varieties and staking.",
        },
    )
    return {"note": note["id"], "clip": clip["id"], "document": doc["document"]["id"]}


async def test_tools_are_listed_with_schemas_and_read_only_by_default(server: ServerProcess) -> None:
    async with agent(server.port, server.data_dir) as session:
        tools = {t.name: t for t in (await session.list_tools()).tools}
    assert set(tools) == READ_TOOLS  # no add_note without --allow-writes
    for tool in tools.values():
        assert tool.description and len(tool.description) > 80, tool.name
        assert tool.input_schema["type"] == "object" and tool.input_schema["required"], tool.name
        assert tool.annotations is not None and tool.annotations.read_only_hint is True
    assert tools["search_memory"].input_schema["properties"]["limit"]["maximum"] == 100
    async with agent(server.port, server.data_dir, "--allow-writes") as session:
        tools = {t.name: t for t in (await session.list_tools()).tools}
    assert set(tools) == READ_TOOLS | {"add_note"}
    assert tools["add_note"].input_schema["required"] == ["url", "text"]


async def test_each_tool_answers_what_was_stored_with_provenance(server: ServerProcess) -> None:
    ids = seed(server)
    async with agent(server.port, server.data_dir) as session:
        error, text = await call(session, "search_memory", query="tomato", limit=10)
        assert not error
        for url, kind, title in [
            ("https://recipes.example/soup", "note", "Tomato soup"),
            ("https://garden.example/beds", "clip", "Raised beds"),
            ("https://claude.ai/chat/4f1c", "turn (user)", "Tomato blight"),
            ("https://extension.example/tomato-guide", "document", "Growing tomatoes"),
        ]:
            assert url in text and f"[{kind}] {title} — " in text, (url, text)
        assert f"id {ids['document']}" in text and "just now" in text
        # the same ranking as the panel's request
        status, api = server.call("GET", "/api/search?q=tomato&limit=10")
        assert status == 200
        order = [r["source_url"] for r in api["results"]]
        shown = [line.split()[0] for line in text.splitlines() if line.startswith("   http")]
        assert shown == order

        error, text = await call(session, "search_memory", query="What did I say about roasting garlic?")
        assert not error and "https://recipes.example/soup" in text  # a sentence finds the note

        error, text = await call(session, "page_memory", url="https://recipes.example/soup")
        assert not error and "## On this page (1)" in text and "Roast the tomatoes with garlic" in text

        error, text = await call(session, "get_conversation", url="https://claude.ai/chat/4f1c")
        assert not error
        user = re.search(r"^## User · \d{4}-\d\d-\d\dT[\d:]+Z\n\nWhy do my tomato leaves", text, re.M)
        assistant = re.search(r"^## Assistant · \d{4}-\d\d-\d\dT[\d:]+Z\n\nEarly blight", text, re.M)
        assert user and assistant and user.start() < assistant.start(), text
        assert 'source: "https://claude.ai/chat/4f1c"' in text and 'site: "claude"' in text
        assert re.search(r'^title: ".+"$', text, re.M) and re.search(r'^updated: "\d{4}-', text, re.M)

        error, text = await call(session, "get_document", id=ids["document"])
        assert not error and text.startswith("# Growing tomatoes\n")
        assert "url: https://extension.example/tomato-guide" in text and "A field guide to tomato varieties" in text

        error, text = await call(session, "get_document", id=ids["document"] + 100)
        assert error and "no such document" in text


async def test_get_document_says_the_title_once(server: ServerProcess) -> None:
    """The page's Markdown opens with its own heading, the title; the answer's title line is not
    followed by the same heading again."""
    text = "A field guide to quince varieties and their care, season by season. " * 20
    html = f"<html><body><article><h1>Quince guide</h1><p>{text}</p><h2>Pruning</h2><p>{text}</p></article></body>"
    doc = store(
        server, "/api/library/add_text", {"url": "https://guide.example/q", "title": "Quince guide", "html": html}
    )
    async with agent(server.port, server.data_dir) as session:
        error, answer = await call(session, "get_document", id=doc["document"]["id"])
    assert not error and answer.startswith("# Quince guide\n"), answer[:300]
    assert answer.count("# Quince guide\n") == 1 and "\n## Pruning\n" in answer, answer[:600]


async def test_add_note_writes_through_the_server_and_is_refused_for_an_off_site(server: ServerProcess) -> None:
    assert server.call("PUT", "/api/site-mode", {"host": "private.example", "mode": "off"})[0] == 200
    async with agent(server.port, server.data_dir, "--allow-writes") as session:
        error, text = await call(session, "add_note", url="https://notes.example/page", text="Ask about the quince jam")
        assert not error and "Kept the note" in text
        error, text = await call(session, "add_note", url="https://private.example/x", text="should never be kept")
        assert error and "off" in text and "not kept" in text
    status, found = server.call("GET", "/api/page-match?url=https://notes.example/page")
    assert status == 200 and [i["text"] for i in found["tiers"]["exact"]] == ["Ask about the quince jam"]
    with sqlite3.connect(server.data_dir / "wherefrom.db") as db:
        hosts = [h for (h,) in db.execute("SELECT source_host FROM facts")]
    assert hosts == ["notes.example"]  # the refused note left nothing behind


async def test_read_only_server_refuses_add_note(server: ServerProcess) -> None:
    async with agent(server.port, server.data_dir) as session:
        result = await session.call_tool("add_note", {"url": "https://notes.example/page", "text": "x"})
    assert result.is_error
    with sqlite3.connect(server.data_dir / "wherefrom.db") as db:
        assert db.execute("SELECT COUNT(*) FROM facts").fetchone() == (0,)


async def test_long_answers_are_cut_by_the_cap_rule_and_say_so(server: ServerProcess) -> None:
    body = "Quince " * 8_000 + "🧪 the end"
    doc = store(server, "/api/library/add_text", {"url": "https://long.example/essay", "title": "Long", "text": body})
    async with agent(server.port, server.data_dir) as session:
        error, text = await call(session, "get_document", id=doc["document"]["id"])
    assert not error and len(text) <= ANSWER_CHARS
    said = re.search(r"\n\n\[cut: showing the first ([\d,]+) of ([\d,]+) characters\]$", text)
    assert said, text[-200:]
    shown, total = (int(g.replace(",", "")) for g in said.groups())
    assert "Quince".startswith(text[:shown].rstrip().split()[-1]) and total > len(body)
    assert "the end" not in text and "Quince Quince" in text


async def test_a_long_conversation_comes_in_pages_that_say_how_to_continue(server: ServerProcess) -> None:
    """Never cut at 20,000 characters: each page is whole turns, and says where the next starts."""
    turns = [
        {"role": "user" if k % 2 == 0 else "assistant", "text": f"turn {k:03d} " + "fig " * 400} for k in range(60)
    ]
    url = "https://chatgpt.com/c/long-chat"
    store(server, "/api/captures", {"url": url, "title": "Figs", "site": "chatgpt", "turns": turns}, expect=200)
    seen: list[int] = []
    start = 0
    async with agent(server.port, server.data_dir) as session:
        for _ in range(20):
            error, text = await call(session, "get_conversation", url=url, start=start)
            assert not error and len(text) <= ANSWER_CHARS + 300, len(text)
            assert 'title: "Figs"' in text and 'site: "chatgpt"' in text and f'source: "{url}"' in text
            seen += [int(n) for n in re.findall(r"^turn (\d{3}) ", text, re.M)]
            more = re.search(r"and start=(\d+) for the rest\]$", text.rstrip())
            if more is None:
                break
            start = int(more.group(1))
    assert seen == list(range(60))  # every turn once, in order, over several pages
    assert start > 0


async def test_a_turn_longer_than_a_page_continues_on_the_next_page(server: ServerProcess) -> None:
    """A single turn over 20,000 characters (a pasted document, 75,000 here, with a code block
    across the page cuts) is never cut silently: the pages carry all of it, in order, each page
    closing the fence it cut and the next reopening it, and say where to continue."""
    words = [f"w{k:05d}" for k in range(8000)]
    code = "```python\n" + "\n".join(f"x_{k} = {k}" for k in range(1500)) + "\n```"
    text = " ".join(words[:4000]) + "\n\n" + code + "\n\n" + " ".join(words[4000:]) + " THE-END"
    url = "https://claude.ai/chat/pasted-document"
    turns = [{"role": "user", "text": text, "markdown": text}, {"role": "assistant", "text": "A list of words."}]
    store(server, "/api/captures", {"url": url, "title": "Pasted", "site": "claude", "turns": turns}, expect=200)
    pages: list[str] = []
    args: dict[str, int] = {}
    async with agent(server.port, server.data_dir) as session:
        for _ in range(20):
            error, page = await call(session, "get_conversation", url=url, **args)
            assert not error and len(page) <= ANSWER_CHARS + 400, len(page)
            pages.append(page)
            more = re.search(r"start=(\d+)(?: and offset=(\d+))? for the rest\]$", page.rstrip())
            if more is None:
                break
            args = {"start": int(more.group(1)), **({"offset": int(more.group(2))} if more.group(2) else {})}
    assert len(pages) >= 4
    joined = "\n".join(pages)
    assert re.findall(r"\bw\d{5}\b", joined) == words  # every word once, in order
    assert re.findall(r"^x_(\d+) = ", joined, re.M) == [str(k) for k in range(1500)]
    assert "THE-END" in joined and "A list of words." in pages[-1]
    for page in pages:  # each page's code blocks are whole: what it opens it closes
        assert open_fence(page) is None, page[-300:]
    assert sum("```python" in page for page in pages) >= 2  # the block cut is reopened on the next page


async def test_a_forgotten_hosts_items_never_come_back(server: ServerProcess) -> None:
    store(server, "/api/notes", {"url": "https://kept.example/a", "text": "the persimmon harvest is in October"})
    store(server, "/api/notes", {"url": "https://gone.example/a", "text": "the persimmon tree needs pruning"})
    store(
        server,
        "/api/captures",
        {
            "url": "https://gone.example/chat/1",
            "turns": [{"role": "user", "text": "persimmon varieties that ripen early"}],
        },
        expect=200,
    )
    async with agent(server.port, server.data_dir) as session:
        _, before = await call(session, "search_memory", query="persimmon")
        _, page_before = await call(session, "page_memory", url="https://gone.example/a")
        _, convo_before = await call(session, "get_conversation", url="https://gone.example/chat/1")
        # positive control: the observer sees them while they are remembered
        assert "https://gone.example/a" in before and "https://gone.example/chat/1" in before
        assert "persimmon tree needs pruning" in page_before and "persimmon varieties" in convo_before

        status, dry = server.call("POST", "/api/forget", {"host": "gone.example", "dry_run": True})
        assert status == 200
        assert server.call("POST", "/api/forget", {"host": "gone.example", "confirm": dry["confirm"]})[0] == 200

        _, after = await call(session, "search_memory", query="persimmon")
        _, page_after = await call(session, "page_memory", url="https://gone.example/a")
        _, convo_after = await call(session, "get_conversation", url="https://gone.example/chat/1")
    assert "https://kept.example/a" in after and "gone.example" not in after
    assert "persimmon" not in page_after and "persimmon" not in convo_after


async def test_a_forgotten_hosts_saved_pages_go_only_when_the_person_forgets_them(server: ServerProcess) -> None:
    pages = {}
    for host in ("keepdocs.example", "dropdocs.example"):
        pages[host] = store(
            server,
            "/api/library/add_text",
            {"url": f"https://{host}/guide", "title": "Loquat guide", "text": f"The loquat guide kept on {host}."},
        )["document"]["id"]
    async with agent(server.port, server.data_dir) as session:
        _, before = await call(session, "search_memory", query="loquat guide")
        assert "https://keepdocs.example/guide" in before and "https://dropdocs.example/guide" in before
        for host, choice in (("keepdocs.example", "keep"), ("dropdocs.example", "forget")):
            status, dry = server.call("POST", "/api/forget", {"host": host, "dry_run": True})
            assert status == 200 and dry["pages"][0]["url"] == f"https://{host}/guide"
            body = {"host": host, "confirm": dry["confirm"], "documents": choice}
            assert server.call("POST", "/api/forget", body)[0] == 200
        _, after = await call(session, "search_memory", query="loquat guide")
        kept_error, kept = await call(session, "get_document", id=pages["keepdocs.example"])
        gone_error, gone = await call(session, "get_document", id=pages["dropdocs.example"])
        _, page_after = await call(session, "page_memory", url="https://dropdocs.example/guide")
    assert "https://keepdocs.example/guide" in after and "dropdocs.example" not in after
    assert not kept_error and "kept on keepdocs.example" in kept
    assert gone_error and "loquat" not in gone.lower() and "loquat" not in page_after.lower()


async def test_an_off_sites_items_never_come_back(server: ServerProcess) -> None:
    store(server, "/api/notes", {"url": "https://open.example/a", "text": "the kumquat marmalade recipe"})
    store(server, "/api/notes", {"url": "https://closed.example/a", "text": "the kumquat tree in the yard"})
    store(
        server,
        "/api/captures",
        {"url": "https://closed.example/chat/9", "turns": [{"role": "user", "text": "when do kumquats ripen?"}]},
        expect=200,
    )
    doc = store(
        server,
        "/api/library/add_text",
        {"url": "https://closed.example/doc", "title": "Kumquats", "text": "All about kumquat trees."},
    )["document"]["id"]
    async with agent(server.port, server.data_dir) as session:
        _, before = await call(session, "search_memory", query="kumquat")
        _, convo_before = await call(session, "get_conversation", url="https://closed.example/chat/9")
        error, doc_before = await call(session, "get_document", id=doc)
        # positive control: before the rule, the observer sees every one of them
        assert "https://closed.example/a" in before and "https://closed.example/doc" in before
        assert "when do kumquats ripen?" in convo_before and not error and "All about kumquat" in doc_before

        assert server.call("PUT", "/api/site-mode", {"host": "closed.example", "mode": "off"})[0] == 200
        _, after = await call(session, "search_memory", query="kumquat")
        _, page_after = await call(session, "page_memory", url="https://closed.example/a")
        _, convo_after = await call(session, "get_conversation", url="https://closed.example/chat/9")
        error, doc_after = await call(session, "get_document", id=doc)
    assert "https://open.example/a" in after and "closed.example" not in after
    assert "kumquat" not in page_after and "turned off" in page_after
    assert "kumquat" not in convo_after
    assert error and "kumquat" not in doc_after.lower()


async def test_a_clear_error_when_the_server_is_not_running_or_not_paired(
    server: ServerProcess, tmp_path: Path
) -> None:
    nobody = free_port()
    async with agent(nobody, server.data_dir) as session:  # a token, but no server on that port
        error, text = await call(session, "search_memory", query="anything")
    assert error and f"no server on 127.0.0.1:{nobody}" in text and "start it with: wherefrom serve" in text
    empty = tmp_path / "elsewhere" / "data"
    empty.mkdir(parents=True)
    async with agent(server.port, empty) as session:  # the server runs, but this data dir was never paired
        error, text = await call(session, "search_memory", query="anything")
    assert error and "no token at" in text
    (empty / "token").write_text("not-the-token")
    async with agent(server.port, empty) as session:
        error, text = await call(session, "page_memory", url="https://example.com/")
    assert error and "did not prove it holds the token" in text and "the token was not sent" in text
    async with agent(server.port, server.data_dir) as session:  # control: the right data dir works
        error, text = await call(session, "search_memory", query="anything")
    assert not error and "No stored item matches" in text
