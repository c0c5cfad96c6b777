"""Phase A windows (used by test_farm_phase_a and test_farm_leaky): where the extension is off,
nothing leaves the browser.

One browser and one server per site, three observation windows in turn (each its own row in the
health matrix; every window is checked even when an earlier one failed):
(a) memory_off — page memory off (disclosure not accepted): load, switch tabs back and forth, type
    in the composer, select text, let a reply stream, idle: zero requests at all, from any context,
    and no capture script injected;
(b) site_off — page memory on, the site `off` by a user rule (PUT /api/site-mode, then the worker
    reloads GET /api/policy): a fresh load and the same actions: zero requests carrying the tab's
    URL, host, title, typed or selected text or any turn text; no capture script injected;
(c) sensitive — page memory on, a host that is `off` by a sensitive default (a route-fulfilled bank,
    sign-in or tax page) open next to the site's chat tab, which is `collect` and captures as usual:
    zero requests carrying the sensitive tab's URL/host/title/text; nothing of ours injected there.
Positive controls (a request from the service worker, the side panel page and the web page, each
seen by the tap and answered by the server) run before every window, and a tail control after it.
"""

from __future__ import annotations

import secrets
import time
import traceback
from collections.abc import Awaitable, Callable
from typing import Any

from . import report
from .actions import exercise
from .browser import dump
from .checks import needles_for, relevant, violations
from .server import FarmError

OTHER_URL = "https://wf-other.example/reading"
OTHER_HTML = "<!doctype html><title>Another tab</title><main><p>Some other page the person reads.</p></main>"
# Hosts `off` by the server's sensitive defaults (checked against the server in the test).
SENSITIVE = [
    ("https://secure.chase.com/web/auth/dashboard#/summary", "secure.chase.com"),
    (
        "https://accounts.google.com/v3/signin/identifier?flowName=GlifWebSignIn",
        "accounts.google.com",
    ),
    ("https://www.irs.gov/account/balance", "www.irs.gov"),
]
QUIET_S = 0.3  # the tap has been quiet this long: the panel's traffic is over
SETTLE_TIMEOUT_S = 5.0
SECRET = "Available balance 48,213.07 checking account ending 4417"  # noqa: S105 - page text, not a credential


async def route_html(farm: Any, url: str, body: str) -> None:
    async def handler(route: Any) -> None:
        await route.fulfill(status=200, content_type="text/html; charset=utf-8", body=body)

    await farm.browser.context.route(url.split("#")[0].split("?")[0] + "*", handler)


async def watch(
    farm: Any,
    other: Any,
    open_main: Callable[[], Awaitable[Any]],
    *,
    streaming: bool,
    panel: Any | None = None,
) -> tuple[Any, list[Any], dict[str, Any]]:
    """Controls, then the window: the main page is *loaded inside it*, then the person's actions.

    Before the window: a request from the service worker, the side panel page and a web page (the
    other tab) must each reach the tap. After it, before any check: the service worker again and
    a request from the main page itself (on the tab's own host). Controls are excluded from checks.
    Returns (main page, the window's records, the actions' typed/selected text).
    """
    t0 = time.monotonic()
    await farm.browser.positive_controls(farm.server.url, other, panel=panel)
    if panel is not None:
        await panel.close()
    # the panel's own traffic (health, policy) ends before the window opens: nothing in flight
    # through the tap and nothing new for QUIET_S (a positive signal, not a fixed pause)
    if not await farm.tap.drain(farm.server.port, within=SETTLE_TIMEOUT_S, quiet=QUIET_S):
        raise FarmError(
            f"the browser's traffic did not settle within {SETTLE_TIMEOUT_S} s before the window: "
            f"{[r.url for r in farm.tap.in_flight(farm.server.port)][:5]}"
        )
    t1 = time.monotonic()
    mark = farm.tap.mark()
    page = await open_main()
    acts = await exercise(page, other, farm.sw, nonce=secrets.token_hex(4), streaming=streaming)
    acts["steps"] = {"controls": round(t1 - t0, 2), **acts["steps"]}
    end = farm.tap.mark()
    for name, where, opts in (
        ("tail-worker", farm.sw, "{}"),
        ("tail-page", page, "{mode: 'no-cors'}"),
    ):
        url = f"{farm.server.url}/__wf_control/{name}/{secrets.token_hex(4)}"
        await where.evaluate(f"u => fetch(u, {opts}).catch(() => null)", url)
        if await farm.tap.wait_for(lambda r, u=url: r.url == u, within=5, since=end) is None:
            raise FarmError(f"{name} control: the tap did not see it after the window; the window proves nothing")
    records = farm.browser.attribute([r for r in farm.tap.records(mark) if r.seq < end])
    return page, records, acts


