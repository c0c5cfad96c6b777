"""The app factory: settings in, a web.Application out."""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator

from aiohttp import web
from aiohttp.typedefs import Middleware

from server import appkeys, idempotency, ledger, quiet, security
from server.governance import visibility
from server.meaning.embedder import Embedder
from server.memory.forget import Confirmations
from server.private_files import create_private, secure_data_dir
from server.probe_cache import ProbeCache
from server.routes import route_apis
from server.settings import Settings
from server.store.db import Store
from server.store.fts_merge import FtsMerger
from server.token import load_or_create

log = logging.getLogger("wherefrom")


async def _store_ctx(app: web.Application) -> AsyncIterator[None]:
    """The store and the policy that governs what it shows, opened and closed together."""
    settings = app[appkeys.SETTINGS]
    create_private(settings.db_path)  # 0600 before SQLite opens it: its -wal and -shm inherit that
    store = await Store.open(settings.db_path)
    try:
        _secure(settings)  # the -wal and -shm SQLite just made (or an older version left)
        app[appkeys.STORE] = store
        app[appkeys.POLICY] = await visibility.govern(store)
        log.info("database %s (schema %s)", settings.db_path, await store.schema_version())
        embedder = app[appkeys.EMBEDDER] = Embedder(
            store, settings.settle_s, second_model=not settings.no_second_model, quiet=app[appkeys.QUIET]
        )
        await embedder.start()
        merger = app[appkeys.FTS_MERGER] = FtsMerger(store)
        await merger.start()
    except BaseException:
        await store.close()  # its connection threads would keep a failed start from exiting
        raise
    try:
        yield
    finally:
        await merger.stop()
        await embedder.stop()
        await store.close()


# The request line must hold the longest query a route accepts (search text, page URL + title),
# percent-encoded, so that an over-long one reaches the route's own limit and its JSON 413.
# A connection that holds no complete request for IDLE_SECONDS (idle, or half a request sent:
# aiohttp arms the timer when the connection opens and after every answer) is closed; a body
# that stops arriving is server.api's BODY_IDLE_SECONDS.
IDLE_SECONDS = 30.0
HANDLER_ARGS = {"max_line_size": 128 * 1024, "max_field_size": 16 * 1024, "keepalive_timeout": IDLE_SECONDS}


def _secure(settings: Settings) -> None:
    fixed = secure_data_dir(settings.data_dir, settings.db_path.name, settings.token_path.name)
    if fixed:
        log.warning("made private (other local users could read them): %s", ", ".join(fixed))


def create_app(settings: Settings) -> web.Application:
    _secure(settings)
    middlewares: list[Middleware] = [
        quiet.middleware,  # every request, even one refused below, says someone is asking
        security.error_middleware,
        security.guard_middleware,
        idempotency.idempotency_middleware,
    ]
    if settings.ledger is not None:
        middlewares.insert(0, ledger.middleware(settings.ledger))  # outermost: sees every request
    app = web.Application(middlewares=middlewares, client_max_size=8 * 1024 * 1024, handler_args=HANDLER_ARGS)
    app[appkeys.SETTINGS] = settings
    app[appkeys.TOKEN] = load_or_create(settings.token_path)
    app[appkeys.STARTED_AT] = time.time()
    app[appkeys.PROBE_CACHE] = ProbeCache()
    app[appkeys.QUIET] = quiet.Quiet()
    app[appkeys.FORGET_CONFIRMATIONS] = Confirmations()
    app[appkeys.IDEMPOTENCY_LOCKS] = idempotency.KeyLocks()
    app[appkeys.ROUTE_APIS] = apis = route_apis()
    app.cleanup_ctx.append(_store_ctx)
    for api in apis:
        app.add_routes(api.table())
    return app
