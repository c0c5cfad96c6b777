"""The farm runs Chromium with its default network features: Local Network Access on.

Since Chrome 142 a request from a web context to a loopback or private address waits for a
permission the person grants. The extension's service worker reaches the companion server on
127.0.0.1 with no prompt (its host permission covers the server); the positive control: a web
page's own script asking the same server is refused, and the server never sees that request.
"""

from __future__ import annotations

import uuid

import pytest

pytestmark = [pytest.mark.farm, pytest.mark.slow]

PAGE_URL = "https://lna-probe.example/"
PAGE_HTML = "<!DOCTYPE html><html><body><p>A web page asking for the loopback server.</p></body></html>"

# a request to the server from some context; 'pending' when it has not settled in 5 s (a prompt)
ASK = """async (url) => {
  const timeout = new Promise((r) => setTimeout(() => r('pending'), 5000));
  const ask = fetch(url, {mode: MODE}).then((r) => 'status ' + r.status, (e) => 'refused: ' + e.message);
  return Promise.race([ask, timeout]);
}"""


async def test_the_worker_reaches_the_server_and_a_web_page_does_not(make_farm, health):
    farm = await make_farm()
    health.update(site="_farm", phase="local_network", variant="lna-on")
    worker_probe = f"{farm.server.url}/api/health?probe=worker-{uuid.uuid4().hex}"
    page_probe = f"{farm.server.url}/api/health?probe=page-{uuid.uuid4().hex}"

    # the service worker, as the extension's own code asks: answered, no prompt
    got = await farm.browser.sw.evaluate(ASK.replace("MODE", "'cors'"), worker_probe)
    assert got == "status 200", f"the service worker could not reach the server: {got}"
    # and through the extension's real path: the policy refresh the side panel triggers
    await farm.configure(page_memory=False)
    policy = await farm.refresh_policy()
    assert policy is not None

    # positive control: a web page's own script, same server, a request that needs no CORS
    page, _ = await farm.browser.web_tab(PAGE_URL, PAGE_HTML)
    got_page = await page.evaluate(ASK.replace("MODE", "'no-cors'"), page_probe)
    health["worker"] = got
    health["web_page"] = got_page
    assert got_page == "pending" or got_page.startswith("refused"), (
        f"a web page's script reached the loopback server ({got_page}): Local Network Access is off"
    )
    seen = [r.url for r in farm.tap.records()]
    assert any(worker_probe.split("?")[1] in u for u in seen), "the tap did not see the worker's request"
    assert not any(page_probe.split("?")[1] in u for u in seen), "the page's request reached the server"
