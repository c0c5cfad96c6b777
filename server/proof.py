"""The server proves it is the one that holds the token before a client sends the token.

Anyone on this machine can listen on the port while the server is down, so a client of the
running server (server/commands/client.py: the CLI and MCP) first asks `GET /api/proof?nonce=N`
with a fresh random nonce and no token, checks the answer is `proof(token, N)`, and only then
sends `Authorization: Bearer <token>` on the SAME connection (a stranger cannot compute the
proof without the token). The proof is an HMAC of the nonce keyed by the token, with a label no
other use of the token shares.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from typing import Any

from aiohttp import web

from server import appkeys
from server.api import Api

api = Api()
LABEL = b"wherefrom-server-proof\x00"
NONCE = {"type": "string", "minLength": 32, "maxLength": 128}


def proof(token: str, nonce: str) -> str:
    return hmac.new(token.encode("ascii"), LABEL + nonce.encode("ascii"), hashlib.sha256).hexdigest()


def new_nonce() -> str:
    return secrets.token_hex(32)


def is_proof(token: str, nonce: str, answer: object) -> bool:
    return isinstance(answer, str) and hmac.compare_digest(
        answer.encode("ascii", "replace"), proof(token, nonce).encode()
    )


@api.route(
    "GET",
    "/api/proof",
    summary="HMAC-SHA256 of a client's nonce keyed by the token: the server proves itself before the token is sent",
    query={"type": "object", "properties": {"nonce": NONCE}, "required": ["nonce"]},
    auth=False,
)
async def get_proof(request: web.Request, body: dict[str, Any], query: dict[str, Any]) -> dict[str, Any]:
    nonce = query["nonce"]
    if not nonce.isascii() or not nonce.isalnum():
        from server.errors import BadRequest

        raise BadRequest("nonce must be letters and digits", code="bad_value", field="query.nonce")
    return {"proof": proof(request.app[appkeys.TOKEN], nonce)}
