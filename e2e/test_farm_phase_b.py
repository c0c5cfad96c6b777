"""Phase B on every fixture scenario: the site `collect`, page memory on.

The probe and capture requests appear on the wire; the stored conversation (GET /api/conversations)
equals the fixture's ground truth (role + whitespace-collapsed text, streaming and virtualised
threads included); a memory inserted from the side panel lands in the site's editor model without
submitting; a note saved in the side panel turns the toolbar icon green and shows under
"From this page".
"""

from __future__ import annotations

import asyncio
import secrets
import time
from typing import Any
from urllib.parse import urlsplit

import pytest

from testkit.farm.browser import dump
from testkit.farm.content_state import content_state
from testkit.farm.farm import P_INSERT
from testkit.farm.report import REPORT_DIR
from testkit.farm.selection import per_fixture_params
from testkit.sites import collapse

pytestmark = [pytest.mark.farm, pytest.mark.slow]

CAPTURE_TIMEOUT_S = 30.0


def norm(turns: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [(t["role"], collapse(t["text"])) for t in turns]


async def wait_conversation(farm: Any, url: str, expected: list[tuple[str, str]]) -> list[tuple[str, str]]:
    deadline = time.monotonic() + CAPTURE_TIMEOUT_S
    got: list[tuple[str, str]] = []
    stable_since = None
    while time.monotonic() < deadline:
        got = norm(await farm.server.conversation(url))
        if got == expected:
            return got
        # stop early once captures have stopped arriving for a while (nothing more is coming)
        last = max((r.t for r in farm.tap.records() if r.path == "/api/captures"), default=None)
        if last is not None and time.monotonic() - last > 8 and got:
            stable_since = stable_since or time.monotonic()
            if time.monotonic() - stable_since > 2:
                return got
        await asyncio.sleep(0.4)
    return got


def first_diff(got: list[tuple[str, str]], want: list[tuple[str, str]]) -> str:
    for i, (g, w) in enumerate(zip(got, want, strict=False)):
        if g != w:
            return f"turn {i}: got {g[0]} {g[1][:200]!r}\n        want {w[0]} {w[1][:200]!r}"
    return f"got {len(got)} turns, want {len(want)}"


async def editor_state(page: Any) -> dict[str, Any]:
    return await page.evaluate(
        """() => {
            const find = (root) => {
              const el = root.querySelector('[data-wf-editor]');
              if (el) return el;
              for (const h of root.querySelectorAll('*')) {
                if (h.shadowRoot) { const e = find(h.shadowRoot); if (e) return e; }
              }
              return null;
            };
            const el = find(document);
            return {found: !!el, model: el ? (el.dataset.wfModel || '') : '',
                    submitted: (window.__wfSubmitted || []).length};
        }"""
    )


@pytest.mark.parametrize("fixture", per_fixture_params())
async def test_capture_insert_and_note(fixture, make_farm, health):
    if fixture is None:
        pytest.fail("no chat-site fixtures found under fixtures/sites/ (or none for SITE)")
    health.update(site=fixture.site, phase="phase_b", scenario=fixture.scenario)
    expected = norm(fixture.expected.get("turns", []))
    health["turns_expected"] = len(expected)
    farm = await make_farm()
    await farm.configure(page_memory=True)
    await farm.server.set_site_mode(fixture.host, "collect")
    await farm.refresh_policy()
    registered = await farm.browser.wait_registered(fixture.site, within=5)
    health["registered"] = registered
    mark = farm.tap.mark()
    page = await farm.open(fixture.url, fixture)
    tab_id = await farm.browser.tab_id(page.url)

    got = await wait_conversation(farm, fixture.url, expected)
    health["turns_captured"] = len(got)
    health["match"] = got == expected
    health["injected"] = await farm.browser.capture_injected(page)
    records = farm.browser.attribute(farm.tap.records(mark))
    captures = [r for r in records if r.method == "POST" and r.path == "/api/captures"]
    probes = [r for r in records if r.method == "GET" and r.path == "/api/page-probe"]
    health["capture_requests"] = len(captures)
    health["probe_requests"] = len(probes)
    misses = (await farm.browser.storage_get(["selectorMisses"])).get("selectorMisses") or []
    health["selector_misses"] = len(misses)
    health["misses"] = [m.get("kind") or "no_turns" for m in misses]

    # composer: insert a memory through the side panel's path, into the site's own editor model
    text = f"Remembered fact {secrets.token_hex(3)}"
    await page.bring_to_front()
    panel = await farm.browser.open_panel(tab_id)
    answer = await farm.browser.panel_message(panel, P_INSERT, {"tabId": tab_id, "text": text})
    await asyncio.sleep(0.3)
    ed = await editor_state(page)
    inserted = bool(ed["found"] and text in ed["model"] and ed["submitted"] == 0)
    health["composer_insert"] = inserted

    # note from the side panel's own UI -> icon green, note under "From this page"
    note = f"Note for the farm {secrets.token_hex(3)}"
    await panel.locator("#note").fill(note, timeout=5000)
    await panel.locator("#save-note").click(timeout=5000)
    note_status = ""
    try:  # what the panel said about the save (a diagnostic when no note reaches the wire)
        saved = "() => document.getElementById('note-status').textContent !== 'Saving…'"
        await panel.wait_for_function(saved, timeout=5000)
        note_status = await panel.locator("#note-status").text_content(timeout=1000) or ""
    except Exception:  # noqa: BLE001, S110 - reported below
        pass
    health["note_status"] = note_status
    in_panel = False
    for attempt in range(2):  # the panel re-renders after a save; reload once if it did not
        try:
            await panel.locator('[data-tier="exact"]', has_text=note).first.wait_for(timeout=5000)
            in_panel = True
            break
        except Exception:  # noqa: BLE001 - reported below
            if attempt == 0:
                await panel.reload()
    green_title = ""
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        green_title = await farm.browser.action_title(tab_id)
        if "from this page" in green_title:
            break
        await asyncio.sleep(0.2)
    note_green = "from this page" in green_title
    health["note_in_panel"] = in_panel
    health["note_green"] = note_green
    # the person's way in: the Insert button beside the note under "From this page"
    panel_insert = False
    if in_panel:
        item = panel.locator('[data-tier="exact"] li', has_text=note).first
        await item.locator("button.insert").click(timeout=5000)
        await asyncio.sleep(0.3)
        ed_after = await editor_state(page)
        panel_insert = note in ed_after["model"] and ed_after["submitted"] == 0
        if fixture.id == "chatgpt/layout-a":
            shots = REPORT_DIR / "screenshots"
            shots.mkdir(parents=True, exist_ok=True)
            await panel.screenshot(path=str(shots / "13-chat-memory-insert.png"), full_page=True)
    health["panel_insert"] = panel_insert
    notes_sent = [r for r in farm.tap.records(mark) if r.method == "POST" and r.path == "/api/notes"]
    # the tap against the server's own ledger (read once the tap is drained)
    ledger_error = None
    try:
        health["ledger"] = (await farm.check_ledger())["ledger_requests"]
    except AssertionError as exc:
        ledger_error = str(exc)
        health["ledger"] = "mismatch"

    # assertions, most basic first
    assert registered, f"capture script for {fixture.site} was not registered (page memory on, site collect)"
    assert probes, "no GET /api/page-probe on the wire for the page"
    page_key = (fixture.host, urlsplit(fixture.url).path.rstrip("/"))
    assert any(
        (
            urlsplit(p.query.get("url", "")).hostname,
            urlsplit(p.query.get("url", "")).path.rstrip("/"),
        )
        == page_key
        for p in probes
    ), f"no probe for this page among:\n{dump(probes)}"
    if not captures:
        full = await content_state(farm.browser, page)
        # what the capture script holds, without the page's text
        state = full and {k: (len(v) if k == "turns" else v) for k, v in full.items()}
        kept = await farm.browser.storage_get(["pageMemory", "disclosureAccepted", "policy", "outbox"])
        policy = kept.get("policy") or {}
        health["content_state"] = state
        pytest.fail(
            "no POST /api/captures on the wire"
            f" (selector misses: {misses}; capture script: {state};"
            f" page memory {kept.get('pageMemory')}/{kept.get('disclosureAccepted')},"
            f" policy v{policy.get('version')} rules {policy.get('rules')},"
            f" outbox {len(kept.get('outbox') or [])}; worker console: {farm.browser.console[-8:]})"
        )
    assert all((c.json() or {}).get("url") for c in captures), dump(captures)
    assert got == expected, f"stored conversation differs from ground truth: {first_diff(got, expected)}"
    has_composer = fixture.has_composer  # share pages have none
    if has_composer:
        assert ed["found"], "the fixture has no [data-wf-editor] element"
        assert inserted, (
            f"insert failed: answer {answer}, editor model {ed['model'][:200]!r}, submitted {ed['submitted']}"
        )
    assert notes_sent, f"no POST /api/notes on the wire after saving a note in the panel (it said {note_status!r})"
    assert in_panel, "the note does not show under 'From this page' in the side panel"
    assert note_green, f"the toolbar icon did not turn green (title: {green_title!r})"
    if has_composer:
        assert panel_insert, "the panel's Insert button did not put the note into the composer"
    assert ledger_error is None, ledger_error
