"""The browser link in the real browser: with the native messaging host installed for a fresh
Chromium profile (under a temporary HOME), a fresh extension pairs with no token pasted — the
host starts the server, detached — and the wire tap shows nothing leaving the machine. Another
extension id asking the same host is refused by Chrome (positive control: ours is answered).

Also the figures for the first five minutes: seconds and clicks from a fresh profile to
"Connected" with the link, and by hand (a running server, its token pasted in Settings).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from server.instance import read_runtime
from testkit.farm.browser import NOISE_HOSTS, unpacked_id
from testkit.farm.server import REPO
from testkit.farm.tap import LOOPBACK
from testkit.native_host import stop_started_server
from testkit.server_process import free_port

HOST_NAME = "org.wherefrom.companion"
# every change of the connection pill, as the person would have seen it
WATCH_PILL = """() => {
  window.__states = [document.getElementById('conn').dataset.state];
  new MutationObserver(() => window.__states.push(document.getElementById('conn').dataset.state))
    .observe(document.getElementById('conn'), {attributes: true, attributeFilter: ['data-state']});
}"""
ASK_HOST = """(name) => chrome.runtime.sendNativeMessage(name, {type: 'locate'})
  .then((r) => ({ok: true, reply: r}), (e) => ({ok: false, error: String(e && e.message || e)}))"""


def install_link(home: Path, profile: Path, data_dir: Path, port: int) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"))
    return subprocess.run(  # noqa: S603 - our own interpreter and module
        [
            sys.executable,
            "-m",
            "server",
            "install-browser-link",
            "--browser",
            "chromium",
            "--user-data-dir",
            str(profile),
            "--data-dir",
            str(data_dir),
            "--port",
            str(port),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO,
        env=env,
    )


def other_extension(root: Path) -> Path:
    ext = root / "other-extension"
    ext.mkdir(parents=True)
    manifest = {
        "manifest_version": 3,
        "name": "Not Wherefrom",
        "version": "1.0",
        "permissions": ["nativeMessaging"],
        "background": {"service_worker": "sw.js"},
    }
    (ext / "manifest.json").write_text(json.dumps(manifest), "utf-8")
    (ext / "sw.js").write_text("// asks the Wherefrom host from the test\n", "utf-8")
    return ext


def left_the_machine(records: list[Any]) -> list[Any]:
    return [r for r in records if r.is_connect or (r.host not in LOOPBACK and r.host not in NOISE_HOSTS)]


async def test_a_fresh_extension_pairs_through_the_link_with_no_paste(make_farm, health, tmp_path):
    health.update(site="_farm", phase="other", variant="browser-link")
    other = other_extension(tmp_path)
    farm = await make_farm(others=(other,))
    link_data, link_port = farm.root / "link-data", free_port()
    farm.tap.forward_ports = {farm.server.port, link_port}
    try:
        done = install_link(tmp_path / "home", farm.root / "profile", link_data, link_port)
        assert done.returncode == 0, done.stdout + done.stderr
        manifest = json.loads((farm.root / "profile" / "NativeMessagingHosts" / f"{HOST_NAME}.json").read_text())
        assert manifest["allowed_origins"] == [f"chrome-extension://{farm.sw.url.split('/')[2]}/"]
        assert not (tmp_path / "home" / ".config" / "chromium").exists()  # the profile's dir, not HOME's

        mark = farm.tap.mark()
        t0 = time.monotonic()
        panel = await farm.browser.open_panel()
        await panel.evaluate(WATCH_PILL)
        await panel.click("#accept")  # the only click: no terminal, no token
        await panel.wait_for_selector("#conn[data-state=connected]", timeout=60000)
        seconds = time.monotonic() - t0
        states = await panel.evaluate("() => window.__states")
        assert "starting" in states, f"the panel never said it was starting the server: {states}"
        assert states[-1] == "connected"
        assert await panel.input_value("#token") == "", "nothing was pasted"

        # paired with the server the link started: its data dir's token, its port
        token = (link_data / "token").read_text("ascii").strip()
        assert await farm.browser.storage("token") == token
        assert await farm.browser.storage("serverUrl") == f"http://127.0.0.1:{link_port}"
        pid = read_runtime(link_data)["pid"]
        assert os.getsid(pid) == pid, "the server is not detached from the host Chrome ran"
        await panel.click("nav [data-view=settings]")
        assert "browser link" in (await panel.text_content("#link-detail") or "")
        assert not await panel.is_visible("#token"), "pasting is the fallback, folded away once the link paired"

        # the wire: what went out went to loopback (the link's server), nothing left the machine
        seen = await farm.browser.positive_controls(f"http://127.0.0.1:{link_port}", None, panel=panel)
        assert set(seen) == {"service_worker", "extension_page"}
        records = farm.tap.records(since=mark)
        assert not left_the_machine(records), [r.summary() for r in left_the_machine(records)]
        to_link = [r for r in records if r.port == link_port and not r.is_control]
        assert to_link and all(r.status == 200 for r in to_link if r.path != "/api/health"), [
            r.summary() for r in to_link
        ]
        assert all(token not in r.url for r in records), "the token travelled in a URL"

        # another extension id is refused by Chrome (allowed_origins); ours is answered (control)
        other_sw = await farm.browser.worker_of(unpacked_id(other))
        refused = await other_sw.evaluate(ASK_HOST, HOST_NAME)
        assert refused["ok"] is False and "forbidden" in refused["error"].lower(), refused
        ours = await farm.sw.evaluate(ASK_HOST, HOST_NAME)
        assert ours["ok"] is True and ours["reply"]["token"] == token, ours
        health.update(link_s=round(seconds, 1), link_clicks=1, link_commands=0, requests=len(records))
        print(f"\nbrowser link: fresh profile to Connected in {seconds:.1f} s, 1 click, 0 terminal commands")
    finally:
        stop_started_server(link_data)


async def test_pairing_by_hand_still_works_and_is_timed(make_farm, health):
    """Without the link: the server already running (a terminal command), its token pasted."""
    health.update(site="_farm", phase="other", variant="paste-token")
    farm = await make_farm()
    await farm.browser.set_server(farm.server.url)  # as a person whose server runs on another port would
    t0 = time.monotonic()
    panel = await farm.browser.open_panel()
    await panel.click("#accept")
    await panel.click("nav [data-view=settings]")
    assert await panel.is_visible("#token"), "with no link, pairing by hand is open"
    assert "not installed" in (await panel.text_content("#link-detail") or "")
    await panel.fill("#token", farm.server.token)
    await panel.click("#pair")
    await panel.wait_for_selector("#conn[data-state=connected]")
    seconds = time.monotonic() - t0
    health.update(paste_s=round(seconds, 1), paste_clicks=3, paste_commands=2)
    print(f"\nby hand: panel to Connected in {seconds:.1f} s of automation, 3 clicks and a paste, 2 terminal commands")
