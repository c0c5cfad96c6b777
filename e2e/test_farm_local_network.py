"""The farm runs Chromium with its default network features: Local Network Access on.

Since Chrome 142 a request from a public web page to a loopback or private address needs a
permission the person grants (refused outright from a non-secure page). The farm no longer
switches that off (testkit/farm/browser.py). This test shows what it means for us, in a Chromium
that reaches its servers directly: through the farm's tap every request goes to a loopback proxy,
so the browser cannot tell public from local there.

- The extension's service worker reaches the companion server on 127.0.0.1 with no prompt.
- Positive control: a public web page's own script asking a loopback port is refused and the
  port never sees the request; the same script on a loopback page reaches it (so the refusal is
  Local Network Access, not a broken probe).

The one flag here, scoped to this test: `--ip-address-space-overrides` marks the port that serves
the "public" page as public — loopback is the only network on this machine, and a real chat site
is public. Nothing is switched off.
"""

from __future__ import annotations

import socket
import tempfile
import uuid
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from testkit.farm.browser import Browser
from testkit.farm.server import CompanionServer

pytestmark = [pytest.mark.farm, pytest.mark.slow]

PAGE_HTML = "<!DOCTYPE html><html><body><p>A web page asking a loopback port.</p></body></html>"

# a request from some context; 'pending' when it has not settled in 5 s (a prompt nobody answers)
ASK = """async ([url, mode]) => {
  const timeout = new Promise((r) => setTimeout(() => r('pending'), 5000));
  const ask = fetch(url, {mode}).then((r) => 'status ' + r.status, (e) => 'refused: ' + e.message);
  return Promise.race([ask, timeout]);
}"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Direct:
    """In place of the tap: no proxy; the public page's port declared public."""

    def __init__(self, public_port: int) -> None:
        self.proxy_args = [f"--ip-address-space-overrides=127.0.0.1:{public_port}=public"]


async def serve(port: int, hits: list[str] | None = None) -> web.AppRunner:
    async def page(request: web.Request) -> web.Response:
        if hits is not None:
            hits.append(request.path_qs)
            return web.Response(text="ok")
        return web.Response(text=PAGE_HTML, content_type="text/html")

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", page)
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    return runner


async def test_the_worker_reaches_the_server_and_a_public_page_does_not(playwright_driver: Any, health: Any) -> None:
    health.update(site="_farm", phase="local_network", variant="lna-on")
    root = Path(tempfile.mkdtemp(prefix="wf-lna-"))
    public_port, local_port, probe_port = free_port(), free_port(), free_port()
    hits: list[str] = []
    runners = [await serve(public_port), await serve(local_port), await serve(probe_port, hits)]
    server = CompanionServer(root / "server").start()
    browser = Browser(playwright_driver, root / "browser", Direct(public_port))  # type: ignore[arg-type]
    try:
        await server.ready()
        await browser.launch()
        # the service worker, as the extension's own code asks: answered, no prompt
        got = await browser.sw.evaluate(ASK, [f"{server.url}/api/health", "cors"])
        assert got == "status 200", f"the service worker could not reach the server: {got}"

        probe = f"http://127.0.0.1:{probe_port}/hit"
        public = await browser.new_page()
        await public.goto(f"http://127.0.0.1:{public_port}/chat")
        tag = uuid.uuid4().hex
        got_public = await public.evaluate(ASK, [f"{probe}?from=public-{tag}", "no-cors"])
        local = await browser.new_page()
        await local.goto(f"http://127.0.0.1:{local_port}/chat")
        got_local = await local.evaluate(ASK, [f"{probe}?from=local-{tag}", "no-cors"])
        health.update(worker=got, public_page=got_public, local_page=got_local, chromium=browser.version)

        assert got_public == "pending" or got_public.startswith("refused"), (
            f"a public page's script reached a loopback port ({got_public}): Local Network Access is off"
        )
        assert not [h for h in hits if "public-" in h], f"the loopback port saw the public page's request: {hits}"
        # control: the same request from a loopback page arrives
        assert got_local == "status 0" and [h for h in hits if f"local-{tag}" in h], (got_local, hits)
    finally:
        await browser.close()
        await server.stop()
        for r in runners:
            await r.cleanup()
