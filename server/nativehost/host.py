"""`wherefrom native-host`: what Chrome runs for the extension (through the launcher written by
`wherefrom install-browser-link`). Chrome passes the caller's origin as the first argument and
speaks length-prefixed JSON on stdin/stdout (server/nativehost/framing.py).

Requests (each a JSON object with a `type`):
  {"type": "locate"}  where the server is and what its token is:
                      {"ok": true, "running": true, "url": ..., "token": ...} or
                      {"ok": true, "running": false, "url": ...}
  {"type": "start"}   start the server when it is not running, then answer as `locate` does,
                      with "started": true when this request started it
Anything else — another type, extra fields, not JSON, over the size cap, a caller that is not
our extension — is answered {"ok": false, "error": {"code", "message"}} and the host exits.
The token is written to the pipe and nowhere else: nothing is logged, stderr never carries it.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, BinaryIO

from server.nativehost import companion
from server.nativehost.framing import FramingError, read_message, write_message
from server.settings import PINNED_EXTENSION_ID

ALLOWED_ORIGIN = f"chrome-extension://{PINNED_EXTENSION_ID}/"
REQUESTS = ("locate", "start")


def error(code: str, message: str) -> dict[str, Any]:
    return {"ok": False, "error": {"code": code, "message": message}}


def answer_for(found: companion.Found) -> dict[str, Any]:
    if found.running:
        return {"ok": True, "running": True, "url": found.url, "token": found.token}
    if found.problem:
        return error("not_ours", found.problem)
    return {"ok": True, "running": False, "url": found.url}


def handle(request: Any, data_dir: Path, port: int) -> dict[str, Any] | None:
    """The answer to one request; None means the request is refused (the caller then exits)."""
    if not isinstance(request, dict) or set(request) != {"type"} or request["type"] not in REQUESTS:
        return None
    if request["type"] == "locate":
        return answer_for(companion.locate(data_dir, port))
    found, started = companion.start(data_dir, port)
    if not found.running and not found.problem:
        log = data_dir / companion.LOG_NAME
        return error("not_started", f"the server did not start; its log is {log}")
    reply = answer_for(found)
    if reply["ok"]:
        reply["started"] = started
    return reply


def run(origin: str | None, data_dir: Path, port: int, stdin: BinaryIO, stdout: BinaryIO) -> int:
    if origin != ALLOWED_ORIGIN:
        write_message(stdout, error("origin", "this host answers only the Wherefrom extension"))
        return 1
    while True:
        try:
            request = read_message(stdin)
        except EOFError:
            return 0  # Chrome closed the pipe
        except FramingError as err:
            write_message(stdout, error(err.code, str(err)))
            return 1
        reply = handle(request, data_dir, port)
        if reply is None:
            write_message(stdout, error("unknown_request", f"the requests are {', '.join(REQUESTS)}"))
            return 1
        write_message(stdout, reply)


def main(origin: str | None, data_dir: Path, port: int) -> int:
    return run(origin, data_dir, port, sys.stdin.buffer, sys.stdout.buffer)