class Variant:
    """One window's row in the matrix; failures are collected, not raised, so all three run."""

    def __init__(self, site: str, name: str, scenario: str) -> None:
        self.row: dict[str, Any] = {
            "site": site,
            "phase": "phase_a",
            "variant": name,
            "scenario_used": scenario,
            "worker": report.worker_id(),
        }
        self.t0 = time.monotonic()
        self.error: str | None = None
        self.invalid = False
        self.record = True  # write the row to the health matrix

    def finish(self, error: BaseException | None = None) -> None:
        self.row["time_s"] = round(time.monotonic() - self.t0, 1)
        if error is None:
            self.row["outcome"] = "passed"
        else:
            self.invalid = isinstance(error, FarmError) or not isinstance(error, AssertionError)
            self.row["outcome"] = "error" if self.invalid else "failed"
            self.error = "".join(traceback.format_exception_only(type(error), error)).strip()
            self.row["error"] = self.error[:2000]
        if self.record:
            report.append(self.row)


async def memory_off(farm: Any, fixture: Any, v: Variant) -> None:
    await farm.configure(page_memory=False, disclosure=False)
    other = await farm.open(OTHER_URL)
    page, records, acts = await watch(
        farm,
        other,
        lambda: farm.open(fixture.url, fixture),
        streaming="streaming" in fixture.features,
    )
    own = {fixture.host, "wf-other.example"}
    found = violations(records, own_hosts=own, needles=None, server_ports=[farm.server.port])
    injected = await farm.browser.capture_injected(page)
    v.row.update(requests=len(relevant(records, own)), violations=len(found), injected=injected)
    v.row["steps"] = acts["steps"]
    await page.close()
    await other.close()
    assert not found, (
        f"page memory is off, yet {len(found)} request(s): {[x.reason for x in found]}\n"
        f"{dump([x.record for x in found])}"
    )
    assert not injected, "page memory is off, yet the capture script was injected"


async def site_off(farm: Any, fixture: Any, v: Variant) -> None:
    await farm.configure(page_memory=True)
    await farm.server.set_site_mode(fixture.host, "off")
    panel = await farm.refresh_policy(keep_open=True)
    scripts = [s["id"] for s in await farm.browser.registered_scripts()]
    other = await farm.open(OTHER_URL)
    page, records, acts = await watch(
        farm,
        other,
        lambda: farm.open(fixture.url, fixture),
        streaming="streaming" in fixture.features,
        panel=panel,
    )
    needles = needles_for(
        fixture.url,
        fixture.host,
        await page.title(),
        fixture.expected.get("turns", []),
        [acts["typed"], acts["selected"]],
    )
    own = {fixture.host, "wf-other.example"}
    found = violations(records, own_hosts=own, needles=needles, server_ports=[farm.server.port])
    injected = await farm.browser.capture_injected(page)
    v.row.update(requests=len(relevant(records, own)), violations=len(found), injected=injected)
    v.row["steps"] = acts["steps"]
    await page.close()
    await other.close()
    assert not found, f"{fixture.host} is off, yet: {[x.reason for x in found]}\n{dump([x.record for x in found])}"
    assert not injected, f"{fixture.host} is off, yet the capture script was injected (registered: {scripts})"


async def sensitive(farm: Any, fixture: Any, v: Variant, index: int) -> None:
    sens_url, sens_host = SENSITIVE[index % len(SENSITIVE)]
    v.row["sensitive_host"] = sens_host
    mode = await farm.server.get("/api/site-mode", host=sens_host)
    if mode.get("mode") != "off" or not str(mode.get("reason", "")).startswith("sensitive"):
        raise FarmError(f"{sens_host} is not off by a sensitive default on this server: {mode}")
    await farm.server.set_site_mode(fixture.host, "collect")
    await farm.configure(page_memory=True)
    panel = await farm.refresh_policy(keep_open=True)
    title = f"Account summary {secrets.token_hex(3)}"
    body = (
        f"<!doctype html><title>{title}</title><main><h1>Welcome back</h1><p>{SECRET}</p>"
        "<label>Message to your adviser <textarea id=msg></textarea></label></main>"
    )
    await route_html(farm, sens_url, body)
    chat = await farm.open(fixture.url, fixture)
    page, records, acts = await watch(
        farm,
        chat,
        lambda: farm.open(sens_url),
        streaming="streaming" in fixture.features,
        panel=panel,
    )
    needles = needles_for(sens_url, sens_host, title, [], [SECRET, acts["typed"], acts["selected"]])
    own = {fixture.host, sens_host}
    found = violations(records, own_hosts=own, needles=needles, server_ports=[farm.server.port])
    injected = await farm.browser.capture_injected(page)
    v.row.update(requests=len(relevant(records, own)), violations=len(found), injected=injected)
    v.row["steps"] = acts["steps"]
    assert not found, (
        f"{sens_host} is off by default, yet: {[x.reason for x in found]}\n{dump([x.record for x in found])}"
    )
    assert not injected, f"a script of ours was injected into {sens_host}"
