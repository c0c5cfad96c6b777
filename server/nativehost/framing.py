"""Native messaging framing: each message is a uint32 length in native byte order, then that
many bytes of UTF-8 JSON. Chrome refuses a message over 1 MB from the host; our requests are
tiny, so anything over `MAX_REQUEST` bytes is refused before it is read."""

from __future__ import annotations

import json
import struct
from typing import Any, BinaryIO

HEADER = struct.Struct("=I")  # native byte order, standard 4-byte size
MAX_REPLY = 1024 * 1024  # Chrome's limit for a message from the host
MAX_REQUEST = 4096


class FramingError(Exception):
    """The message could not be read (the host answers it with an error and exits)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def _read_exact(stream: BinaryIO, n: int) -> bytes:
    chunks: list[bytes] = []
    while n:
        chunk = stream.read(n)
        if not chunk:
            break
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def read_message(stream: BinaryIO) -> Any:
    """The next message (any JSON value, null included); EOFError when the input ended cleanly,
    between messages."""
    head = _read_exact(stream, HEADER.size)
    if not head:
        raise EOFError
    if len(head) < HEADER.size:
        raise FramingError("truncated", "the input ended inside a length prefix")
    (length,) = HEADER.unpack(head)
    if length > MAX_REQUEST:
        raise FramingError("too_large", f"a request is at most {MAX_REQUEST} bytes, this one says {length}")
    body = _read_exact(stream, length)
    if len(body) < length:
        raise FramingError("truncated", "the input ended inside a message")
    try:
        return json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as err:
        raise FramingError("bad_json", "the message is not UTF-8 JSON") from err


def encode_message(value: Any) -> bytes:
    body = json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    if len(body) > MAX_REPLY:
        raise ValueError(f"a reply is at most {MAX_REPLY} bytes (Chrome's limit), this one is {len(body)}")
    return HEADER.pack(len(body)) + body


def write_message(stream: BinaryIO, value: Any) -> None:
    stream.write(encode_message(value))
    stream.flush()
