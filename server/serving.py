"""The HTTP server the app runs in: aiohttp's runner, with aiohttp's own error answers in our shape.

aiohttp answers a request it cannot parse (a bad request line, a bad header, a header too
long, a body it cannot frame) before any middleware runs, with a text/plain body that echoes
the offending bytes back. `JsonErrorRunner` makes those answers the JSON error shape of every
other answer (`{"error": {"code", "message"}}`, the same status, nothing echoed). aiohttp has
no public hook for this: the runner swaps the class of the server it builds for one whose
connection handlers override `RequestHandler.handle_error` (tests/test_hostile_wire.py
sends raw bytes to prove it, so an aiohttp upgrade that moves the hook fails there). Its log
line names the refusal only: aiohttp's own quotes the request's bytes, a token among them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from http import HTTPStatus
from typing import Any

from aiohttp import web
from aiohttp.http_exceptions import HttpProcessingError
from aiohttp.web_protocol import RequestHandler
from aiohttp.web_request import BaseRequest

log = logging.getLogger("wherefrom.http")
CODES = {400: "bad_http_request", 413: "payload_too_large", 431: "headers_too_large", 500: "internal", 504: "timeout"}


def error_body(status: int) -> dict[str, Any]:
    try:
        phrase = HTTPStatus(status).phrase
    except ValueError:
        phrase = "error"
    code = CODES.get(status, phrase.lower().replace(" ", "_").replace("-", "_"))
    return {
        "error": {
            "code": code,
            "message": f"the request could not be read as HTTP ({phrase.lower()})" if status < 500 else phrase.lower(),
        }
    }


class JsonErrorHandler(RequestHandler):
    def handle_error(
        self,
        request: BaseRequest,
        status: int = 500,
        exc: BaseException | None = None,
        message: str | None = None,
    ) -> web.StreamResponse:
        if isinstance(exc, HttpProcessingError):
            # aiohttp's message quotes the offending bytes (an Authorization header with the
            # token in it, say): log only what kind of refusal it was, never the request's bytes
            reason = str(exc.message or "").split("\n", 1)[0].split(":", 1)[0].strip()
            log.warning("refused a request that is not valid HTTP (%s: %s)", status, reason or type(exc).__name__)
        else:
            log.error("error handling a request (%s)", status, exc_info=exc)
        if request.writer.output_size > 0:  # some of an answer was sent already: the connection is broken
            raise ConnectionError("an answer was already being sent")
        resp = web.json_response(error_body(status), status=status)
        resp.force_close()
        return resp


class JsonErrorServer(web.Server):
    def __call__(self) -> RequestHandler:
        return JsonErrorHandler(self, loop=self._loop, **self._kwargs)


class JsonErrorRunner(web.AppRunner):
    async def _make_server(self) -> web.Server:
        server = await super()._make_server()
        server.__class__ = JsonErrorServer
        return server


async def serve_forever(app: web.Application, host: str, port: int) -> None:
    """Serve `app` until cancelled or signalled (SIGINT/SIGTERM), then clean up (app cleanup runs)."""
    runner = JsonErrorRunner(app, access_log=None, handle_signals=True)
    try:
        await runner.setup()
    except BaseException:
        with contextlib.suppress(Exception):
            await app.cleanup()  # what the startup opened before it failed
        raise
    try:
        await web.TCPSite(runner, host, port).start()
        await asyncio.Event().wait()
    finally:
        await runner.cleanup()


def run(app: web.Application, host: str, port: int) -> None:
    """web.run_app's loop handling (a signal ends the server cleanly) around serve_forever."""
    try:
        asyncio.run(serve_forever(app, host, port))
    except (web.GracefulExit, KeyboardInterrupt):
        pass
