"""A real server on a real port in a background thread, for synchronous tests (hypothesis, load)."""

from __future__ import annotations

import asyncio
import json
import threading
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from aiohttp import web

from server import appkeys
from server.app import create_app
from server.serving import JsonErrorRunner
from server.settings import Settings


class LiveServer:
    def __init__(self, data_dir: Path, port: int) -> None:
        self.settings = Settings(data_dir=data_dir, port=port)
        self.base = f"http://127.0.0.1:{port}"
        self.loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self.app: web.Application | None = None
        self._runner: web.AppRunner | None = None

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_until_complete(self._start())
        self._ready.set()
        self.loop.run_forever()

    async def _start(self) -> None:
        self.app = create_app(self.settings)
        self._runner = JsonErrorRunner(self.app, access_log=None)
        await self._runner.setup()
        await web.TCPSite(self._runner, "127.0.0.1", self.settings.port).start()

    def start(self) -> LiveServer:
        self._thread.start()
        self._ready.wait(30)
        return self

    def stop(self) -> None:
        if self._runner is not None:
            asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self.loop).result(30)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(10)

    @property
    def token(self) -> str:
        assert self.app is not None
        return self.app[appkeys.TOKEN]

    def run(self, coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(60)

    def request(
        self, method: str, path: str, body: bytes | None = None, headers: dict[str, str] | None = None
    ) -> tuple[int, Any]:
        h = {"Authorization": f"Bearer {self.token}"}
        h.update(headers or {})
        req = urllib.request.Request(self.base + path, data=body, method=method, headers=h)
        try:
            with urllib.request.urlopen(req, timeout=30) as resp:  # noqa: S310 - loopback test server
                raw, status = resp.read(), resp.status
        except urllib.error.HTTPError as err:
            raw, status = err.read(), err.code
        try:
            return status, json.loads(raw) if raw else None
        except ValueError:
            return status, raw.decode("utf-8", "replace")
