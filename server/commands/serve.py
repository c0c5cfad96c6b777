"""`wherefrom serve`: run the companion server on 127.0.0.1 (refuses a non-loopback bind)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import ipaddress
import logging
import sqlite3
import sys
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any

from server.settings import Settings, add_arguments

if TYPE_CHECKING:
    from aiohttp import web


def add_commands(sub: Any, common: Callable[[argparse.ArgumentParser], None]) -> None:
    serve = sub.add_parser("serve", help="run the companion server on 127.0.0.1")
    add_arguments(serve)
    serve.add_argument("--force-bind", action="store_true", help="allow a non-loopback --host (unsafe)")
    serve.set_defaults(func=cmd_serve)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


async def settled_heap(app: web.Application) -> AsyncIterator[None]:
    """Once the store's load is over (the embedder's index holds every vector), what the server
    made to run is set aside from the cyclic garbage collector (server.heap.settle). In `serve`
    only: its process lives as long as its app (a test process runs many apps)."""
    from server import appkeys, heap

    async def settle() -> None:
        embedder = app.get(appkeys.EMBEDDER)
        if embedder is not None:
            await embedder.loaded.wait()
        logging.getLogger("wherefrom").debug("%d objects set aside from the garbage collector", heap.settle())

    task = asyncio.create_task(settle(), name="settle-heap")
    yield
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task


def cmd_serve(args: argparse.Namespace) -> int:
    if not is_loopback(args.host) and not args.force_bind:
        print(f"refusing to bind {args.host}: not a loopback address (use --force-bind to insist)", file=sys.stderr)
        return 2
    logging.basicConfig(level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    settings = Settings.from_args(args)
    from server import serving
    from server.app import create_app
    from server.instance import AlreadyRunning, Claim
    from server.store.db import StoreError
    from server.threads import one_blas_thread, tokenize_on_the_calling_thread

    try:
        with Claim(settings.data_dir) as claim:  # one server per data dir
            app = create_app(settings)
            app.cleanup_ctx.append(settled_heap)
            one_blas_thread()  # its threads would wait for cores the server's own keep busy
            tokenize_on_the_calling_thread()  # a pool of its own would take its first user's priority
            claim.announce(args.host, args.port)
            print(f"wherefrom: serving http://{args.host}:{args.port}  data {settings.data_dir}", flush=True)
            print("  pair the extension: open its side panel (see `wherefrom install-browser-link`)", flush=True)
            serving.run(app, args.host, args.port)
    except AlreadyRunning as err:
        print(f"wherefrom: {err}", file=sys.stderr)
        return 1
    except (StoreError, sqlite3.DatabaseError) as err:
        print(f"wherefrom: cannot open the store: {err}", file=sys.stderr)
        return 1
    except OSError as err:
        print(f"wherefrom: cannot listen on {args.host}:{args.port}: {err}", file=sys.stderr)
        return 1
    return 0
