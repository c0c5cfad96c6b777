"""A local neighbour: another user who listens on the server's port while it is down gets no
token from `wherefrom search` or `wherefrom mcp` (the client asks the listener to prove it holds
the token before sending it); the real server still gets it (the control). And the token never
reaches the server's log, even in a malformed Authorization header."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from server.settings import Settings
from tests.commands.test_mcp import agent, call
from tests.conftest import Api, free_port
from tests.dataio.test_dataio_import import wherefrom

TOKEN = "T" * 43  # the token the neighbour hopes to see


@contextlib.asynccontextmanager
async def stranger(port: int, proof: str = "0" * 64) -> AsyncIterator[bytearray]:
    """A listener on `port` that answers every request 200 with a plausible body and keeps
    every byte it was sent."""
    seen = bytearray()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while data := await asyncio.wait_for(reader.read(65536), 10):
                seen.extend(data)
                if b"\r\n\r\n" in data:
                    body = json.dumps({"proof": proof, "results": [], "ok": True}).encode()
                    writer.write(
                        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                        + f"Content-Length: {len(body)}\r\n\r\n".encode()
                        + body
                    )
                    await writer.drain()
        except (TimeoutError, ConnectionError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", port)
    try:
        yield seen
    finally:
        server.close()
        await server.wait_closed()


def data_dir_with_token(tmp_path: Path) -> Path:
    data = tmp_path / "person" / "data"
    data.mkdir(parents=True, mode=0o700)
    (data / "token").write_text(TOKEN)
    return data


async def test_search_never_sends_the_token_to_a_stranger_on_the_port(tmp_path: Path) -> None:
    data = data_dir_with_token(tmp_path)
    port = free_port()
    async with stranger(port) as seen:
        code, out, err = await wherefrom(Settings(data_dir=data, port=port), "search", "walnut")
    assert seen, "positive control: the client did talk to the stranger"
    assert TOKEN.encode() not in bytes(seen), bytes(seen)[:500]
    assert code == 1 and "did not prove" in err and "the token was not sent" in err, err


async def test_mcp_never_sends_the_token_to_a_stranger_on_the_port(tmp_path: Path) -> None:
    data = data_dir_with_token(tmp_path)
    port = free_port()
    async with stranger(port) as seen, agent(port, data, "--allow-writes") as session:
        for tool, args in (
            ("search_memory", {"query": "walnut"}),
            ("add_note", {"url": "https://example.com/", "text": "a note"}),
        ):
            error, text = await call(session, tool, **args)
            assert error and "did not prove" in text, text
    assert seen and TOKEN.encode() not in bytes(seen)


async def test_control_the_real_server_proves_itself_and_gets_the_token(api: Api, settings: Settings) -> None:
    status, body = await api.post("/api/notes", {"url": "https://example.com/w", "title": "W", "text": "walnut tree"})
    assert status == 201, body
    code, out, err = await wherefrom(settings, "search", "walnut")  # /api/search needs the token
    assert code == 0 and "walnut tree" in out, err
    status, body = await api.get("/api/proof", params={"nonce": "a" * 32}, auth=False)
    assert status == 200 and len(body["proof"]) == 64


@pytest.mark.parametrize(
    ("header", "status"),
    [
        ("Bearer {token}\x01", b"400"),  # not HTTP: aiohttp's own log line quoted the header
        ("Bearer {token}\x7f", b"400"),
        ("Bearer  {token} junk", b"401"),
        ("Bearer {token}\u00e9", b"401"),
        ("bearer {token}", b"401"),
        ("{token}", b"401"),
    ],
)
async def test_the_token_never_reaches_the_log(
    api: Api, caplog: pytest.LogCaptureFixture, header: str, status: bytes
) -> None:
    caplog.set_level(logging.DEBUG)
    value = header.format(token=api.token)
    host, port = api.base.removeprefix("http://").split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    raw = f"GET /api/search?q=x HTTP/1.1\r\nHost: {host}:{port}\r\nAuthorization: {value}\r\nConnection: close\r\n\r\n"
    writer.write(raw.encode("utf-8"))
    await writer.drain()
    answer = await asyncio.wait_for(reader.read(), 10)
    writer.close()
    assert answer.split(b" ", 2)[1] == status, answer[:200]  # positive control: the header reached the server
    logged = "\n".join(
        r.getMessage() + (repr(r.exc_info[1]) if r.exc_info else "") + repr(r.args) for r in caplog.records
    )
    if status == b"400":
        assert caplog.records, "positive control: the refusal was logged"
    assert api.token not in logged and api.token[:16] not in logged, logged[:2000]
