"""Real saved pages: capture against a transcript written from the real site.

The folder (default ../shared/reference/real-dom/, or WF_REAL_PAGES=<dir>) holds `<name>.html` with
`<name>.expected.json` ({site, url, turns: [{role, text}]}). Each page is served at its real URL
(every other request of the page is refused inside the browser), the extension runs in `collect`,
and what the server stored is compared with the transcript. The result goes to the health matrix.

The real-page corpus is a gate: a page whose host the registry claims must be captured
exactly — turn count, roles, order and whitespace-collapsed text (a second reading only where the
transcript's notes allow it, e2e/real_pages_readings.json) — and a complete capture records no
selector miss. A page may fail only when e2e/real_pages_expected_failures.json lists it with a
reason and a date (printed at the start and the end of the run). Per page the health matrix gets
`expected`, `captured`, `matched`, `misses` (kinds) and `silent_partial` (an inexact capture that
recorded no miss: must never happen). The folder missing skips cleanly.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from testkit.farm import real_pages
from testkit.farm.blocks import score
from testkit.registry import site_for_url
from testkit.sites import collapse

pytestmark = [pytest.mark.farm, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DIR = REPO.parent / "shared" / "reference" / "real-dom"
LOOPBACK = ("127.0.0.1", "localhost", "[::1]")


def folder() -> Path:
    return Path(os.environ.get("WF_REAL_PAGES") or DEFAULT_DIR)


def pages() -> list[Any]:
    d = folder()
    if not d.is_dir():
        return [pytest.param(None, id="no-real-pages")]
    out = []
    want = (os.environ.get("SITE") or "").strip() or None
    for exp in sorted(d.glob("*.expected.json")):
        html = exp.with_name(exp.name[: -len(".expected.json")] + ".html")
        if not html.is_file():
            continue
        data = json.loads(exp.read_text("utf-8"))
        site = registry_site(data.get("url", "")) or data.get("site", "?")
        if want and site != want:
            continue
        out.append(pytest.param((html, data), id=html.stem))
    return out or [pytest.param(None, id="no-real-pages-selected")]


def registry_site(url: str) -> str | None:
    """The chat site of a saved page's URL: the extension's one matcher (testkit/registry.py site_for_url,
    the twin of extension/shared/sites.js), by match pattern."""
    try:
        return site_for_url(url)
    except (OSError, ValueError):
        return None


async def capture_real_page(
    make_farm: Any, html_path: Path, data: dict[str, Any], stored: list[dict[str, Any]] | None = None
) -> tuple[list[tuple[str, str]], list[dict[str, Any]], bool]:
    """Serve the saved page at its real URL with the extension on `collect`; return the turns the
    server stored, the selector misses recorded and whether the capture script was injected.
    `stored`, when given, receives the stored turns as the server answers them (with markdown)."""
    url = data["url"]
    host = urlsplit(url).hostname or ""
    expected = [(t["role"], collapse(t["text"])) for t in data.get("turns", [])]
    farm = await make_farm()
    await farm.configure(page_memory=True)
    await farm.server.set_site_mode(host, "collect")
    await farm.refresh_policy()
    site = registry_site(url)
    if site is not None:  # the capture script is registered asynchronously after a policy change
        await farm.browser.wait_registered(site, within=10)
    body = await asyncio.to_thread(html_path.read_bytes)

    async def serve(route: Any) -> None:
        req = urlsplit(route.request.url)
        if route.request.url.split("#")[0] == url.split("#")[0] and route.request.method in (
            "GET",
            "HEAD",
        ):
            await route.fulfill(status=200, headers={"content-type": "text/html; charset=utf-8"}, body=body)
        elif req.hostname == host:
            await route.fulfill(status=404, body="")
        else:
            await route.abort()

    await farm.browser.context.route(
        lambda u: urlsplit(u).scheme in ("http", "https") and urlsplit(u).hostname not in LOOPBACK,
        serve,
    )
    page = await farm.browser.new_page()
    await page.goto(url, wait_until="domcontentloaded", timeout=30000)

    got: list[tuple[str, str]] = []
    last_change = time.monotonic()
    deadline = time.monotonic() + 25
    while time.monotonic() < deadline:
        now = [(t["role"], collapse(t["text"])) for t in await farm.server.conversation(url)]
        if now != got:
            got, last_change = now, time.monotonic()
        if (
            got == expected
            or (got and time.monotonic() - last_change > 4)
            or (not got and time.monotonic() - last_change > 12)
        ):
            break
        await asyncio.sleep(0.5)
    await asyncio.sleep(0.5)  # a miss is recorded right after the settled capture
    misses = (await farm.browser.storage_get(["selectorMisses"])).get("selectorMisses") or []
    if stored is not None:
        stored.extend((await farm.server.get("/api/conversations", url=url)).get("turns", []))
    return got, misses, await farm.browser.capture_injected(page)


def judge(name: str, host: str, site: str, cmp: real_pages.Comparison, misses: list[dict[str, Any]]) -> None:
    """The gate for a page the registry claims: exact, and no miss on a complete capture."""
    kinds = [m.get("kind") or "no_turns" for m in misses]
    assert cmp.exact, (
        f"the registry claims {host} ({site}) but the real page {name} was captured wrong: "
        f"{cmp.matched}/{cmp.expected} turns match, {cmp.captured} captured; {cmp.first_diff}; misses {kinds}"
    )
    assert not kinds, f"a complete capture of {name} recorded selector misses: {misses}"


@pytest.mark.parametrize("page_case", pages())
async def test_real_page_capture(page_case, make_farm, health):
    if page_case is None:
        health.update(site="_real", phase="real_pages", variant="none")
        pytest.skip(f"no real saved pages at {folder()} (optional; set WF_REAL_PAGES to use another folder)")
    html_path, data = page_case
    host = urlsplit(data["url"]).hostname or ""
    site = registry_site(data["url"])
    health.update(
        site=site or data.get("site", "?"),
        phase="real_pages",
        variant=html_path.stem,
        supported=bool(site),
    )
    health["turns_expected"] = len(data.get("turns", []))
    stored: list[dict[str, Any]] = []
    got, misses, injected = await capture_real_page(make_farm, html_path, data, stored)
    # the structure kept (turns as Markdown): each turn's Markdown scored against the transcript's blocks
    scored = score(data.get("turns", []), stored)
    if scored["total"]:
        health["blocks"] = scored["blocks"]
        health["blocks_found"] = f"{scored['found']}/{scored['total']}"
    if scored["code_mismatches"]:
        health["code_mismatch"] = scored["code_mismatches"][0]
    cmp = real_pages.compare(html_path.stem, data.get("turns", []), got)
    kinds = [m.get("kind") or "no_turns" for m in misses]
    health.update(
        turns_captured=len(got),
        matched_turns=cmp.matched,
        match=cmp.exact,
        injected=injected,
        expected=cmp.expected,
        captured=cmp.captured,
        matched=cmp.matched,
        misses=kinds,
        silent_partial=bool(site) and not cmp.exact and not kinds,
    )
    if cmp.used_readings:
        health["readings_used"] = cmp.used_readings
    if not cmp.exact:
        health["first_diff"] = cmp.first_diff
    listed = real_pages.expected_failures().get(html_path.stem)
    if listed:
        health["expected_failure"] = f"{listed['reason']} ({listed['date']})"
    if not site:
        return
    if listed:
        pytest.xfail(f"listed in {real_pages.EXPECTED_FAILURES.name}: {listed['reason']} ({listed['date']})")
    assert not scored["code_mismatches"], (
        f"captured code differs from the page's (byte-exact): {scored['code_mismatches']}"
    )
    judge(html_path.stem, host, site, cmp, misses)


async def test_gate_fails_a_wrong_capture(make_farm, health):
    """Positive control for the gate in the farm: one real page captured by the extension passes
    against its transcript and fails against the same transcript with a turn's text changed, a
    turn dropped, an extra turn, or two roles swapped."""
    d = folder()
    exp = d / "defuddle-chatgpt-post-thought.expected.json"
    if not exp.is_file():
        health.update(site="_real", phase="real_pages", variant="gate-control")
        pytest.skip(f"{exp} not present")
    data = json.loads(exp.read_text("utf-8"))
    host = urlsplit(data["url"]).hostname or ""
    site = registry_site(data["url"]) or "?"
    health.update(site=site, phase="real_pages", variant="gate-control")
    got, misses, _ = await capture_real_page(
        make_farm, exp.with_name(exp.name.replace(".expected.json", ".html")), data
    )
    turns = data["turns"]
    judge(exp.stem, host, site, real_pages.compare("gate-control", turns, got), misses)  # passes
    wrong = {
        "text": [turns[0], {**turns[1], "text": turns[1]["text"] + " Thought for 12s"}],
        "dropped": turns[:1],
        "extra": [*turns, {"role": "assistant", "text": "More."}],
        "roles": [{**turns[0], "role": "assistant"}, {**turns[1], "role": "user"}],
    }
    failed = []
    for what, transcript in wrong.items():
        try:
            judge(exp.stem, host, site, real_pages.compare("gate-control", transcript, got), misses)
        except AssertionError:
            failed.append(what)
    health["gate_failed_on"] = failed
    assert failed == list(wrong), f"the gate let a wrong capture pass: {set(wrong) - set(failed)}"
