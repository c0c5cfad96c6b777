"""Raw bytes on the wire: malformed HTTP gets our JSON error shape and echoes nothing, a
non-UTF-8 byte in Authorization is a wrong token (401).
"""

from __future__ import annotations

import json

import pytest

from tests.conftest import Api
from tests.hostile_support import WRITES, assert_nothing_stored

# ---------------------------------------------------------------- raw bytes on the wire


async def wire(api: Api, request: bytes) -> tuple[int, str, bytes]:
    """Send exactly these bytes; return (status, content type, body) of the answer."""
    import asyncio

    port = int(api.base.rsplit(":", 1)[1])
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(request)
    await writer.drain()
    answer = b""
    while b"\r\n\r\n" not in answer:
        more = await asyncio.wait_for(reader.read(1 << 16), 10)
        assert more, answer
        answer += more
    head, _, body = answer.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    length = next(int(ln.split(b":", 1)[1]) for ln in lines[1:] if ln.lower().startswith(b"content-length:"))
    while len(body) < length:
        more = await asyncio.wait_for(reader.read(1 << 16), 10)
        assert more, body
        body += more
    writer.close()
    status = int(lines[0].split(b" ")[1])
    ctype = next(
        (
            ln.split(b":", 1)[1].split(b";")[0].strip().decode()
            for ln in lines[1:]
            if ln.lower().startswith(b"content-type:")
        ),
        "",
    )
    return status, ctype, body


def _host(api: Api) -> bytes:
    return api.base.removeprefix("http://").encode()


async def test_a_non_utf8_byte_in_authorization_is_401(api: Api) -> None:
    note = json.dumps(WRITES["/api/notes"]).encode()
    for value in (b"Bearer \xff\xfe" + api.token.encode(), b"Bearer " + api.token.encode() + b"\x80", b"\xffBearer x"):
        status, ctype, body = await wire(
            api,
            b"POST /api/notes HTTP/1.1\r\nHost: "
            + _host(api)
            + b"\r\nAuthorization: "
            + value
            + b"\r\nContent-Type: application/json"
            + b"\r\nContent-Length: "
            + str(len(note)).encode()
            + b"\r\nConnection: close\r\n\r\n"
            + note,
        )
        assert (status, ctype) == (401, "application/json"), (value, body)
        assert json.loads(body)["error"]["code"] == "unauthorized"
    await assert_nothing_stored(api)
    # control: the same bytes with the right token are stored
    status, _, body = await wire(
        api,
        b"POST /api/notes HTTP/1.1\r\nHost: "
        + _host(api)
        + b"\r\nAuthorization: Bearer "
        + api.token.encode()
        + b"\r\nContent-Type: application/json\r\nContent-Length: "
        + str(len(note)).encode()
        + b"\r\nConnection: close\r\n\r\n"
        + note,
    )
    assert status == 201, body


MALFORMED = {
    "NUL in the request line": b"GET /ECHOME\x00 HTTP/1.1\r\nHost: {host}\r\n\r\n",
    "bad method": b"G<ECHOME> / HTTP/1.1\r\nHost: {host}\r\n\r\n",
    "bad version": b"GET / HTTP/ECHOME\r\nHost: {host}\r\n\r\n",
    "header without a colon": b"GET /api/health HTTP/1.1\r\nHost: {host}\r\nECHOME header\r\n\r\n",
    "bad header name": b"GET /api/health HTTP/1.1\r\nHost: {host}\r\nECH\x01OME: x\r\n\r\n",
    "header line too long": b"GET /api/health HTTP/1.1\r\nHost: {host}\r\nX-Echo: ECHOME" + b"a" * 20000 + b"\r\n\r\n",
    "request line too long": b"GET /ECHOME" + b"a" * 140000 + b" HTTP/1.1\r\nHost: {host}\r\n\r\n",
    "bad chunk size": b"POST /api/notes HTTP/1.1\r\nHost: {host}\r\nTransfer-Encoding: chunked\r\n\r\nECHOME\r\n",
    "bad content length": b"POST /api/notes HTTP/1.1\r\nHost: {host}\r\nContent-Length: ECHOME\r\n\r\n",
    "two content lengths": b"POST /api/notes HTTP/1.1\r\nHost: {host}\r\n"
    b"Content-Length: 1\r\nContent-Length: 2\r\n\r\nab",
}


@pytest.mark.parametrize("case", list(MALFORMED))
async def test_aiohttps_own_400_answers_are_our_json_shape_and_echo_nothing(api: Api, case: str) -> None:
    status, ctype, body = await wire(api, MALFORMED[case].replace(b"{host}", _host(api)))
    assert 400 <= status < 500, (status, body)
    assert ctype == "application/json", body
    error = json.loads(body)["error"]
    assert set(error) == {"code", "message"} and error["code"], error
    assert b"ECHOME" not in body
    await assert_nothing_stored(api)


async def test_control_a_well_formed_raw_request_is_answered(api: Api) -> None:
    status, ctype, body = await wire(
        api, b"GET /api/health HTTP/1.1\r\nHost: " + _host(api) + b"\r\nConnection: close\r\n\r\n"
    )
    assert (status, ctype) == (200, "application/json"), body
