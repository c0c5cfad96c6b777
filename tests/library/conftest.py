"""The local site the library route tests fetch from (its pages set per test)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from aiohttp import web

from tests.conftest import Api, local_site
from tests.library.routes_support import Site


@pytest.fixture
async def site(api: Api) -> AsyncIterator[Site]:
    # 127.0.0.1 is 'off' by the sensitive defaults; the person opens it for this test site
    status, _ = await api.put("/api/site-mode", {"host": "127.0.0.1", "mode": "collect"})
    assert status == 200
    s = Site()
    app = web.Application()
    app.router.add_route("GET", "/{tail:.*}", s.handle)
    async with local_site(app) as base:
        s.base = base
        yield s
