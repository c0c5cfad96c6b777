"""The farm proves it can fail: deliberately leaky builds must turn Phase A red.

The test copies extension/ to a temp dir and injects one leak:
- content-script: a manifest content script on every https page that, on load, sends the page's
  URL to the companion server (as a page-probe) whatever page memory and the site mode say;
- worker-activation: the service worker sends the active tab's URL to the server on every tab
  activation, ignoring page memory and the policy.
Phase A's windows are run against the leaky build; each must report a violation (an assertion from
the checker — not an invalid run, which would be an error here too).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from testkit.farm.browser import EXTENSION_DIR
from testkit.farm.phase_a import OTHER_HTML, OTHER_URL, Variant, memory_off, route_html, site_off

pytestmark = [pytest.mark.farm, pytest.mark.slow]

LEAK_CONTENT = """// LEAK (farm test): report every page, whatever the settings say
chrome.storage.local.get('serverUrl').then(({serverUrl}) => {
  fetch((serverUrl || 'http://127.0.0.1:37711') + '/api/page-probe?url=' + encodeURIComponent(location.href))
    .catch(() => null);
});
"""

LEAK_WORKER = """
// LEAK (farm test): tell the server about every tab the person activates
chrome.tabs.onActivated.addListener(async ({tabId}) => {
  const tab = await chrome.tabs.get(tabId);
  const {serverUrl} = await chrome.storage.local.get('serverUrl');
  fetch((serverUrl || 'http://127.0.0.1:37711') + '/api/page-probe?url=' + encodeURIComponent(tab.url || ''))
    .catch(() => null);
});
"""


def leaky_copy(dest: Path, leak: str) -> Path:
    ext = dest / "extension"
    shutil.copytree(EXTENSION_DIR, ext)
    if leak == "content-script":
        (ext / "leak.js").write_text(LEAK_CONTENT, "utf-8")
        manifest = json.loads((ext / "manifest.json").read_text("utf-8"))
        manifest.setdefault("content_scripts", []).append(
            {"matches": ["https://*/*"], "js": ["leak.js"], "run_at": "document_idle"}
        )
        (ext / "manifest.json").write_text(json.dumps(manifest, indent=2), "utf-8")
    elif leak == "worker-activation":
        main = ext / "background" / "main.js"
        main.write_text(main.read_text("utf-8") + LEAK_WORKER, "utf-8")
    else:
        raise ValueError(leak)
    return ext


def first_fixture():
    from testkit.sites import catalog

    fxs = catalog()
    if not fxs:
        pytest.fail("no chat-site fixtures to run the leaky build against")
    return fxs[0]


@pytest.mark.parametrize("leak", ["content-script", "worker-activation"])
async def test_leaky_build_turns_phase_a_red(leak, make_farm, health, tmp_path):
    fixture = first_fixture()
    health.update(site="_leaky", phase="other", variant=leak, scenario_used=fixture.id)
    farm = await make_farm(ext_dir=leaky_copy(tmp_path, leak), tag=leak)
    await route_html(farm, OTHER_URL, OTHER_HTML)
    caught = {}
    for name, fn in (("memory_off", memory_off), ("site_off", site_off)):
        v = Variant("_leaky", name, fixture.scenario)
        v.record = False  # not a row of a real site
        with pytest.raises(AssertionError) as info:
            await fn(farm, fixture, v)
        caught[name] = v.row.get("violations", 0)
        assert v.row.get("violations", 0) >= 1, f"{name}: failed for another reason: {info.value}"
        assert fixture.url in str(info.value) or "url=" in str(info.value), str(info.value)[:500]
    health.update(violations=sum(caught.values()), detail=caught)
