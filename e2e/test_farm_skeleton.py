"""The farm's skeleton: Chromium + the unpacked extension + an isolated server,
and a request from the service worker that reaches that server — seen by the tap and answered by
the server with its own pid."""

from __future__ import annotations

from pathlib import Path

import pytest

from testkit.farm.browser import EXTENSION_ID, EXTENSION_ORIGIN

PAGE = "https://wf-control.example/page"


async def test_service_worker_reaches_the_isolated_server(farm, health):
    health.update(site="_farm", phase="other", variant="skeleton")
    srv = farm.server
    # the process answering is the one this test started, its database under this test's dir
    assert srv.health["build"]["pid"] == srv.proc.pid
    db = Path(srv.health["db"]["path"])
    assert farm.root in db.parents, db
    assert db.is_file()  # noqa: ASYNC240 - one stat
    # the extension loaded with the pinned id
    assert farm.sw.url.startswith(EXTENSION_ORIGIN + "/"), farm.sw.url
    assert farm.sw.url.split("/")[2] == EXTENSION_ID

    await farm.configure(page_memory=False)
    stored = await farm.browser.storage_get(["token", "serverUrl"])
    assert stored == {"token": srv.token, "serverUrl": srv.url}

    mark = farm.tap.mark()
    answer = await farm.sw.evaluate(
        """async () => {
            const {serverUrl, token} = await chrome.storage.local.get(['serverUrl', 'token']);
            const r = await fetch(serverUrl + '/api/health', {headers: {Authorization: 'Bearer ' + token}});
            return {status: r.status, body: await r.json()};
        }"""
    )
    assert answer["status"] == 200, answer
    assert answer["body"]["build"]["pid"] == srv.proc.pid, "answered by another process"
    rec = await farm.tap.wait_for(lambda r: r.path == "/api/health", since=mark)
    assert rec is not None, "the service worker's request did not pass through the tap"
    assert rec.forwarded and rec.status == 200
    farm.browser.attribute([rec])
    assert rec.context == "service_worker", rec.context  # Playwright's view agrees with the tap
    assert rec.header("sec-fetch-site") == "none" and rec.origin is None  # an extension with host access
    assert rec.header("authorization") == f"Bearer {srv.token}"
    health.update(requests=1)
    # the server's own ledger holds exactly what the tap forwarded (the harness's calls aside)
    led = await farm.check_ledger()
    assert led["ledger_requests"] >= 1
    health.update(ledger=led["ledger_requests"])


async def test_positive_controls_see_every_context(farm, health):
    """The tap sees the service worker, an extension page and a web page, and lets nothing out."""
    health.update(site="_farm", phase="other", variant="positive-controls")

    async def handler(route):
        await route.fulfill(status=200, content_type="text/html", body="<title>control</title><p>control page</p>")

    await farm.browser.context.route("https://wf-control.example/**", handler)
    page = await farm.open(PAGE)
    seen = await farm.browser.positive_controls(farm.server.url, page)
    assert set(seen) == {"service_worker", "extension_page", "web_page"}
    assert seen["web_page"].header("sec-fetch-site") == "cross-site"

    # nothing leaves the machine: https becomes a refused CONNECT, plain http (from the worker: no
    # mixed-content block there) a 502
    mark = farm.tap.mark()
    await page.evaluate("fetch('https://outside.example/x', {mode: 'no-cors'}).catch(() => null)")
    await farm.sw.evaluate("fetch('http://outside.example/y').catch(() => null)")
    tunnel = await farm.tap.wait_for(lambda r: r.is_connect and r.host == "outside.example", since=mark)
    plain = await farm.tap.wait_for(lambda r: r.url == "http://outside.example/y", since=mark)
    assert tunnel is not None and tunnel.status == 403
    assert plain is not None and plain.status == 502 and not plain.forwarded
    led = await farm.check_ledger()
    assert led["ledger_requests"] >= 3  # the three controls, at least
    health.update(ledger=led["ledger_requests"])


async def test_ledger_check_can_fail(farm, health):
    """The cross-check is not vacuous: a request that reaches the server around the tap (a direct
    call without the harness header) is reported as unseen by the tap."""
    health.update(site="_farm", phase="other", variant="ledger-can-fail")
    await farm.configure(page_memory=False)
    await farm.browser.positive_controls(farm.server.url, None)
    await farm.check_ledger()  # agrees so far
    import aiohttp

    async with (
        aiohttp.ClientSession() as s,
        s.get(farm.server.url + "/__wf_control/around-the-tap/1"),
    ):
        pass
    with pytest.raises(AssertionError, match="around-the-tap") as info:
        await farm.check_ledger(within=1.0)
    assert "seen by the server, not forwarded by the tap" in str(info.value)
    health.update(ledger=len(farm.server.browser_ledger()))


async def test_the_tap_never_forwards_to_a_strangers_port(farm, health):
    """A loopback port that is not the test's server (e.g. a real Wherefrom on 37711) is
    recorded, refused and reported — never reached."""
    import socket

    from testkit.farm.checks import violations

    health.update(site="_farm", phase="other", variant="stranger-port")
    stranger = socket.socket()
    stranger.bind(("127.0.0.1", 0))
    stranger.listen(1)
    stranger.settimeout(0.5)
    port = stranger.getsockname()[1]
    try:
        mark = farm.tap.mark()
        outcome = await farm.sw.evaluate(
            f"fetch('http://127.0.0.1:{port}/api/health').then(() => 'answered', () => 'refused')"
        )
        rec = await farm.tap.wait_for(lambda r: r.port == port, since=mark)
        assert rec is not None, "the tap did not see the request"
        # refused like a port where nothing listens: never forwarded
        assert not rec.forwarded and outcome == "refused", (outcome, rec.summary())
        with pytest.raises(OSError):
            stranger.accept()  # nothing reached the stranger
        found = violations(farm.tap.records(mark), own_hosts=(), needles=[], server_ports=[farm.server.port])
        assert any("not the test's server" in v.reason for v in found), [v.as_dict() for v in found]
    finally:
        stranger.close()
