"""Shared fixtures: a real server on a real loopback port, with its own data dir."""

from __future__ import annotations

import contextlib
import dataclasses
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from server import appkeys
from server.app import create_app
from server.quiet import Quiet
from server.serving import JsonErrorRunner
from server.settings import Settings
from server.store.db import Store, fts5_available
from testkit import processes
from testkit.server_process import free_port  # noqa: F401 - the one free-port helper, re-exported for tests

REPO = Path(__file__).resolve().parent.parent
REFERENCE = REPO.parent / "shared" / "reference"


def pytest_sessionstart(session: pytest.Session) -> None:
    processes.session_start(session.config)  # "do you leak?": count our processes before and after


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    processes.session_finish(session)


def pytest_report_header(config: pytest.Config) -> list[str]:
    from testkit.farm.real_pages import describe_expected_failures

    return [
        f"sqlite {sqlite3.sqlite_version}, fts5: {'yes' if fts5_available() else 'NO'}",
        describe_expected_failures(),
    ]


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """The real-page gate's expected-failure list, whenever real pages were run (also with -q)."""
    if any(
        "test_real_dom" in r.nodeid
        for k in ("passed", "failed", "xfailed", "xpassed")
        for r in terminalreporter.stats.get(k, [])
    ):
        from testkit.farm.real_pages import describe_expected_failures

        terminalreporter.write_line(describe_expected_failures())


@dataclasses.dataclass
class Api:
    """A client of a running server. Every call returns (status, json body)."""

    base: str
    token: str
    session: aiohttp.ClientSession
    app: web.Application

    @property
    def store(self) -> Store:
        return self.app[appkeys.STORE]

    async def call(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        params: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
        auth: bool = True,
        data: bytes | str | None = None,
    ) -> tuple[int, Any]:
        h = {"Authorization": f"Bearer {self.token}"} if auth else {}
        h.update(headers or {})
        async with self.session.request(method, self.base + path, json=json, params=params, headers=h, data=data) as r:
            text = await r.text()
            try:
                import json as _json

                return r.status, _json.loads(text) if text else None
            except ValueError:
                return r.status, text

    async def get(self, path: str, **kw: Any) -> tuple[int, Any]:
        return await self.call("GET", path, **kw)

    async def post(self, path: str, body: Any = None, **kw: Any) -> tuple[int, Any]:
        return await self.call("POST", path, json=body, **kw)

    async def put(self, path: str, body: Any = None, **kw: Any) -> tuple[int, Any]:
        return await self.call("PUT", path, json=body, **kw)

    async def delete(self, path: str, **kw: Any) -> tuple[int, Any]:
        return await self.call("DELETE", path, **kw)


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    # a search waits for what was written just before it to be embedded: long enough on a loaded machine
    return Settings(data_dir=tmp_path / "data", port=free_port(), allow_private_fetch=False, settle_s=30.0)


@contextlib.asynccontextmanager
async def local_site(
    app: web.Application,
    host: str = "127.0.0.1",
    port: int | None = None,
    runner_class: type[web.AppRunner] = web.AppRunner,
) -> AsyncIterator[str]:
    """Run an aiohttp app on a real loopback port; yields its base URL."""
    runner = runner_class(app, access_log=None)
    await runner.setup()
    port = port or free_port()
    await web.TCPSite(runner, host, port).start()
    try:
        yield f"http://{host}:{port}"
    finally:
        await runner.cleanup()


@contextlib.asynccontextmanager
async def running_api(settings: Settings, quiet: Quiet | None = None) -> AsyncIterator[Api]:
    """Our server built from `settings`, on its port, with a client holding the token (`quiet`:
    its rule of when no one is asking, server.quiet, in place of the default)."""
    app = create_app(settings)
    if quiet is not None:
        app[appkeys.QUIET] = quiet
    async with (
        local_site(app, port=settings.port, runner_class=JsonErrorRunner) as base,
        aiohttp.ClientSession() as session,
    ):
        yield Api(base, app[appkeys.TOKEN], session, app)


@pytest.fixture
async def api(settings: Settings) -> AsyncIterator[Api]:
    async with running_api(settings) as client:
        yield client


@pytest.fixture
async def api_private(settings: Settings) -> AsyncIterator[Api]:
    """A server whose fetcher may reach loopback (tests only), so a local site can redirect."""
    async with running_api(dataclasses.replace(settings, allow_private_fetch=True)) as client:
        yield client
