"""Idle and half-open connections are closed: a local neighbour that opens connections and sends
nothing, half a request, or headers and half a body cannot hold them (or a handler) open for
more than a minute. Raw sockets, so what is measured is the server's own timer."""

from __future__ import annotations

import asyncio
import time
from urllib.parse import urlsplit

from tests.conftest import Api

LIMIT = 60.0


async def closed_after(api: Api, data: bytes) -> tuple[float, bytes]:
    """Send `data`, then wait until the server closes: (seconds until EOF, what it answered)."""
    parts = urlsplit(api.base)
    reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
    start = time.monotonic()
    try:
        if data:
            writer.write(data)
            await writer.drain()
        answer = await asyncio.wait_for(reader.read(), LIMIT + 5)  # read() returns at EOF
        return time.monotonic() - start, answer
    finally:
        writer.close()


def head(api: Api) -> str:
    return f"Host: {urlsplit(api.base).netloc}\r\n"


async def test_idle_and_half_open_connections_are_closed_within_a_minute(api: Api) -> None:
    body_start = (
        f"POST /api/notes HTTP/1.1\r\n{head(api)}Authorization: Bearer {api.token}\r\n"
        "Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n"
        '{"url": "https://example.com/'
    ).encode()
    idle, half_line, half_headers, half_body = await asyncio.gather(
        closed_after(api, b""),
        closed_after(api, b"GET /api/hea"),
        closed_after(api, f"GET /api/health HTTP/1.1\r\n{head(api)}".encode()),
        closed_after(api, body_start),
    )
    for name, (seconds, _) in {
        "idle": idle,
        "half a request line": half_line,
        "half the headers": half_headers,
        "half a body": half_body,
    }.items():
        assert seconds < LIMIT, f"{name}: open for {seconds:.0f} s"
    assert half_body[1].startswith(b"HTTP/1.1 408"), half_body[1][:200]
    row = await api.store.fetchone("SELECT count(*) AS n FROM facts")
    assert row is not None and row["n"] == 0


async def test_control_a_whole_request_on_the_same_kind_of_socket_is_answered(api: Api) -> None:
    seconds, answer = await closed_after(
        api,
        f"GET /api/health HTTP/1.1\r\n{head(api)}Authorization: Bearer {api.token}\r\n"
        "Connection: close\r\n\r\n".encode(),
    )
    assert answer.startswith(b"HTTP/1.1 200"), answer[:200]
    assert seconds < 5
