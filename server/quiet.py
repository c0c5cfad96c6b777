"""Whether anyone is asking: the requests being answered, and when the last one ended.

Background work that can use both cores (the second model's build: server.meaning.deep) does so
only while the server has answered nothing for QUIET_S and nothing is in flight; otherwise it
keeps to one core and leaves the other to the person's requests. Every request counts, whoever
sends it (a page's probe, a search, the CLI, a refused one): nothing here reads what it asks.
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Iterator

from aiohttp import web
from aiohttp.typedefs import Handler

from server import appkeys

QUIET_S = 1.0


class Quiet:
    def __init__(self, quiet_s: float = QUIET_S) -> None:
        self.quiet_s = quiet_s
        self._open = 0
        self._ended = -math.inf  # time.monotonic() when the last request ended

    @contextlib.contextmanager
    def asking(self) -> Iterator[None]:
        """Around one request's answer (on the event loop)."""
        self._open += 1
        try:
            yield
        finally:
            self._open -= 1
            self._ended = time.monotonic()

    def now(self) -> bool:
        """No request in flight, and none ended in the last quiet_s."""
        return self._open == 0 and time.monotonic() - self._ended >= self.quiet_s


@web.middleware
async def middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    with request.app[appkeys.QUIET].asking():
        return await handler(request)
