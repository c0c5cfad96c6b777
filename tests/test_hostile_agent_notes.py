"""A note an agent writes through `wherefrom mcp --allow-writes` carries its origin (`via: mcp`)
wherever it is shown: the panel's answers (page match with its related tier, search by words
and by meaning), the JSON and Markdown export, and MCP's own results; a note the person writes
carries none (the control)."""

from __future__ import annotations

import json
from pathlib import Path

from server.settings import Settings
from testkit.server_process import ServerProcess
from tests.commands.test_mcp import agent, call, server  # noqa: F401 - the fixture
from tests.dataio.test_dataio_import import wherefrom

URL = "https://example.com/walnuts"


async def test_an_agents_note_says_via_mcp_everywhere(server: ServerProcess, tmp_path: Path) -> None:  # noqa: F811
    status, body = server.call("POST", "/api/notes", {"url": URL, "title": "Walnuts", "text": "walnut person note"})
    assert status == 201, body
    async with agent(server.port, server.data_dir, "--allow-writes") as session:
        error, text = await call(session, "add_note", url=URL, text="walnut agent note")
        assert not error, text
        error, found = await call(session, "search_memory", query="walnut")
    assert not error
    lines = {line for line in found.splitlines() if "walnut" in line}
    assert any("agent note" in line for line in lines), found
    assert "[note via mcp]" in found and found.count("via mcp") == 1, found  # the person's note has none

    status, match = server.call("GET", f"/api/page-match?url={URL}")
    assert status == 200, match
    by_text = {i["text"]: i.get("via") for i in match["tiers"]["exact"]}
    assert by_text == {"walnut person note": None, "walnut agent note": "mcp"}, by_text
    status, results = server.call("GET", "/api/search?q=walnut")
    assert {r["text"]: r.get("via") for r in results["results"]} == by_text
    # by meaning too: the meaning lane alone, and the related tier of a page on another site
    status, results = server.call("GET", "/api/search?q=walnut&lanes=meaning")
    assert status == 200 and {r["text"]: r.get("via") for r in results["results"]} == by_text, results
    status, match = server.call("GET", "/api/page-match?url=https://other.example/nuts&title=Walnut")
    assert status == 200 and {i["text"]: i.get("via") for i in match["tiers"]["related"]} == by_text, match

    settings = Settings(data_dir=server.data_dir, port=server.port)
    out = tmp_path / "export"
    code, _, err = await wherefrom(settings, "export", str(out), "--format", "json")
    assert code == 0, err
    facts = json.loads((out / "wherefrom.json").read_text())["facts"]
    assert {f["text"]: f.get("via") for f in facts} == by_text
    code, _, err = await wherefrom(settings, "export", str(tmp_path / "md"))
    assert code == 0, err
    (page,) = (tmp_path / "md").rglob("*.md")
    text = page.read_text()
    assert "## Note (via mcp)" in text and text.count("(via mcp)") == 1, text


async def test_a_client_cannot_claim_another_origin(server: ServerProcess) -> None:  # noqa: F811
    status, body = server.call("POST", "/api/notes", {"url": URL, "text": "x", "via": "the person"})
    assert status == 400 and body["error"]["code"] == "bad_value", body
    status, body = server.call("POST", "/api/notes", {"url": URL, "text": "x", "via": "mcp"})  # control
    assert status == 201, body
