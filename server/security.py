"""The channel's defences, as middlewares, outermost first.

error_middleware   every failure leaves as {"error": {code, message}}; no traceback, never
                   a 500 for client input (unexpected exceptions are logged and answered
                   500 "internal" without details).
guard_middleware   Host allow-list (DNS rebinding), Origin allow-list (chrome-extension ids
                   only), bearer token in constant time on every /api route but health.
                   No CORS headers are ever added.
"""

from __future__ import annotations

import hmac
import logging
from collections.abc import Awaitable, Callable

from aiohttp import web

from server import appkeys
from server.errors import ApiError, Forbidden, MethodNotAllowed, NotFound, Unauthorized

log = logging.getLogger("wherefrom.security")

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@web.middleware
async def error_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    try:
        return await handler(request)
    except ApiError as err:
        resp = web.json_response(err.body(), status=err.status)
        if err.status == 408:  # a body that stopped arriving: what is left of it is never read
            resp.force_close()
        return resp
    except web.HTTPNotFound:
        return web.json_response(NotFound("no such route").body(), status=404)
    except web.HTTPMethodNotAllowed:
        return web.json_response(MethodNotAllowed("method not allowed").body(), status=405)
    except web.HTTPRequestEntityTooLarge:
        return web.json_response({"error": {"code": "payload_too_large", "message": "body too large"}}, status=413)
    except web.HTTPException as exc:
        code = exc.reason.lower().replace(" ", "_") if exc.reason else "http"
        return web.json_response({"error": {"code": code, "message": exc.reason or ""}}, status=exc.status)
    except Exception:  # noqa: BLE001 - the last line of defence: log, answer without details
        log.exception("unhandled error on %s %s", request.method, request.path)
        return web.json_response({"error": {"code": "internal", "message": "internal error"}}, status=500)


def allowed_hosts(port: int) -> frozenset[str]:
    return frozenset(f"{name}:{port}" for name in LOOPBACK_NAMES)


def route_needs_auth(request: web.Request) -> bool:
    spec = getattr(request.match_info.handler, "__wherefrom_spec__", None)
    return True if spec is None else bool(spec.auth)


def bearer_ok(request: web.Request) -> bool:
    header = request.headers.get("Authorization", "")
    scheme, _, value = header.partition(" ")
    if scheme != "Bearer" or not value:
        return False
    try:
        # aiohttp hands header bytes that are not UTF-8 through as lone surrogates; our tokens
        # are ASCII, so anything else is simply a wrong token (401), never an encoding error
        given = value.strip().encode("ascii")
    except UnicodeEncodeError:
        return False
    expected = request.app[appkeys.TOKEN]
    return hmac.compare_digest(given, expected.encode("ascii"))


@web.middleware
async def guard_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    settings = request.app[appkeys.SETTINGS]
    host = request.headers.get("Host", "").lower()
    if host not in allowed_hosts(settings.port):
        raise Forbidden("Host header is not this loopback server", code="bad_host")
    origin = request.headers.get("Origin")
    if origin is not None:
        prefix = "chrome-extension://"
        ext_id = origin[len(prefix) :].rstrip("/") if origin.startswith(prefix) else None
        if ext_id not in settings.allowed_extension_ids:
            raise Forbidden("Origin not allowed", code="bad_origin")
    if request.method == "OPTIONS":
        # no CORS: a preflight is never answered with permissions
        raise Forbidden("CORS is not offered", code="no_cors")
    authed = bearer_ok(request)
    request[appkeys.AUTHED] = authed
    if request.path.startswith("/api") and route_needs_auth(request) and not authed:
        raise Unauthorized("missing or wrong bearer token")
    return await handler(request)
