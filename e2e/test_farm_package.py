"""The packaged extension loads: `./scripts/package`'s load-unpacked zip, unzipped, starts in
Chromium with the pinned id (the harness refuses any other) and its panel connects."""

from __future__ import annotations

import subprocess
import sys
import tomllib
import zipfile

from testkit.farm.server import REPO


def package(out):
    return subprocess.run(  # noqa: S603 - our own script
        [sys.executable, str(REPO / "scripts" / "package"), "--out", str(out)], capture_output=True, text=True
    )


async def test_the_packaged_zip_loads_with_the_pinned_id_and_connects(make_farm, health, tmp_path):
    health.update(site="_farm", phase="other", variant="package")
    done = package(tmp_path)
    assert done.returncode == 0, done.stderr
    version = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))["project"]["version"]
    unpacked = tmp_path / "unpacked"
    with zipfile.ZipFile(tmp_path / f"wherefrom-extension-{version}.zip") as zf:
        zf.extractall(unpacked)
    farm = await make_farm(ext_dir=unpacked)  # FarmError unless the worker runs under the pinned id
    assert farm.sw.url.startswith("chrome-extension://gidncpejkfcnakpojbbbhocinihfkjmj/")
    await farm.configure(page_memory=True)
    panel = await farm.browser.open_panel(settled=True)
    await panel.wait_for_selector("#conn[data-state=connected]")
    assert await panel.evaluate("() => chrome.runtime.getManifest().version") == version
